// Package limit bounds how many endpoint runs a service takes on, so that no
// project, and no burst of traffic, can take the service down: per project,
// the runs in flight and the runs started per minute and per hour; over all
// projects, the runs in flight.
//
// A Limiter answers Acquire with a release function, or with an *Error that
// names the limit reached and says when to retry. It does no I/O and keeps
// nothing but counters: it is pure, safe for concurrent use, and its clock
// can be injected (Config.Now) so that tests need no sleeps.
//
// Rates are counted in a sliding window approximated by two fixed windows,
// as Cloudflare and many API gateways do: the estimate at a time t is the
// count of the current fixed window plus the previous window's count
// weighted by the share of the previous window that the sliding window still
// covers. It needs two counters per window instead of one timestamp per run,
// smooths the burst a plain fixed window allows at its edge, and never lets
// more than the limit through within one aligned window.
package limit

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"time"
)

// Defaults of a zero Config.
const (
	// DefaultProjectConcurrency is the runs of one project in flight at
	// once: 3, so that one project holds no more than a few of the
	// database's connections.
	DefaultProjectConcurrency = 3
	// DefaultProjectPerMinute is the runs one project may start per
	// sliding minute: 240, PostHog's query API rate.
	DefaultProjectPerMinute = 240
	// DefaultProjectPerHour is the runs one project may start per sliding
	// hour: 2,400, PostHog's query API rate.
	DefaultProjectPerHour = 2400
	// DefaultGlobalConcurrency is the runs of all projects in flight at
	// once: enough for a modest host, few enough that a database pool is
	// not swamped.
	DefaultGlobalConcurrency = 64
	// DefaultBusyRetryAfter is the least Retry-After of a concurrency
	// limit; past it, the limiter says how long the runs that hold the
	// slots have been taking (see Error.RetryAfter).
	DefaultBusyRetryAfter = time.Second
	// DefaultMaxProjects bounds the projects whose counters are kept (about
	// 200 bytes each).
	DefaultMaxProjects = 100_000
)

// Unlimited, as the value of a limit in Config, turns that limit off.
const Unlimited = -1

// idleAfter is how long after its last run a project's counters are
// dropped: by then both of its hourly windows are empty, so dropping them
// changes no answer.
const idleAfter = 2 * time.Hour

// Config sets the limits of a Limiter. A zero field takes its default;
// Unlimited turns the limit off.
type Config struct {
	// ProjectConcurrency is how many runs of one project may be in flight
	// at once.
	ProjectConcurrency int
	// ProjectPerMinute and ProjectPerHour are how many runs one project may
	// start per sliding minute and per sliding hour.
	ProjectPerMinute int
	ProjectPerHour   int
	// GlobalConcurrency is how many runs of all projects together may be in
	// flight at once.
	GlobalConcurrency int
	// BusyRetryAfter is the least RetryAfter of the concurrency limits'
	// errors; their RetryAfter is the time the runs of the project (or of
	// all projects, for the global limit) held a slot lately, when longer.
	BusyRetryAfter time.Duration
	// MaxProjects bounds the projects whose counters are kept. Idle
	// projects are dropped anyway; past MaxProjects, the project that
	// started a run least recently (and has none in flight) is dropped and
	// its rate history forgotten. It cannot be Unlimited.
	MaxProjects int
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Limit names one of the limits of a Config.
type Limit int

// The limits, in the order Acquire checks them.
const (
	// ProjectPerHour is Config.ProjectPerHour.
	ProjectPerHour Limit = iota + 1
	// ProjectPerMinute is Config.ProjectPerMinute.
	ProjectPerMinute
	// ProjectConcurrency is Config.ProjectConcurrency.
	ProjectConcurrency
	// GlobalConcurrency is Config.GlobalConcurrency.
	GlobalConcurrency
)

// String returns the limit's setting name, as error messages and a host's
// configuration use it: project_runs_per_hour, project_runs_per_minute,
// project_concurrency, global_concurrency.
func (l Limit) String() string {
	switch l {
	case ProjectPerHour:
		return "project_runs_per_hour"
	case ProjectPerMinute:
		return "project_runs_per_minute"
	case ProjectConcurrency:
		return "project_concurrency"
	case GlobalConcurrency:
		return "global_concurrency"
	}
	return fmt.Sprintf("limit(%d)", int(l))
}

// ErrLimited is matched (errors.Is) by every *Error.
var ErrLimited = errors.New("limit: a run limit was reached")

// ErrConfig is wrapped by New's errors.
var ErrConfig = errors.New("limit: invalid configuration")

// Error is a refused run: which limit was reached, for which project (empty
// for GlobalConcurrency), the limit's value, and how long to wait before
// retrying.
type Error struct {
	Limit      Limit
	Project    string
	Max        int
	RetryAfter time.Duration
}

// Error says which limit was reached and when to retry.
func (e *Error) Error() string {
	switch e.Limit {
	case ProjectPerHour:
		return fmt.Sprintf("limit: project %q started %d runs in the last hour (%s); retry after %s", e.Project, e.Max, e.Limit, e.RetryAfter)
	case ProjectPerMinute:
		return fmt.Sprintf("limit: project %q started %d runs in the last minute (%s); retry after %s", e.Project, e.Max, e.Limit, e.RetryAfter)
	case ProjectConcurrency:
		return fmt.Sprintf("limit: project %q has %d runs in flight (%s); retry after %s", e.Project, e.Max, e.Limit, e.RetryAfter)
	}
	return fmt.Sprintf("limit: %d runs in flight over all projects (%s); retry after %s", e.Max, e.Limit, e.RetryAfter)
}

// Is makes every *Error match ErrLimited.
func (e *Error) Is(target error) bool { return target == ErrLimited }

// Global reports whether the limit is the server's (GlobalConcurrency)
// rather than the project's: an HTTP API answers the first 503 and the
// others 429.
func (e *Error) Global() bool { return e.Limit == GlobalConcurrency }

// Limiter admits or refuses runs. Its zero value is not usable; call New.
type Limiter struct {
	projectConc, perMinute, perHour, globalConc int
	busyRetry                                   time.Duration
	maxProjects                                 int
	now                                         func() time.Time

	mu       sync.Mutex
	inFlight int
	// held is the moving average of how long runs of all projects held a
	// slot (a project's own is project.held).
	held     time.Duration
	projects map[string]*project
	// head and tail are the ends of the list of projects by their last
	// admitted run, most recent at head, which eviction takes from the tail.
	head, tail *project
}

// project holds one project's counters.
type project struct {
	name         string
	inFlight     int
	held         time.Duration // moving average of its runs' slot time
	minute, hour window
	last         time.Time
	prev, next   *project
}

// New returns a Limiter with cfg's limits, or an error wrapping ErrConfig
// that names a field holding a value other than a positive number, 0 or
// Unlimited.
func New(cfg Config) (*Limiter, error) {
	l := &Limiter{projects: map[string]*project{}, now: cfg.Now}
	if l.now == nil {
		l.now = time.Now
	}
	fields := []struct {
		name string
		v    int
		def  int
		dst  *int
	}{
		{"ProjectConcurrency", cfg.ProjectConcurrency, DefaultProjectConcurrency, &l.projectConc},
		{"ProjectPerMinute", cfg.ProjectPerMinute, DefaultProjectPerMinute, &l.perMinute},
		{"ProjectPerHour", cfg.ProjectPerHour, DefaultProjectPerHour, &l.perHour},
		{"GlobalConcurrency", cfg.GlobalConcurrency, DefaultGlobalConcurrency, &l.globalConc},
		{"MaxProjects", cfg.MaxProjects, DefaultMaxProjects, &l.maxProjects},
	}
	for _, f := range fields {
		switch {
		case f.v == 0:
			*f.dst = f.def
		case f.v > 0 || (f.v == Unlimited && f.name != "MaxProjects"):
			*f.dst = f.v
		default:
			return nil, fmt.Errorf("%w: %s is %d; use a positive number, 0 for the default or Unlimited (-1)", ErrConfig, f.name, f.v)
		}
	}
	switch {
	case cfg.BusyRetryAfter == 0:
		l.busyRetry = DefaultBusyRetryAfter
	case cfg.BusyRetryAfter > 0:
		l.busyRetry = cfg.BusyRetryAfter
	default:
		return nil, fmt.Errorf("%w: BusyRetryAfter is %s; it must not be negative", ErrConfig, cfg.BusyRetryAfter)
	}
	return l, nil
}

// Acquire admits a run of project, or refuses it with an *Error. An
// admitted run holds its concurrency slots until release is called (once;
// later calls do nothing); it counts towards the rates from now on. A
// refused run counts towards nothing, so that a client retrying too early
// does not push its own retry time further.
//
// The project's own limits are checked before the global one: a project
// over its limits is told so (its doing), not that the server is busy.
func (l *Limiter) Acquire(project string) (release func(), err error) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evictIdle(now)
	p := l.project(project, now)
	p.minute.advance(now, time.Minute)
	p.hour.advance(now, time.Hour)

	if l.perHour != Unlimited {
		if wait, ok := p.hour.admits(now, time.Hour, l.perHour); !ok {
			return nil, &Error{Limit: ProjectPerHour, Project: project, Max: l.perHour, RetryAfter: wait}
		}
	}
	if l.perMinute != Unlimited {
		if wait, ok := p.minute.admits(now, time.Minute, l.perMinute); !ok {
			return nil, &Error{Limit: ProjectPerMinute, Project: project, Max: l.perMinute, RetryAfter: wait}
		}
	}
	if l.projectConc != Unlimited && p.inFlight >= l.projectConc {
		return nil, &Error{Limit: ProjectConcurrency, Project: project, Max: l.projectConc, RetryAfter: max(l.busyRetry, p.held)}
	}
	if l.globalConc != Unlimited && l.inFlight >= l.globalConc {
		return nil, &Error{Limit: GlobalConcurrency, Max: l.globalConc, RetryAfter: max(l.busyRetry, l.held)}
	}

	p.minute.curr++
	p.hour.curr++
	p.inFlight++
	l.inFlight++
	p.last = now
	l.moveToHead(p)
	var once sync.Once
	return func() { once.Do(func() { l.release(p, now) }) }, nil
}

func (l *Limiter) release(p *project, acquired time.Time) {
	held := max(l.now().Sub(acquired), 0)
	l.mu.Lock()
	defer l.mu.Unlock()
	p.inFlight--
	l.inFlight--
	p.held = average(p.held, held)
	l.held = average(l.held, held)
}

// average moves a moving average of slot times by one more: the newest
// weighs a quarter, so a change of the runs' cost shows within a few runs.
func average(avg, d time.Duration) time.Duration {
	if avg == 0 {
		return d
	}
	return avg + (d-avg)/4
}

// project returns the counters of name, created (and put at the head of the
// list) when absent. Creating one past maxProjects first drops the least
// recently active project that has no run in flight.
func (l *Limiter) project(name string, now time.Time) *project {
	if p, ok := l.projects[name]; ok {
		return p
	}
	if len(l.projects) >= l.maxProjects {
		for q := l.tail; q != nil; q = q.prev {
			if q.inFlight == 0 {
				l.drop(q)
				break
			}
		}
	}
	p := &project{name: name, last: now}
	l.projects[name] = p
	l.moveToHead(p)
	return p
}

// evictIdle drops the projects whose last run started idleAfter ago or
// earlier and that have none in flight. The list is ordered by last, so the
// walk stops at the first recent project; it passes only over projects with
// runs in flight, of which there are few.
func (l *Limiter) evictIdle(now time.Time) {
	cutoff := now.Add(-idleAfter)
	for q := l.tail; q != nil && !q.last.After(cutoff); {
		prev := q.prev
		if q.inFlight == 0 {
			l.drop(q)
		}
		q = prev
	}
}

func (l *Limiter) drop(p *project) {
	l.unlink(p)
	delete(l.projects, p.name)
}

func (l *Limiter) unlink(p *project) {
	if p.prev != nil {
		p.prev.next = p.next
	} else if l.head == p {
		l.head = p.next
	}
	if p.next != nil {
		p.next.prev = p.prev
	} else if l.tail == p {
		l.tail = p.prev
	}
	p.prev, p.next = nil, nil
}

func (l *Limiter) moveToHead(p *project) {
	if l.head == p {
		return
	}
	l.unlink(p)
	p.next = l.head
	if l.head != nil {
		l.head.prev = p
	}
	l.head = p
	if l.tail == nil {
		l.tail = p
	}
}

// window counts the runs of the current fixed window (starting at start, a
// multiple of the window's size) and of the one before it.
type window struct {
	start      time.Time
	prev, curr int
}

// advance moves w to the fixed window holding now.
func (w *window) advance(now time.Time, size time.Duration) {
	cur := now.Truncate(size)
	switch {
	case cur.Equal(w.start):
	case cur.Equal(w.start.Add(size)):
		w.prev, w.curr, w.start = w.curr, 0, cur
	case cur.After(w.start):
		w.prev, w.curr, w.start = 0, 0, cur
	}
	// A clock that went back leaves w as it is: counts are never lost to
	// a clock step.
}

// admits reports whether one more run fits at now: the sliding estimate
// prev*(1-f) + curr, f being the elapsed share of the current window, is
// at most limit-1. When it does not, wait is the shortest time after which it
// will, with no other run started meanwhile: retrying after exactly wait
// passes, retrying a nanosecond earlier does not.
func (w *window) admits(now time.Time, size time.Duration, limit int) (wait time.Duration, ok bool) {
	elapsed := min(max(now.Sub(w.start), 0), size) // a clock gone back counts the whole previous window
	room := limit - 1
	if fits(w.prev, w.curr, room, elapsed, size) {
		return 0, true
	}
	// Within the current window, the previous one's weight shrinks.
	if w.curr <= room && w.prev > 0 {
		if e := earliest(w.prev, w.curr, room, size); e < size {
			return e - elapsed, false
		}
	}
	// In the next window the current one becomes the previous.
	return size - elapsed + earliest(w.curr, 0, room, size), false
}

// fits reports whether prev*(1-e/size) + curr <= room, computed exactly as
// prev*(size-e) + curr*size <= room*size in 128 bits: float rounding would
// make a retry at the promised time fail now and then.
func fits(prev, curr, room int, e, size time.Duration) bool {
	h1, l1 := bits.Mul64(uint64(prev), uint64(size-e))
	h2, l2 := bits.Mul64(uint64(curr), uint64(size))
	lo, carry := bits.Add64(l1, l2, 0)
	hi := h1 + h2 + carry
	hr, lr := bits.Mul64(uint64(room), uint64(size))
	return hi < hr || (hi == hr && lo <= lr)
}

// earliest returns the least elapsed time e in [0, size] of a window at
// which fits holds, for prev > 0 and curr <= room (so that it holds at
// size). fits only gets truer as e grows: a float estimate is corrected a
// nanosecond at a time, which takes a step or two.
func earliest(prev, curr, room int, size time.Duration) time.Duration {
	g := 1 - float64(room-curr)/float64(prev)
	e := min(max(time.Duration(math.Ceil(g*float64(size))), 0), size)
	for e < size && !fits(prev, curr, room, e, size) {
		e++
	}
	for e > 0 && fits(prev, curr, room, e-1, size) {
		e--
	}
	return e
}
