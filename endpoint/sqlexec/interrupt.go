package sqlexec

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// InterruptFunc returns a function that stops the statement running on
// driverConn, a connection of the run pool's driver (as sql.Conn.Raw gives
// it), and that is safe to call from another goroutine; or an error when
// driverConn is not a connection it can stop (a run then fails with it, as
// it does when neither is returned). The interrupt is called on the
// Executor's timer goroutine: a panic there fails the run rather than the
// process. sqliteinterrupt.For is modernc.org/sqlite's.
type InterruptFunc func(driverConn any) (interrupt func(), err error)

// WithInterrupt makes the Executor interrupt a run's connection when the
// run's context ends while the run holds it, with interrupt
// (sqliteinterrupt.For for modernc.org/sqlite):
//
//	x := sqlexec.New(db, engine.SQLite, sqlexec.WithInterrupt(sqliteinterrupt.For))
//
// Without it, a SQLite run whose work comes after its first row (a
// recursive query that answers one row and goes on looking for the next)
// runs past its time limit for as long as it runs: modernc.org/sqlite
// interrupts a query only while it starts, and database/sql cannot close
// rows while one is being read. On the other engines the server ends a
// run at its limit (engine.Guard) and this is not needed.
//
// A run then holds a connection of its own, as under WithSQLiteLimits (a
// parse per run), except on a run pool opened with KeepStatements, whose
// runs hold one already. A connection interrupt refuses fails the run
// with its error rather than run it without the interrupt.
func WithInterrupt(interrupt InterruptFunc) Option {
	return func(o *options) { o.interrupt = interrupt }
}

// holdsConn tells whether a plain run holds a connection of its own: for
// the limits, or for the interrupt.
func (e *Executor) holdsConn() bool { return e.limitsHeld() || e.interrupt != nil }

// interruptEvery is how often the Executor looks for runs whose context
// ended and interrupts their connections: a run is interrupted within this
// of its end. Registering a run costs no allocation and no goroutine
// (context.AfterFunc would start one a run on the Service's contexts).
const interruptEvery = 10 * time.Millisecond

// watchConn interrupts the statement running on c, held for a run under
// ctx, within interruptEvery of ctx's end, until the returned stop is
// called; stop returns once no interrupt is running, so that none reaches
// the next run on c, with the error of an interrupt that panicked, and
// does nothing when called again. With no interrupt set it does nothing.
func (e *Executor) watchConn(ctx context.Context, c *sql.Conn) (stop func() error, err error) {
	if e.interrupt == nil || ctx.Done() == nil {
		return noStop, nil
	}
	slot := -1
	err = c.Raw(func(dc any) error {
		var err error
		slot, err = e.watchDriverConn(ctx, dc, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return func() error {
		if slot < 0 { // calling stop again does nothing
			return nil
		}
		err := e.watched.remove(slot)
		slot = -1
		return err
	}, nil
}

func noStop() error { return nil }

// withStop is err, the error of a run, joined with serr, the error of
// stopping its watch (an interrupt that panicked), when there is one.
func withStop(err, serr error) error {
	if serr == nil {
		return err
	}
	return errors.Join(err, serr)
}

// watchDriverConn watches dc, a driver's connection held for a run under
// ctx (a keptConn's interrupt is found once, and kept with it), and
// returns its slot, for runWatch.remove: -1 when nothing is watched (no
// interrupt set, or a context that never ends). again interrupts the run
// again at each look until it is removed (runWatch.addRun), for a run
// whose driver does not watch ctx itself.
func (e *Executor) watchDriverConn(ctx context.Context, dc any, again bool) (slot int, err error) {
	if e.interrupt == nil || ctx.Done() == nil {
		return -1, nil
	}
	interrupt, err := e.interruptOf(dc)
	if err != nil {
		return -1, err
	}
	return e.watched.addRun(ctx, interrupt, again), nil
}

// interruptOf returns the interrupt of dc, a connection of the run pool's
// driver: of the driver's connection a keptConn wraps (a pool opened with
// KeepStatements, whose guarded runs hold one too), found once and kept
// with it.
func (e *Executor) interruptOf(dc any) (interrupt func(), err error) {
	kc, ok := dc.(*keptConn)
	if !ok {
		interrupt, err = e.interrupt(dc)
	} else if interrupt = kc.interrupt; interrupt == nil {
		interrupt, err = e.interrupt(kc.Conn)
		kc.interrupt = interrupt
	}
	if err == nil && interrupt == nil {
		err = errors.New("the InterruptFunc returned no interrupt and no error")
	}
	if err != nil {
		return nil, fmt.Errorf("sqlexec: interrupting the run's connection: %w", err)
	}
	return interrupt, nil
}

// runWatch holds the runs whose connections are interrupted when their
// contexts end, in slots reused once free, and looks at them every
// interruptEvery while there are any. An interrupt runs with mu held, so
// remove returns only once none is running.
type runWatch struct {
	mu    sync.Mutex
	slots []watchedRun
	free  []int
	n     int // slots in use
	timer *time.Timer
	armed bool
}

type watchedRun struct {
	ctx       context.Context
	interrupt func()
	used      bool
	fired     bool
	again     bool // interrupted at each look until removed, not once
	// panicked is what the interrupt panicked with, which remove
	// returns as an error.
	panicked any
}

// add watches a run under ctx, whose connection interrupt stops once its
// context ended, and returns its slot.
func (w *runWatch) add(ctx context.Context, interrupt func()) int {
	return w.addRun(ctx, interrupt, false)
}

// addRun is add; again interrupts the run at each look once its context
// ended, until it is removed, not once: SQLite drops an interrupt that
// comes while no statement of the connection runs, so one sent just
// before the run's statement started would be lost when the driver does
// not also watch the context (a kept statement's run, see
// queryKeptOnce). Until remove, the connection runs nothing but the run's
// own statement, which its ended context has already doomed.
func (w *runWatch) addRun(ctx context.Context, interrupt func(), again bool) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var i int
	if k := len(w.free); k > 0 {
		i, w.free = w.free[k-1], w.free[:k-1]
	} else {
		i = len(w.slots)
		w.slots = append(w.slots, watchedRun{})
	}
	w.slots[i] = watchedRun{ctx: ctx, interrupt: interrupt, used: true, again: again}
	w.n++
	if !w.armed {
		if w.timer == nil {
			w.timer = time.AfterFunc(interruptEvery, w.look)
		} else {
			w.timer.Reset(interruptEvery)
		}
		w.armed = true
	}
	return i
}

// remove stops watching slot (nothing when it is -1), once no interrupt
// runs; it returns an error when the run's interrupt panicked.
func (w *runWatch) remove(slot int) error {
	if slot < 0 {
		return nil
	}
	w.mu.Lock()
	p := w.slots[slot].panicked
	w.slots[slot] = watchedRun{}
	w.free = append(w.free, slot)
	w.n--
	w.mu.Unlock()
	if p != nil {
		return fmt.Errorf("sqlexec: the interrupt of the run's connection panicked: %v", p)
	}
	return nil
}

// look interrupts the connections of the runs whose contexts ended, once
// each (at each look for a run added to be interrupted again, see addRun),
// and looks again after interruptEvery while any run is watched.
func (w *runWatch) look() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.slots {
		r := &w.slots[i]
		if r.used && (!r.fired || r.again && r.panicked == nil) && r.ctx.Err() != nil {
			r.fired = true
			r.fire()
		}
	}
	if w.n > 0 {
		w.timer.Reset(interruptEvery)
	} else {
		w.armed = false
	}
}

// fire calls r's interrupt, and keeps what it panics with for remove: a
// panic here, on the timer's goroutine, would end the process (and leave
// the watch unarmed for every later run).
func (r *watchedRun) fire() {
	defer func() {
		if p := recover(); p != nil {
			r.panicked = p
		}
	}()
	r.interrupt()
}
