package heldexec

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// Call is one query the executor was given.
type Call struct {
	SQL      string
	Args     []any
	Bounds   driver.Bounds
	Deadline time.Time // zero: the context had none
	Rows     int       // rows answered; 0 on an error
}

// Option sets a behaviour of NewFake's executor.
type Option func(*Fake)

// Answer makes every query answer res (a copy of its header, the same
// rows), without an inner executor.
func Answer(res *driver.Result) Option {
	return func(x *Fake) { x.answer = res }
}

// Fail makes the queries that when selects (all of them when when is nil)
// fail with err, and Exec too when when is nil.
func Fail(err error, when func(driver.Statement) bool) Option {
	return func(x *Fake) { x.fails = append(x.fails, failure{err, when}) }
}

// SQLContains selects the statements whose SQL text holds s.
func SQLContains(s string) func(driver.Statement) bool {
	return func(st driver.Statement) bool { return strings.Contains(st.SQL(), s) }
}

// WaitForCancel makes every query wait until its context ends and fail
// with an error wrapping the context's, as a database interrupted mid-run.
func WaitForCancel() Option {
	return WaitForCancelWhen(func(driver.Statement) bool { return true })
}

// WaitForCancelWhen makes the queries that when selects wait as
// WaitForCancel's; the others run on.
func WaitForCancelWhen(when func(driver.Statement) bool) Option {
	return func(x *Fake) { x.wait = when }
}

// Around calls enter before every query and leave after it, with the
// query's context.
func Around(enter, leave func(context.Context)) Option {
	return func(x *Fake) { x.enter, x.leave = enter, leave }
}

// Held makes the executor able to hold queries (Hold, Release), with room
// on Started for buffer held queries.
func Held(buffer int) Option {
	return func(x *Fake) { x.buffer = buffer }
}

// HoldOnly makes Hold hold only the queries when selects (with Held); the
// others pass, held or not.
func HoldOnly(when func(driver.Statement) bool) Option {
	return func(x *Fake) { x.holdOnly = when }
}

// BeforeExec calls f before every Exec, with its context and statements; an
// error f returns is Exec's, and the statements do not run. f may wait (a
// slow or held write) or fail (a full disk).
func BeforeExec(f func(ctx context.Context, stmts []driver.Statement) error) Option {
	return func(x *Fake) { x.beforeExec = f }
}

// Unrecorded keeps no Call of the queries (Calls and Last stay empty; they
// are still counted), so that a benchmark's executor holds nothing that
// grows with its runs.
func Unrecorded() Option {
	return func(x *Fake) { x.unrecorded = true }
}

// OnEngine sets the engine the executor reports without an inner one
// (SQLite by default).
func OnEngine(e engine.Engine) Option {
	return func(x *Fake) { x.engine = e }
}

// Read makes every answer report rows and bytes as what the engine read
// (RowsRead, BytesRead), as a database that reports its reads does;
// SetRead changes them.
func Read(rows, bytes int64) Option {
	return func(x *Fake) { x.SetRead(rows, bytes) }
}

// Rewrite makes every answer of Query pass through f before it is
// returned (f may change its header and its rows in place), as a driver
// that answers other values or types would.
func Rewrite(f func(*driver.Result)) Option {
	return func(x *Fake) { x.rewrite = f }
}

// EachStatement calls f for each statement of every Exec, in order, with
// the Exec's context, the statement and run, which runs it: f may act
// before and after it, wait, or fail in its stead (its error is Exec's,
// and the statements after it do not run). Outside a transaction run
// runs the statement alone (with the Write's byte bound); in one
// (Write.Tx), run of a statement goes on to f of the next, and run of the
// last runs them all in one transaction, so that every run returns the
// transaction's error.
func EachStatement(f func(ctx context.Context, st driver.Statement, run func() error) error) Option {
	return func(x *Fake) { x.each = f }
}

// HoldExec makes Hold hold the statements of Exec that when selects, each
// before it runs (inside EachStatement's run), instead of queries: with
// it, queries pass, held or not. Started tells of each statement held
// (with Held).
func HoldExec(when func(driver.Statement) bool) Option {
	return func(x *Fake) { x.holdExec = when }
}

type failure struct {
	err  error
	when func(driver.Statement) bool
}

// Fake is the one fake driver.Executor tests share: it wraps a real
// executor (or stands alone), records and counts the queries it is given,
// and with options answers a fixed result, reports rows and bytes read,
// fails chosen queries, waits for the query's context to end, calls a
// test's hooks around each query, before each Exec or around each
// statement of an Exec, rewrites answers, or holds queries (all, or those
// chosen), or the chosen statements of Exec, until the test releases them
// (an Executor inside). RowFake is a Fake that also streams (QueryRows).
//
//	x := heldexec.NewFake(sqlexec.New(db, engine.SQLite),
//		heldexec.Fail(errors.New("code: 53"), heldexec.SQLContains("endpointkit_mat_")))
//	...
//	require.Equal(t, 2, x.Queries())
//	assert.Contains(t, x.Last().SQL, "WHERE")
//
// Its zero value is not usable: call NewFake.
type Fake struct {
	inner  driver.Executor
	answer *driver.Result
	fails  []failure
	wait   func(driver.Statement) bool
	enter  func(context.Context)
	leave  func(context.Context)
	buffer int
	engine engine.Engine

	read       atomic.Pointer[[2]int64] // rows and bytes read; nil: none
	holdOnly   func(driver.Statement) bool
	unrecorded bool
	beforeExec func(context.Context, []driver.Statement) error
	rewrite    func(*driver.Result)
	each       func(context.Context, driver.Statement, func() error) error
	holdExec   func(driver.Statement) bool

	// Started receives once a query is held (with Held).
	Started chan struct{}
	held    *Executor

	queries atomic.Int64
	mu      sync.Mutex
	calls   []Call
}

// NewFake returns a fake over inner (nil with Answer, or when every query
// fails) with the options opts.
func NewFake(inner driver.Executor, opts ...Option) *Fake {
	x := &Fake{inner: inner, engine: engine.SQLite}
	for _, o := range opts {
		o(x)
	}
	x.held = New(core{x}, x.buffer)
	x.held.Only = x.holdOnly
	if x.holdExec != nil {
		x.held.Only = func(driver.Statement) bool { return false }
	}
	x.Started = x.held.Started
	return x
}

// Engine implements driver.Executor: the inner executor's engine, or
// OnEngine's.
func (x *Fake) Engine() engine.Engine {
	if x.inner != nil {
		return x.inner.Engine()
	}
	return x.engine
}

// Query implements driver.Executor.
func (x *Fake) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	x.queries.Add(1)
	if x.enter != nil {
		x.enter(ctx)
	}
	if x.leave != nil {
		defer x.leave(ctx)
	}
	c := Call{SQL: st.SQL(), Args: st.Args(), Bounds: b}
	c.Deadline, _ = ctx.Deadline()
	res, err := x.held.Query(ctx, st, b)
	if err == nil && res != nil {
		if x.rewrite != nil {
			x.rewrite(res)
		}
		c.Rows = len(res.Rows)
	}
	x.answered(res, err, &x.mu, &x.calls, c)
	return res, err
}

// answered gives an answer res (when err is nil) the rows and bytes read
// that Read or SetRead set, and records its call c in calls under mu,
// unless Unrecorded.
func (x *Fake) answered(res *driver.Result, err error, mu *sync.Mutex, calls *[]Call, c Call) {
	if err == nil && res != nil {
		if r := x.read.Load(); r != nil {
			rows, bytes := r[0], r[1]
			res.RowsRead, res.BytesRead = &rows, &bytes
		}
	}
	if !x.unrecorded {
		mu.Lock()
		*calls = append(*calls, c)
		mu.Unlock()
	}
}

// Exec implements driver.Executor: BeforeExec's error, Fail's error when
// it selects every statement, else the inner executor's Exec (nil without
// one), statement by statement with EachStatement or HoldExec.
func (x *Fake) Exec(ctx context.Context, stmts []driver.Statement, w driver.Write) error {
	if x.beforeExec != nil {
		if err := x.beforeExec(ctx, stmts); err != nil {
			return err
		}
	}
	for _, f := range x.fails {
		if f.when == nil {
			return f.err
		}
	}
	switch {
	case x.each == nil && x.holdExec == nil:
		return x.exec(ctx, stmts, w)
	case w.Tx:
		return x.inTx(ctx, stmts, 0, w)
	}
	for _, st := range stmts {
		alone := func() error { return x.exec(ctx, []driver.Statement{st}, driver.Write{MaxBytes: w.MaxBytes}) }
		if err := x.statement(ctx, st, alone); err != nil {
			return err
		}
	}
	return nil
}

// inTx runs stmts[i:] through EachStatement's f, then all of stmts in one
// transaction.
func (x *Fake) inTx(ctx context.Context, stmts []driver.Statement, i int, w driver.Write) error {
	if i == len(stmts) {
		return x.exec(ctx, stmts, w)
	}
	return x.statement(ctx, stmts[i], func() error { return x.inTx(ctx, stmts, i+1, w) })
}

// statement gives st and run to EachStatement's f (or runs it without
// one), holding st before run when HoldExec selects it.
func (x *Fake) statement(ctx context.Context, st driver.Statement, run func() error) error {
	held := func() error {
		if x.holdExec != nil && x.holdExec(st) {
			if err := x.held.hold(ctx); err != nil {
				return err
			}
		}
		return run()
	}
	if x.each == nil {
		return held()
	}
	return x.each(ctx, st, held)
}

// exec is the inner executor's Exec, nil without one.
func (x *Fake) exec(ctx context.Context, stmts []driver.Statement, w driver.Write) error {
	if x.inner == nil {
		return nil
	}
	return x.inner.Exec(ctx, stmts, w)
}

// SetRead makes the answers from now on report rows and bytes read (as
// Read).
func (x *Fake) SetRead(rows, bytes int64) { x.read.Store(&[2]int64{rows, bytes}) }

// Hold makes the queries that start from now on wait (with Held), or
// the statements of Exec that HoldExec selects.
func (x *Fake) Hold() { x.held.Hold() }

// Release lets the held queries go, and those that start after.
func (x *Fake) Release() { x.held.Release() }

// Queries returns how many queries the executor was given.
func (x *Fake) Queries() int { return int(x.queries.Load()) }

// Calls returns the queries answered or failed so far, in the order they
// ended.
func (x *Fake) Calls() []Call {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]Call(nil), x.calls...)
}

// Last returns the last query that ended; the zero Call before any.
func (x *Fake) Last() Call {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.calls) == 0 {
		return Call{}
	}
	return x.calls[len(x.calls)-1]
}

// Reset forgets the calls and the count.
func (x *Fake) Reset() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.calls = nil
	x.queries.Store(0)
}

// core is what runs a query once it is let go: a failure, the wait, the
// fixed answer or the inner executor.
type core struct{ x *Fake }

func (c core) Engine() engine.Engine { return c.x.Engine() }

func (c core) Exec(ctx context.Context, stmts []driver.Statement, w driver.Write) error {
	return c.x.Exec(ctx, stmts, w)
}

func (c core) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	x := c.x
	if err := x.refusal(ctx, st); err != nil {
		return nil, err
	}
	if x.answer != nil {
		res := *x.answer
		return &res, nil
	}
	if x.inner == nil {
		return nil, fmt.Errorf("heldexec: no inner executor and no Answer for %q", st.SQL())
	}
	return x.inner.Query(ctx, st, b)
}

// refusal is how a query or stream of st ends without an answer: Fail's
// error when it selects st, or, with WaitForCancel selecting st, the
// error of ctx once it is done; nil otherwise.
func (x *Fake) refusal(ctx context.Context, st driver.Statement) error {
	for _, f := range x.fails {
		if f.when == nil || f.when(st) {
			return f.err
		}
	}
	if x.wait != nil && x.wait(st) {
		<-ctx.Done()
		return fmt.Errorf("heldexec: interrupted: %w", ctx.Err())
	}
	return nil
}
