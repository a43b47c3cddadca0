// Package limit bounds how many endpoint runs a service takes on, so that no
// project, and no burst of traffic, can take the service down: per project,
// the runs in flight and the runs started per minute and per hour; over all
// projects, the runs in flight.
//
// A Limiter answers Acquire with a release function, or with an *Error that
// names the limit reached and says when to retry. It is safe for concurrent
// use, and its clock can be injected (Config.Now) so that tests need no
// sleeps.
//
// The rates are counted in a budget.Counter (Config.Counter): in this
// process by default, or in a store several processes share (the SQL store,
// Redis), so that N servers on one store allow a project one budget. The
// concurrency limits are always this process's: runs in flight hold a slot
// of the process that runs them, and a slot that outlived its process
// (killed mid-run) must not be held forever in a shared store; a fleet of N
// processes allows N times ProjectConcurrency runs of a project in flight.
//
// The Limiter also holds embed tokens to their rpm (AdmitToken), so that
// the HTTP API and /mcp, given one Limiter, count one budget per token (and
// a fleet whose Limiters share a counter store, one across the fleet).
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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint/budget"
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
	// Counter counts the rates (per minute, per hour, and embed tokens'
	// rpm). nil counts them in this process (budget.Memory, on Now's
	// clock); a shared store (sqlstore's Store.Counter, package
	// budget/redisbudget) makes them one budget across the processes
	// sharing it. It is used through a budget.Guard: pass one to choose
	// what a failure of the store means (GuardConfig.FailOpen) and to
	// count failures across budgets; otherwise the Limiter makes one that
	// fails closed, logging to Logger (see CounterFailures).
	Counter budget.Counter
	// Logger receives the failures of Counter; nil is slog.Default().
	Logger *slog.Logger
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
	// TokenPerMinute is an embed token's own rpm (AdmitToken).
	TokenPerMinute
	// CounterUnavailable is a run refused because its budget could not be
	// counted: the counter store failed, and the Guard fails closed.
	CounterUnavailable
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
	case TokenPerMinute:
		return "rpm"
	case CounterUnavailable:
		return "budget_counter"
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
	case TokenPerMinute:
		return fmt.Sprintf("limit: an embed token started %d runs in the last minute (%s); retry after %s", e.Max, e.Limit, e.RetryAfter)
	case CounterUnavailable:
		return fmt.Sprintf("limit: the budget of project %q could not be counted (%s); retry after %s", e.Project, e.Limit, e.RetryAfter)
	}
	return fmt.Sprintf("limit: %d runs in flight over all projects (%s); retry after %s", e.Max, e.Limit, e.RetryAfter)
}

// Is makes every *Error match ErrLimited.
func (e *Error) Is(target error) bool { return target == ErrLimited }

// Global reports whether the limit is the server's (GlobalConcurrency, or
// CounterUnavailable) rather than the project's: an HTTP API answers the
// first 503 and the others 429.
func (e *Error) Global() bool { return e.Limit == GlobalConcurrency || e.Limit == CounterUnavailable }

// Limiter admits or refuses runs. Its zero value is not usable; call New.
type Limiter struct {
	projectConc, perMinute, perHour, globalConc int
	busyRetry                                   time.Duration
	maxProjects                                 int
	now                                         func() time.Time
	counter                                     *budget.Guard

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
	name       string
	inFlight   int
	held       time.Duration // moving average of its runs' slot time
	last       time.Time
	prev, next *project
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
	gc := budget.GuardConfig{Logger: cfg.Logger}
	if cfg.Counter != nil {
		l.counter = budget.Guarded(cfg.Counter, gc)
	} else {
		l.counter = budget.NewGuard(budget.NewMemory(budget.MemoryConfig{Now: l.now, MaxKeys: 2 * l.maxProjects}), gc)
	}
	return l, nil
}

// CounterFailures is how many times the counter store failed to count a
// run (each logged; see budget.Guard).
func (l *Limiter) CounterFailures() int64 { return l.counter.Failures() }

// Acquire is AcquireContext with a background context.
func (l *Limiter) Acquire(project string) (release func(), err error) {
	return l.AcquireContext(context.Background(), project)
}

// AcquireContext admits a run of project, or refuses it with an *Error.
// An admitted run holds its concurrency slots until release is called
// (once; later calls do nothing); it counts towards the rates from now on.
//
// The concurrency slots are taken first, then the rates are counted, the
// minute's before the hour's: a run refused for its concurrency counts
// towards no rate, and one refused by the minute's rate towards neither,
// so that a client retrying too early does not push its own retry time
// further. A run refused by the hour's rate has been counted in the
// minute's (the counter store checks and counts one window at a time): a
// client hammering a project whose hour is spent fills its minute, and
// waits out at most that minute more once the hour has room.
//
// The project's own limits are checked before the global one: a project
// over its limits is told so (its doing), not that the server is busy.
func (l *Limiter) AcquireContext(ctx context.Context, project string) (release func(), err error) {
	now := l.now()
	l.mu.Lock()
	l.evictIdle(now)
	p := l.project(project, now)
	if l.projectConc != Unlimited && p.inFlight >= l.projectConc {
		e := &Error{Limit: ProjectConcurrency, Project: project, Max: l.projectConc, RetryAfter: max(l.busyRetry, p.held)}
		l.mu.Unlock()
		return nil, e
	}
	if l.globalConc != Unlimited && l.inFlight >= l.globalConc {
		e := &Error{Limit: GlobalConcurrency, Max: l.globalConc, RetryAfter: max(l.busyRetry, l.held)}
		l.mu.Unlock()
		return nil, e
	}
	p.inFlight++
	l.inFlight++
	p.last = now
	l.moveToHead(p)
	l.mu.Unlock()

	for _, r := range []struct {
		limit  Limit
		max    int
		window time.Duration
	}{{ProjectPerMinute, l.perMinute, time.Minute}, {ProjectPerHour, l.perHour, time.Hour}} {
		if r.max == Unlimited {
			continue
		}
		if err := l.take(ctx, "project/"+project, r.limit, project, r.max, r.window); err != nil {
			l.mu.Lock()
			p.inFlight--
			l.inFlight--
			l.mu.Unlock()
			return nil, err
		}
	}
	var once sync.Once
	return func() { once.Do(func() { l.release(p, now) }) }, nil
}

// take counts a run of key against max per window in l's counter: nil, or
// the *Error of limit (or of CounterUnavailable), or ctx's error.
func (l *Limiter) take(ctx context.Context, key string, limit Limit, project string, max int, window time.Duration) error {
	return take(ctx, l.counter, key, limit, project, max, window, l.busyRetry)
}

func take(ctx context.Context, g *budget.Guard, key string, limit Limit, project string, max int, window, busy time.Duration) error {
	if len(key) > maxPlainKey || !utf8.ValidString(key) {
		// A project name too long (or not UTF-8) for a counter's key is
		// counted under its hash.
		sum := sha256.Sum256([]byte(key))
		key = "sha256/" + hex.EncodeToString(sum[:])
	}
	d, err := g.Take(ctx, fmt.Sprintf("%s/%d", key, window.Milliseconds()), int64(max), window)
	switch {
	case errors.Is(err, budget.ErrUnavailable):
		return &Error{Limit: CounterUnavailable, Project: project, Max: max, RetryAfter: busy}
	case err != nil:
		return err
	case !d.Allowed:
		return &Error{Limit: limit, Project: project, Max: max, RetryAfter: d.RetryAfter}
	}
	return nil
}

// maxPlainKey is the longest counter key kept as it is, leaving room in
// budget.MaxKeyLength for the window's suffix.
const maxPlainKey = 256

// AdmitToken counts a run of the embed token whose claims' id is id
// against its rpm: nil, an *Error of TokenPerMinute that says when to
// retry, an *Error of CounterUnavailable when the count failed (the Guard
// failing closed), or ctx's error. rpm <= 0 admits every run. The count is
// the Limiter's Counter's: give the HTTP API and /mcp one Limiter for one
// count per token, and it a shared Counter for one count across processes.
func (l *Limiter) AdmitToken(ctx context.Context, id string, rpm int) error {
	if rpm <= 0 {
		return nil
	}
	return take(ctx, l.counter, "token/"+id, TokenPerMinute, "", rpm, time.Minute, l.busyRetry)
}

// Tokens returns l, or for a nil l (limits off) a new Limiter with no
// limits of its own, that holds embed tokens to their rpm (AdmitToken)
// in this process.
func Tokens(l *Limiter) *Limiter {
	if l != nil {
		return l
	}
	t, err := New(Config{ProjectConcurrency: Unlimited, ProjectPerMinute: Unlimited, ProjectPerHour: Unlimited, GlobalConcurrency: Unlimited})
	if err != nil {
		panic("limit: a Limiter without limits: " + err.Error()) // valid by construction
	}
	return t
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
