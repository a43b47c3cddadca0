package sqlexec

import (
	"context"
	"database/sql"
	"fmt"
)

// InterruptFunc returns a function that stops the statement running on
// driverConn, a connection of the run pool's driver (as sql.Conn.Raw gives
// it), and that is safe to call from another goroutine; or an error when
// driverConn is not a connection it can stop.
// sqliteinterrupt.For is modernc.org/sqlite's.
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
func (e *Executor) holdsConn() bool { return e.hasLimits() || e.interrupt != nil }

// watchConn interrupts the statement running on c, held for a run under
// ctx, once ctx ends, until the returned stop is called; stop returns once
// no interrupt is running, so that none reaches the next run on c. With
// no interrupt set it does nothing.
func (e *Executor) watchConn(ctx context.Context, c *sql.Conn) (stop func(), err error) {
	if e.interrupt == nil {
		return func() {}, nil
	}
	var interrupt func()
	err = c.Raw(func(dc any) error {
		var err error
		interrupt, err = e.interrupt(dc)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlexec: interrupting the run's connection: %w", err)
	}
	return watch(ctx, interrupt), nil
}

// watchDriverConn is watchConn for dc, a driver's connection held for a
// run.
func (e *Executor) watchDriverConn(ctx context.Context, dc any) (stop func(), err error) {
	if e.interrupt == nil {
		return func() {}, nil
	}
	interrupt, err := e.interrupt(dc)
	if err != nil {
		return nil, fmt.Errorf("sqlexec: interrupting the run's connection: %w", err)
	}
	return watch(ctx, interrupt), nil
}

// watch calls interrupt once ctx ends, until stop is called; stop returns
// once interrupt is not running. Calling stop again does nothing.
func watch(ctx context.Context, interrupt func()) (stop func()) {
	if ctx.Done() == nil {
		return func() {}
	}
	done := make(chan struct{})
	cancel := context.AfterFunc(ctx, func() {
		defer close(done)
		interrupt()
	})
	stopped := false
	return func() {
		if stopped {
			return
		}
		stopped = true
		if !cancel() {
			<-done // it started: wait for it to end
		}
	}
}
