package heldexec

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// RowFake is a Fake that is also a driver.RowQuerier: QueryRows hands the
// inner executor's rows (or Answer's) to the sink, and records each such
// stream apart from the queries (Streams; Queries and Calls count Query
// alone), with a running count of the rows handed over (RowsHanded), so
// that a test can tell a streamed read from a kept one and see how far a
// stream had gone when the caller acted. Fail, WaitForCancel, Around,
// Held and Read apply to streams as to queries; Rewrite does not.
//
// A Fake is not a RowQuerier, so a Service given one reads every answer
// with Query: a test of streaming uses a RowFake.
type RowFake struct {
	*Fake

	handed  atomic.Int64
	mu      sync.Mutex
	streams []Call
}

// NewRowFake returns a fake over inner (a driver.RowQuerier; nil with
// Answer, or when every query fails) with the options opts.
func NewRowFake(inner driver.RowQuerier, opts ...Option) *RowFake {
	var x driver.Executor // a nil RowQuerier must be a nil Executor
	if inner != nil {
		x = inner
	}
	return &RowFake{Fake: NewFake(x, opts...)}
}

// QueryRows implements driver.RowQuerier.
func (x *RowFake) QueryRows(ctx context.Context, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
	f := x.Fake
	if f.enter != nil {
		f.enter(ctx)
	}
	if f.leave != nil {
		defer f.leave(ctx)
	}
	c := Call{SQL: st.SQL(), Args: st.Args(), Bounds: b}
	c.Deadline, _ = ctx.Deadline()
	counted := &countingSink{RowSink: sink, handed: &x.handed}
	res, err := x.stream(ctx, st, b, counted)
	c.Rows = counted.n
	f.answered(res, err, &x.mu, &x.streams, c)
	return res, err
}

// stream runs a stream once it is let go: a failure, the wait, Answer's
// rows or the inner executor's QueryRows.
func (x *RowFake) stream(ctx context.Context, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
	f := x.Fake
	if err := f.held.pass(ctx, st); err != nil {
		return nil, err
	}
	if err := f.refusal(ctx, st); err != nil {
		return nil, err
	}
	if f.answer != nil {
		if err := sink.Columns(f.answer.Columns, f.answer.Types); err != nil {
			return nil, err
		}
		for _, row := range f.answer.Rows {
			if err := sink.Row(row); err != nil {
				return nil, err
			}
		}
		return &driver.Result{Columns: f.answer.Columns, Types: f.answer.Types}, nil
	}
	if f.inner == nil {
		return nil, fmt.Errorf("heldexec: no inner executor and no Answer for %q", st.SQL())
	}
	return f.inner.(driver.RowQuerier).QueryRows(ctx, st, b, sink)
}

// Streams returns the streams (QueryRows) answered or failed so far, in
// the order they ended, each with the rows handed to its sink.
func (x *RowFake) Streams() []Call {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]Call(nil), x.streams...)
}

// RowsHanded returns how many rows the streams have handed to their
// sinks so far (counted as each is handed), a stream under way's included.
func (x *RowFake) RowsHanded() int64 { return x.handed.Load() }

// Reset forgets the calls, the streams and the counts.
func (x *RowFake) Reset() {
	x.Fake.Reset()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.streams = nil
	x.handed.Store(0)
}

// countingSink counts the rows handed to it, in n (its stream's) and in
// handed (every stream's), before it passes each on.
type countingSink struct {
	driver.RowSink
	n      int
	handed *atomic.Int64
}

func (c *countingSink) Row(row []any) error {
	c.n++
	c.handed.Add(1)
	return c.RowSink.Row(row)
}
