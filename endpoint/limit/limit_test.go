package limit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a manual clock for Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

// epoch is a minute and hour boundary, so that window arithmetic in the
// tests is easy to follow.
var epoch = time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)

func newClock() *clock { return &clock{t: epoch} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newLimiter(t *testing.T, cfg Config, c *clock) *Limiter {
	t.Helper()
	cfg.Now = c.Now
	l, err := New(cfg)
	require.NoError(t, err)
	return l
}

// limitErr returns err as an *Error, failing the test when it is not one.
func limitErr(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	require.True(t, errors.As(err, &e), "want *limit.Error, got %v", err)
	assert.ErrorIs(t, err, ErrLimited)
	return e
}

func TestDefaults(t *testing.T) {
	l, err := New(Config{})
	require.NoError(t, err)
	assert.Equal(t, DefaultProjectConcurrency, l.projectConc)
	assert.Equal(t, DefaultProjectPerMinute, l.perMinute)
	assert.Equal(t, DefaultProjectPerHour, l.perHour)
	assert.Equal(t, DefaultGlobalConcurrency, l.globalConc)
	assert.Equal(t, DefaultBusyRetryAfter, l.busyRetry)
	assert.Equal(t, DefaultMaxProjects, l.maxProjects)
	assert.Equal(t, 240, DefaultProjectPerMinute)
	assert.Equal(t, 2400, DefaultProjectPerHour)
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		cfg  Config
		name string
	}{
		{Config{ProjectConcurrency: -2}, "ProjectConcurrency"},
		{Config{ProjectPerMinute: -5}, "ProjectPerMinute"},
		{Config{ProjectPerHour: -2}, "ProjectPerHour"},
		{Config{GlobalConcurrency: -3}, "GlobalConcurrency"},
		{Config{MaxProjects: Unlimited}, "MaxProjects"},
		{Config{BusyRetryAfter: -time.Second}, "BusyRetryAfter"},
	}
	for _, c := range cases {
		_, err := New(c.cfg)
		require.ErrorIs(t, err, ErrConfig, c.name)
		assert.Contains(t, err.Error(), c.name)
	}
}

// TestPerMinute: exactly the limit passes within one aligned minute, the
// next is refused naming the limit, and a retry after RetryAfter passes
// while one a nanosecond earlier does not.
func TestPerMinute(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectPerMinute: 10, ProjectPerHour: Unlimited, ProjectConcurrency: Unlimited}, c)
	c.Add(30 * time.Second)
	for i := range 10 {
		release, err := l.Acquire("p")
		require.NoError(t, err, "run %d", i)
		release()
	}
	_, err := l.Acquire("p")
	e := limitErr(t, err)
	assert.Equal(t, ProjectPerMinute, e.Limit)
	assert.Equal(t, "p", e.Project)
	assert.Equal(t, 10, e.Max)
	assert.False(t, e.Global())
	assert.Contains(t, e.Error(), "project_runs_per_minute")
	// 10 runs in the window starting at 12:00. In the next window the
	// estimate is 10*(1-g) <= 9 once g >= 0.1: 12:01:06.
	assert.Equal(t, 36*time.Second, e.RetryAfter)

	c.Add(e.RetryAfter - time.Nanosecond)
	_, err = l.Acquire("p")
	assert.Equal(t, ProjectPerMinute, limitErr(t, err).Limit, "a nanosecond early")
	c.Add(time.Nanosecond)
	release, err := l.Acquire("p")
	require.NoError(t, err, "at RetryAfter")
	release()

	// Other projects have their own counters.
	_, err = l.Acquire("q")
	require.NoError(t, err)
}

// TestSlidingEstimate follows the estimate through a window: runs of the
// previous minute weigh less as the current one goes on.
func TestSlidingEstimate(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectPerMinute: 100, ProjectPerHour: Unlimited, ProjectConcurrency: Unlimited}, c)
	for range 100 {
		r, err := l.Acquire("p")
		require.NoError(t, err)
		r()
	}
	// At 12:01:30 the previous minute weighs half: a run passes while
	// 50 + n <= 99, so 50 more pass (the estimate then is 100).
	c.Add(90 * time.Second)
	n := 0
	for {
		r, err := l.Acquire("p")
		if err != nil {
			e := limitErr(t, err)
			// The next passes once 100*(1-g) + 50 <= 99, at g = 0.51:
			// 1% of a minute from now, 600 ms.
			assert.Equal(t, ProjectPerMinute, e.Limit)
			assert.Equal(t, 600*time.Millisecond, e.RetryAfter)
			break
		}
		r()
		n++
	}
	assert.Equal(t, 50, n)
}

func TestPerHour(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectPerMinute: Unlimited, ProjectPerHour: 5, ProjectConcurrency: Unlimited}, c)
	for range 5 {
		r, err := l.Acquire("p")
		require.NoError(t, err)
		r()
		c.Add(time.Minute)
	}
	_, err := l.Acquire("p")
	e := limitErr(t, err)
	assert.Equal(t, ProjectPerHour, e.Limit)
	assert.Contains(t, e.Error(), "project_runs_per_hour")
	// Window 12:00-13:00 holds 5; in the next, 5*(1-g) <= 4 at g = 0.2:
	// 13:12, and it is 12:05 now.
	assert.Equal(t, 67*time.Minute, e.RetryAfter)
}

// TestHourBeforeMinute: when both rates are used up the hour is named, as it
// is the one that decides when a retry can pass.
func TestHourBeforeMinute(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectPerMinute: 3, ProjectPerHour: 3}, c)
	for range 3 {
		r, err := l.Acquire("p")
		require.NoError(t, err)
		r()
	}
	_, err := l.Acquire("p")
	assert.Equal(t, ProjectPerHour, limitErr(t, err).Limit)
}

func TestProjectConcurrency(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectConcurrency: 2, BusyRetryAfter: 3 * time.Second}, c)
	r1, err := l.Acquire("p")
	require.NoError(t, err)
	r2, err := l.Acquire("p")
	require.NoError(t, err)
	_, err = l.Acquire("p")
	e := limitErr(t, err)
	assert.Equal(t, ProjectConcurrency, e.Limit)
	assert.Equal(t, 2, e.Max)
	assert.Equal(t, 3*time.Second, e.RetryAfter)
	assert.Contains(t, e.Error(), "project_concurrency")

	_, err = l.Acquire("q")
	require.NoError(t, err, "another project is not held back")

	r1()
	r1() // a second release does nothing
	r3, err := l.Acquire("p")
	require.NoError(t, err)
	_, err = l.Acquire("p")
	require.Error(t, err, "the double release freed one slot only")
	r2()
	r3()
}

// TestBusyRetryAfterFollowsTheRuns: a concurrency refusal says when a slot
// frees: how long the runs that hold them have been taking, not a fixed
// second (runs of 20 s were told to retry after 1 s).
func TestBusyRetryAfterFollowsTheRuns(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectConcurrency: 1, GlobalConcurrency: 2}, c)
	for range 6 {
		r, err := l.Acquire("slow")
		require.NoError(t, err)
		c.Add(20 * time.Second)
		r()
	}
	hold, err := l.Acquire("slow")
	require.NoError(t, err)
	_, err = l.Acquire("slow")
	e := limitErr(t, err)
	assert.Equal(t, ProjectConcurrency, e.Limit)
	assert.Equal(t, 20*time.Second, e.RetryAfter, "the project's runs hold a slot 20 s")

	quick, err := l.Acquire("quick")
	require.NoError(t, err)
	_, err = l.Acquire("other")
	e = limitErr(t, err)
	assert.Equal(t, GlobalConcurrency, e.Limit)
	assert.Equal(t, 20*time.Second, e.RetryAfter, "all runs hold a slot 20 s lately")
	quick()
	hold()

	// Quick runs bring it down, never below BusyRetryAfter.
	for range 20 {
		r, err := l.Acquire("slow")
		require.NoError(t, err)
		c.Add(10 * time.Millisecond)
		r()
	}
	hold, err = l.Acquire("slow")
	require.NoError(t, err)
	_, err = l.Acquire("slow")
	assert.Equal(t, DefaultBusyRetryAfter, limitErr(t, err).RetryAfter)
	hold()
}

func TestGlobalConcurrency(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{GlobalConcurrency: 3, ProjectConcurrency: Unlimited}, c)
	var releases []func()
	for _, p := range []string{"a", "b", "a"} {
		r, err := l.Acquire(p)
		require.NoError(t, err)
		releases = append(releases, r)
	}
	_, err := l.Acquire("c")
	e := limitErr(t, err)
	assert.Equal(t, GlobalConcurrency, e.Limit)
	assert.True(t, e.Global())
	assert.Empty(t, e.Project)
	assert.Equal(t, DefaultBusyRetryAfter, e.RetryAfter)
	assert.Contains(t, e.Error(), "global_concurrency")
	releases[1]()
	_, err = l.Acquire("c")
	require.NoError(t, err)
}

// TestRefusedRunsDoNotCount: a client retrying while refused does not
// move its own retry time.
func TestRefusedRunsDoNotCount(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectPerMinute: 2, ProjectPerHour: Unlimited}, c)
	for range 2 {
		r, err := l.Acquire("p")
		require.NoError(t, err)
		r()
	}
	_, err := l.Acquire("p")
	first := limitErr(t, err).RetryAfter
	for range 50 {
		_, err = l.Acquire("p")
		require.Error(t, err)
	}
	assert.Equal(t, first, limitErr(t, err).RetryAfter)
}

func TestUnlimited(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectConcurrency: Unlimited, ProjectPerMinute: Unlimited, ProjectPerHour: Unlimited, GlobalConcurrency: Unlimited}, c)
	for range 5000 {
		_, err := l.Acquire("p")
		require.NoError(t, err)
	}
}

// TestIdleProjectsAreEvicted: counters of a project with no run for two
// hours are dropped; one with a run in flight is kept however old.
func TestIdleProjectsAreEvicted(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectConcurrency: Unlimited}, c)
	for i := range 1000 {
		r, err := l.Acquire(fmt.Sprint("p", i))
		require.NoError(t, err)
		r()
	}
	held, err := l.Acquire("long")
	require.NoError(t, err)
	assert.Len(t, l.projects, 1001)

	c.Add(idleAfter - time.Second)
	_, err = l.Acquire("fresh")
	require.NoError(t, err)
	assert.Len(t, l.projects, 1002, "not idle yet")

	c.Add(time.Second)
	_, err = l.Acquire("fresh")
	require.NoError(t, err)
	assert.Len(t, l.projects, 2, "idle projects dropped; the one with a run in flight kept")
	assert.Contains(t, l.projects, "long")
	held()
	checkList(t, l)
}

// TestMaxProjects: memory stays bounded however many projects are seen
// within the idle time; the least recently active project goes first, and
// a project with a run in flight is never dropped.
func TestMaxProjects(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{MaxProjects: 10, ProjectConcurrency: Unlimited}, c)
	held, err := l.Acquire("held")
	require.NoError(t, err)
	for i := range 100 {
		c.Add(time.Second)
		r, err := l.Acquire(fmt.Sprint("p", i))
		require.NoError(t, err)
		r()
		assert.LessOrEqual(t, len(l.projects), 10)
	}
	assert.Contains(t, l.projects, "held")
	assert.Contains(t, l.projects, "p99")
	assert.NotContains(t, l.projects, "p0")
	checkList(t, l)
	held()
}

// checkList checks that the recency list and the map hold the same
// projects, ordered by last run.
func checkList(t *testing.T, l *Limiter) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	var prev *project
	for p := l.head; p != nil; p = p.next {
		require.Same(t, l.projects[p.name], p)
		require.Same(t, prev, p.prev)
		if prev != nil {
			require.False(t, p.last.After(prev.last), "ordered by last run")
		}
		prev = p
		n++
	}
	require.Same(t, prev, l.tail)
	require.Equal(t, len(l.projects), n)
}

// TestClockBackwards: a clock step back neither loses counts nor panics.
func TestClockBackwards(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectPerMinute: 2, ProjectPerHour: Unlimited}, c)
	c.Add(30 * time.Second)
	for range 2 {
		r, err := l.Acquire("p")
		require.NoError(t, err)
		r()
	}
	c.Add(-45 * time.Second)
	_, err := l.Acquire("p")
	e := limitErr(t, err)
	assert.Positive(t, e.RetryAfter)
}

// TestConcurrentAcquire hammers one limiter from many goroutines (run it
// with -race): the caps are never exceeded and every slot comes back.
func TestConcurrentAcquire(t *testing.T) {
	c := newClock()
	const projConc, globalConc = 3, 8
	l := newLimiter(t, Config{ProjectConcurrency: projConc, GlobalConcurrency: globalConc, ProjectPerMinute: Unlimited, ProjectPerHour: Unlimited}, c)
	var mu sync.Mutex
	perProject := map[string]int{}
	total, maxTotal := 0, 0
	var wg sync.WaitGroup
	var admitted, refused [4]int
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprint("p", g%4)
			for range 200 {
				release, err := l.Acquire(p)
				if err != nil {
					e := limitErr(t, err)
					mu.Lock()
					refused[g%4]++
					mu.Unlock()
					if e.Limit != ProjectConcurrency && e.Limit != GlobalConcurrency {
						t.Errorf("unexpected limit %s", e.Limit)
					}
					continue
				}
				mu.Lock()
				admitted[g%4]++
				perProject[p]++
				total++
				if perProject[p] > projConc {
					t.Errorf("project %s has %d runs in flight", p, perProject[p])
				}
				maxTotal = max(maxTotal, total)
				perProject[p]--
				total--
				mu.Unlock()
				release()
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, maxTotal, globalConc)
	l.mu.Lock()
	assert.Zero(t, l.inFlight, "every slot released")
	for _, p := range l.projects {
		assert.Zero(t, p.inFlight, p.name)
	}
	l.mu.Unlock()
	for i := range 4 {
		assert.Positive(t, admitted[i])
	}
}

// TestRetryAfterIsExact: over random window states, limits and times, a
// refused run's wait is exact: admitted at now+wait, refused a nanosecond
// before.
func TestRetryAfterIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []time.Duration{time.Minute, time.Hour} {
		for range 20000 {
			limit := 1 + r.IntN(3000)
			w := window{start: epoch, prev: r.IntN(limit + 1), curr: r.IntN(limit + 1)}
			now := epoch.Add(time.Duration(r.Int64N(int64(size))))
			wait, ok := w.admits(now, size, limit)
			if ok {
				continue
			}
			require.Positive(t, wait)
			at := func(d time.Duration) bool {
				v := w
				v.advance(now.Add(d), size)
				_, ok := v.admits(now.Add(d), size, limit)
				return ok
			}
			require.True(t, at(wait), "limit %d, window %+v, at %s: admitted after %s", limit, w, now.Sub(epoch), wait)
			require.False(t, at(wait-time.Nanosecond), "limit %d, window %+v, at %s: refused before %s", limit, w, now.Sub(epoch), wait)
		}
	}
}

func TestLimitString(t *testing.T) {
	assert.Equal(t, "limit(9)", Limit(9).String())
}

// BenchmarkAcquire is one admitted and released run, over 1,000 projects.
func BenchmarkAcquire(b *testing.B) {
	l, err := New(Config{ProjectPerMinute: Unlimited, ProjectPerHour: Unlimited})
	require.NoError(b, err)
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprint("project-", i)
	}
	i := 0
	for b.Loop() {
		r, err := l.Acquire(names[i%len(names)])
		if err != nil {
			b.Fatal(err)
		}
		r()
		i++
	}
}
