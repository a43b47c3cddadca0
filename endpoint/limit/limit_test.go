package limit

import (
	"fmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sync"
	"testing"
	"time"
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

// acquire takes a run's slot of project p from l, failing the test when l
// refuses it, and returns the slot's release.
func acquire(t *testing.T, l *Limiter, p string) func() {
	t.Helper()
	release, err := l.Acquire(p)
	require.NoError(t, err, "Acquire(%q)", p)
	return release
}

// limitErr returns err as an *Error, failing the test when it is not one.
func limitErr(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e, "want *limit.Error")
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
		require.ErrorIs(t, err, ErrConfig, "%v", c.name)
		s, sub := err.Error(), c.name
		assert.Contains(t, s, sub)
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
	assert.False(t, e.Global(), "e.Global() is true")
	assert.Contains(t, e.Error(), "project_runs_per_minute")
	// 10 runs in the window starting at 12:00. In the next window the
	// estimate is 10*(1-g) <= 9 once g >= 0.1: 12:01:06.
	got, want := e.RetryAfter, 36*time.Second
	assert.Equal(t, want, got, "e.RetryAfter")

	c.Add(e.RetryAfter - time.Nanosecond)
	_, err = l.Acquire("p")
	if got, want := limitErr(t, err).Limit, ProjectPerMinute; got != want {
		t.Errorf("a nanosecond early: limitErr(t, err).Limit = %v, want %v", got, want)
	}
	c.Add(time.Nanosecond)
	release, err := l.Acquire("p")
	require.NoError(t, err, "at RetryAfter")
	release()

	// Other projects have their own counters.
	acquire(t, l, "q")
}

// TestSlidingEstimate follows the estimate through a window: runs of the
// previous minute weigh less as the current one goes on.
func TestSlidingEstimate(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectPerMinute: 100, ProjectPerHour: Unlimited, ProjectConcurrency: Unlimited}, c)
	for range 100 {
		r := acquire(t, l, "p")
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
			got, want := e.RetryAfter, 600*time.Millisecond
			assert.Equal(t, want, got, "e.RetryAfter")
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
		r := acquire(t, l, "p")
		r()
		c.Add(time.Minute)
	}
	_, err := l.Acquire("p")
	e := limitErr(t, err)
	assert.Equal(t, ProjectPerHour, e.Limit)
	assert.Contains(t, e.Error(), "project_runs_per_hour")
	// Window 12:00-13:00 holds 5; in the next, 5*(1-g) <= 4 at g = 0.2:
	// 13:12, and it is 12:05 now.
	got, want := e.RetryAfter, 67*time.Minute
	assert.Equal(t, want, got, "e.RetryAfter")
}

// TestMinuteThenHour: the rates are counted the minute's first (a counter
// store checks one window at a time, and a refusal by the minute must count
// towards neither): when both are used up the minute is named, and once it
// has room, the hour.
func TestMinuteThenHour(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectPerMinute: 3, ProjectPerHour: 3}, c)
	for range 3 {
		r := acquire(t, l, "p")
		r()
	}
	_, err := l.Acquire("p")
	assert.Equal(t, ProjectPerMinute, limitErr(t, err).Limit)
	c.Add(2 * time.Minute)
	_, err = l.Acquire("p")
	got, want := limitErr(t, err).Limit, ProjectPerHour
	assert.Equal(t, want, got, "two minutes later: limitErr(t, err).Limit")
}

func TestProjectConcurrency(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectConcurrency: 2, BusyRetryAfter: 3 * time.Second}, c)
	r1 := acquire(t, l, "p")
	r2 := acquire(t, l, "p")
	_, err := l.Acquire("p")
	e := limitErr(t, err)
	assert.Equal(t, ProjectConcurrency, e.Limit)
	assert.Equal(t, 2, e.Max)
	got, want := e.RetryAfter, 3*time.Second
	assert.Equal(t, want, got, "e.RetryAfter")
	assert.Contains(t, e.Error(), "project_concurrency")

	_, err = l.Acquire("q")
	require.NoError(t, err, "another project is not held back")

	r1()
	r1() // a second release does nothing
	r3 := acquire(t, l, "p")
	_, err = l.Acquire("p")
	require.Error(t, err, "the double release freed one slot only: got no error, want one")
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
		r := acquire(t, l, "slow")
		c.Add(20 * time.Second)
		r()
	}
	hold := acquire(t, l, "slow")
	_, err := l.Acquire("slow")
	e := limitErr(t, err)
	assert.Equal(t, ProjectConcurrency, e.Limit)
	got, want := e.RetryAfter, 20*time.Second
	assert.Equal(t, want, got, "the project's runs hold a slot 20 s: e.RetryAfter")

	quick := acquire(t, l, "quick")
	_, err = l.Acquire("other")
	e = limitErr(t, err)
	assert.Equal(t, GlobalConcurrency, e.Limit)
	if got, want := e.RetryAfter, 20*time.Second; got != want {
		t.Errorf("all runs hold a slot 20 s lately: e.RetryAfter = %v, want %v", got, want)
	}
	quick()
	hold()

	// Quick runs bring it down, never below BusyRetryAfter.
	for range 20 {
		r := acquire(t, l, "slow")
		c.Add(10 * time.Millisecond)
		r()
	}
	hold = acquire(t, l, "slow")
	_, err = l.Acquire("slow")
	assert.Equal(t, DefaultBusyRetryAfter, limitErr(t, err).RetryAfter)
	hold()
}

func TestGlobalConcurrency(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{GlobalConcurrency: 3, ProjectConcurrency: Unlimited}, c)
	var releases []func()
	for _, p := range []string{"a", "b", "a"} {
		r := acquire(t, l, p)
		releases = append(releases, r)
	}
	_, err := l.Acquire("c")
	e := limitErr(t, err)
	assert.Equal(t, GlobalConcurrency, e.Limit)
	assert.True(t, e.Global(), "e.Global() is false")
	v := e.Project
	assert.True(t, (v == ""), "e.Project = %v, want it empty", v)
	assert.Equal(t, DefaultBusyRetryAfter, e.RetryAfter)
	assert.Contains(t, e.Error(), "global_concurrency")
	releases[1]()
	acquire(t, l, "c")
}

// TestRefusedRunsDoNotCount: a client retrying while refused does not
// move its own retry time.
func TestRefusedRunsDoNotCount(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectPerMinute: 2, ProjectPerHour: Unlimited}, c)
	for range 2 {
		r := acquire(t, l, "p")
		r()
	}
	_, err := l.Acquire("p")
	first := limitErr(t, err).RetryAfter
	for range 50 {
		_, err = l.Acquire("p")
		require.Error(t, err)
	}
	got, want := limitErr(t, err).RetryAfter, first
	assert.Equal(t, want, got, "limitErr(t, err).RetryAfter")
}

func TestUnlimited(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectConcurrency: Unlimited, ProjectPerMinute: Unlimited, ProjectPerHour: Unlimited, GlobalConcurrency: Unlimited}, c)
	for range 5000 {
		acquire(t, l, "p")
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
	held := acquire(t, l, "long")
	assert.Len(t, l.projects, 1001)

	c.Add(idleAfter - time.Second)
	acquire(t, l, "fresh")
	got := len(l.projects)
	assert.Equal(t, 1002, got, "not idle yet: len(l.projects) = %d, want %d: %v", got, 1002, l.projects)

	c.Add(time.Second)
	acquire(t, l, "fresh")
	if got := len(l.projects); got != 2 {
		t.Errorf("idle projects dropped; the one with a run in flight kept: len(l.projects) = %d, want %d: %v", got, 2, l.projects)
	}
	_, ok := l.projects["long"]
	assert.True(t, ok, "no key %v in %v", "long", l.projects)
	held()
	checkList(t, l)
}

// TestMaxProjects: memory stays bounded however many projects are seen
// within the idle time; the least recently active project goes first, and
// a project with a run in flight is never dropped.
func TestMaxProjects(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{MaxProjects: 10, ProjectConcurrency: Unlimited}, c)
	held := acquire(t, l, "held")
	for i := range 100 {
		c.Add(time.Second)
		r, err := l.Acquire(fmt.Sprint("p", i))
		require.NoError(t, err)
		r()
		a, b := len(l.projects), 10
		assert.True(t, (a <= b), "len(l.projects) = %v, want <= %v", a, b)
	}
	_, ok := l.projects["held"]
	assert.True(t, ok, "no key %v in %v", "held", l.projects)
	if _, ok := l.projects["p99"]; !ok {
		t.Errorf("no key %v in %v", "p99", l.projects)
	}
	if _, ok := l.projects["p0"]; ok {
		t.Errorf("key %v in %v", "p0", l.projects)
	}
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
		if l.projects[p.name] != p {
			t.Fatalf("l.projects[%q] = %p, want the listed %p", p.name, l.projects[p.name], p)
		}
		if p.prev != prev {
			t.Fatalf("%q: p.prev = %p, want the one before it, %p", p.name, p.prev, prev)
		}
		if prev != nil {
			require.False(t, p.last.After(prev.last), "ordered by last run: p.last.After(prev.last) is true")
		}
		prev = p
		n++
	}
	if l.tail != prev {
		t.Fatalf("l.tail = %p, want the last listed %p", l.tail, prev)
	}
	got, want := n, len(l.projects)
	require.Equal(t, want, got, "n")
}

// TestClockBackwards: a clock step back neither loses counts nor panics.
func TestClockBackwards(t *testing.T) {
	c := newClock()
	l := newLimiter(t, Config{ProjectPerMinute: 2, ProjectPerHour: Unlimited}, c)
	c.Add(30 * time.Second)
	for range 2 {
		r := acquire(t, l, "p")
		r()
	}
	c.Add(-45 * time.Second)
	_, err := l.Acquire("p")
	e := limitErr(t, err)
	assert.Greater(t, e.RetryAfter, time.Duration(0))
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
		wg.Go(func() {
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
				assert.LessOrEqual(t, perProject[p], projConc, "project %s has", p)
				maxTotal = max(maxTotal, total)
				perProject[p]--
				total--
				mu.Unlock()
				release()
			}
		})
	}
	wg.Wait()
	a, b := maxTotal, globalConc
	assert.True(t, (a <= b), "maxTotal = %v, want <= %v", a, b)
	l.mu.Lock()
	v := l.inFlight
	assert.Equal(t, 0, v, "every slot released: l.inFlight")
	for _, p := range l.projects {
		v := p.inFlight
		assert.Equal(t, 0, v, "%v: p.inFlight", p.name)
	}
	l.mu.Unlock()
	for i := range 4 {
		assert.Greater(t, admitted[i], 0)
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
		require.NoError(b, err)
		r()
		i++
	}
}
