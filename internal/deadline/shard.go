package deadline

import (
	"context"
	"sync"
	"time"
)

// shard is one shard of a Timer: it gives runs their time limit with one
// timer for all the runs it holds, rather than the timer a run that
// context.WithTimeout makes: an allocation, and an insertion into and a
// removal from the runtime's timer heap under its lock, which every run of
// a cheap query pays although its query ends long before the limit.
//
// Runs are kept in the order they started. Every run has the same limit, so
// that is the order of their deadlines (to within the moments between a
// run reading the clock and taking the lock), and the timer only ever waits
// for the oldest run's deadline.
//
// A run's context is not registered with its caller's when the run starts
// (as context.WithCancel's child is, by an insertion into a map the
// caller's context allocates: net/http's request context, whose only
// child a cheap run would be). A second timer, set while runs started in
// the last watchEvery are not watched yet, registers those still running
// with their caller's context then (context.AfterFunc), so that a caller
// that goes away ends its run within watchEvery of the run's start, or at
// once after that; the run's Err reports the caller's error at once in any
// case. A run that ends within watchEvery (most) is never registered.
type shard struct {
	timeout time.Duration
	// watchEvery is how long a run may go without being watched for its
	// caller's cancellation; zero is defaultWatchEvery.
	watchEvery time.Duration

	mu         sync.Mutex
	head, tail *Context
	timer      *time.Timer // nil until the first run
	// armed tells whether the timer is set; it is set for a deadline no
	// later than that of the oldest run in the list, and stays set when
	// runs end: when it fires with no run due it is set again for the
	// oldest run's deadline, or left unset when there is none.
	armed bool
	// unwatched is the oldest listed run not yet registered with its
	// caller's context (every later one is not either); watcher is the
	// timer that registers them, watching whether it is set.
	unwatched *Context
	watcher   *time.Timer
	watching  bool
}

// defaultWatchEvery is shard.watchEvery's default: a run whose
// caller goes away is cancelled at most 10 ms after that (or after its
// start, if later).
const defaultWatchEvery = 10 * time.Millisecond

// Context is the context of a run under its time limit: a cancelable
// context with the caller's values that reports the earlier of the limit
// and the caller's deadline as its deadline, the caller's error once the
// caller's context is done, and context.DeadlineExceeded as its error (and
// cause) once the limit ended it.
type Context struct {
	// Context is context.WithCancelCause of values (the caller's context
	// without its cancellation): the run's own Done, which the limit,
	// stop or the watch close, and the parent of contexts derived from
	// the run's.
	context.Context
	parent   context.Context
	values   valuesOf
	cancel   context.CancelCauseFunc
	deadline time.Time

	// prev and next link the runs of a shard; linked tells whether
	// the run is in its list; unwatch ends the registration with the
	// caller's context, once made. Guarded by the shard' mu.
	prev, next *Context
	linked     bool
	unwatch    func() bool
	// shard is the shard that holds the run.
	shard *shard
}

// valuesOf is a context's values without its deadline and cancellation,
// as context.WithoutCancel's, held in the run's context rather than
// allocated apart.
type valuesOf struct{ context.Context }

func (valuesOf) Deadline() (time.Time, bool) { return time.Time{}, false }
func (valuesOf) Done() <-chan struct{}       { return nil }
func (valuesOf) Err() error                  { return nil }

// Deadline implements context.Context: the run's deadline, or the
// caller's when that is earlier.
func (c *Context) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Err implements context.Context: context.DeadlineExceeded once the time
// limit ended the run, as context.WithTimeout's context reports it, the
// caller's error once the caller's context is done (which then ends the
// run, if the watch has not yet), context.Canceled once the run stopped.
// What ended the run first decides, by the cause it gave the run's own
// context (set once), so that Err, once not nil, stays the same.
func (c *Context) Err() error {
	if c.Context.Err() == nil {
		if c.parent.Err() == nil {
			return nil
		}
		c.cancel(context.Cause(c.parent))
	}
	switch cause := context.Cause(c.Context); cause {
	case context.DeadlineExceeded, context.Canceled:
		return cause
	default:
		// A cause of the caller's own (context.WithCancelCause): its
		// error, which stays once set.
		return c.parent.Err()
	}
}

// start returns the context of a run that begins now under parent; the
// caller must call stop with it when the run ends.
func (d *shard) start(parent context.Context) *Context {
	c := &Context{parent: parent, values: valuesOf{parent}, deadline: time.Now().Add(d.timeout), shard: d}
	c.Context, c.cancel = context.WithCancelCause(&c.values)
	if err := parent.Err(); err != nil {
		c.cancel(context.Cause(parent))
	}
	d.mu.Lock()
	c.prev, c.linked = d.tail, true
	if d.tail != nil {
		d.tail.next = c
	} else {
		d.head = c
	}
	d.tail = c
	if !d.armed {
		d.armed = true
		setTimer(&d.timer, d.timeout, d.expire)
	}
	if d.unwatched == nil {
		d.unwatched = c
	}
	if !d.watching {
		d.watching = true
		setTimer(&d.watcher, d.every(), d.watch)
	}
	d.mu.Unlock()
	return c
}

// setTimer sets *t to call f after a wait of after: a new timer the
// first time, the same one again after that.
func setTimer(t **time.Timer, after time.Duration, f func()) {
	if *t == nil {
		*t = time.AfterFunc(after, f)
	} else {
		(*t).Reset(after)
	}
}

// every is how long a run may go unwatched (watchEvery, or its default).
func (d *shard) every() time.Duration {
	if d.watchEvery > 0 {
		return d.watchEvery
	}
	return defaultWatchEvery
}

// watch is the watcher's function: it registers every listed run not yet
// watched with its caller's context, so that the caller's cancellation
// ends it at once from then on. The registrations (context.AfterFunc,
// which takes the caller's context's own lock) are made outside the
// shard's lock, so that the runs starting and stopping meanwhile do not
// wait for them; a run that stopped before its registration was stored
// ends it at once.
func (d *shard) watch() {
	d.mu.Lock()
	var todo []*Context
	for c := d.unwatched; c != nil; c = c.next {
		todo = append(todo, c)
	}
	d.unwatched, d.watching = nil, false
	d.mu.Unlock()
	for _, c := range todo {
		// A caller's context that is never done (context.Background's)
		// registers nothing.
		unwatch := context.AfterFunc(c.parent, func() { c.cancel(context.Cause(c.parent)) })
		d.mu.Lock()
		if c.linked {
			c.unwatch = unwatch
			unwatch = nil
		}
		d.mu.Unlock()
		if unwatch != nil {
			unwatch() // stopped meanwhile
		}
	}
}

// stop ends c: it leaves the list, and its context is cancelled (as
// context.WithTimeout's cancel function cancels it).
func (d *shard) stop(c *Context) {
	d.mu.Lock()
	d.unlink(c)
	unwatch := c.unwatch
	d.mu.Unlock()
	if unwatch != nil {
		unwatch()
	}
	c.cancel(context.Canceled)
}

// unlink removes c from the list, if it is in it. d.mu is held.
func (d *shard) unlink(c *Context) {
	if !c.linked {
		return
	}
	if d.unwatched == c {
		d.unwatched = c.next
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		d.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		d.tail = c.prev
	}
	c.prev, c.next, c.linked = nil, nil, false
}

// expire is the timer's function: it ends the runs whose deadline has
// passed, oldest first, and sets the timer for the next deadline.
func (d *shard) expire() {
	now := time.Now()
	var due []*Context
	d.mu.Lock()
	for c := d.head; c != nil && !c.deadline.After(now); c = d.head {
		d.unlink(c)
		due = append(due, c)
	}
	if d.head != nil {
		d.timer.Reset(d.head.deadline.Sub(now))
	} else {
		d.armed = false
	}
	d.mu.Unlock()
	for _, c := range due {
		// A caller already gone ended the run first: its cause, not the
		// limit's (the first cancel's cause is the one kept).
		cause := context.DeadlineExceeded
		if c.parent.Err() != nil {
			cause = context.Cause(c.parent)
		}
		c.cancel(cause)
	}
}
