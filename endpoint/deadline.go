package endpoint

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// runDeadlines gives runs their time limit (Config.RunTimeout) with one
// timer for all the runs of a Service, rather than the timer a run that
// context.WithTimeout makes: an allocation, and an insertion into and a
// removal from the runtime's timer heap under its lock, which every run of
// a cheap query pays although its query ends long before the limit.
//
// Runs are kept in the order they started. Every run has the same limit, so
// that is the order of their deadlines (to within the moments between a
// run reading the clock and taking the lock), and the timer only ever waits
// for the oldest run's deadline.
type runDeadlines struct {
	timeout time.Duration

	mu         sync.Mutex
	head, tail *runContext
	timer      *time.Timer // nil until the first run
	// armed tells whether the timer is set; it is set for a deadline no
	// later than that of the oldest run in the list, and stays set when
	// runs end: when it fires with no run due it is set again for the
	// oldest run's deadline, or left unset when there is none.
	armed bool
}

// runContext is the context of a run under its time limit: a cancelable
// child of the caller's context that reports the limit as its deadline and
// context.DeadlineExceeded as its error (and cause) once the limit ended it.
type runContext struct {
	context.Context // context.WithCancelCause of the caller's
	cancel          context.CancelCauseFunc
	deadline        time.Time
	expired         atomic.Bool

	// prev and next link the runs of a runDeadlines; linked tells whether
	// the run is in its list. Guarded by the runDeadlines' mu.
	prev, next *runContext
	linked     bool
}

// Deadline implements context.Context: the run's deadline, or the
// caller's when that is earlier.
func (c *runContext) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Err implements context.Context: context.DeadlineExceeded once the time
// limit ended the run, as context.WithTimeout's context reports it.
func (c *runContext) Err() error {
	err := c.Context.Err()
	if err != nil && c.expired.Load() {
		return context.DeadlineExceeded
	}
	return err
}

// start returns the context of a run that begins now under parent; the
// caller must call stop with it when the run ends.
func (d *runDeadlines) start(parent context.Context) *runContext {
	inner, cancel := context.WithCancelCause(parent)
	c := &runContext{Context: inner, cancel: cancel, deadline: time.Now().Add(d.timeout)}
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
		if d.timer == nil {
			d.timer = time.AfterFunc(d.timeout, d.expire)
		} else {
			d.timer.Reset(d.timeout)
		}
	}
	d.mu.Unlock()
	return c
}

// stop ends c: it leaves the list, and its context is cancelled (as
// context.WithTimeout's cancel function cancels it).
func (d *runDeadlines) stop(c *runContext) {
	d.mu.Lock()
	d.unlink(c)
	d.mu.Unlock()
	c.cancel(context.Canceled)
}

// unlink removes c from the list, if it is in it. d.mu is held.
func (d *runDeadlines) unlink(c *runContext) {
	if !c.linked {
		return
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
func (d *runDeadlines) expire() {
	now := time.Now()
	var due []*runContext
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
		if c.Context.Err() == nil {
			c.expired.Store(true)
		}
		c.cancel(context.DeadlineExceeded)
	}
}
