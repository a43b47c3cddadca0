package driver

import (
	"context"
	"errors"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/engine"
)

// Executor runs SQL against the analytics database.
//
// Guidelines for implementers: the query text comes with bind markers in the
// style of Engine() and every value in args; never interpolate args into the
// text. On ClickHouse the markers are typed parameters {p1:T}, {p2:T}, ...
// and args holds their values as text, in order: bind the n-th as the
// parameter named pn. Honour ctx cancellation and deadlines (return an error wrapping
// context.DeadlineExceeded on timeout). Errors may carry engine detail; the
// Service logs nothing and shows callers a generic message. Run the
// conformance suite in package endpoint/executortest against every
// implementation.
type Executor interface {
	// Engine is the SQL engine the executor runs on.
	Engine() engine.Engine
	// Query runs a statement that returns rows.
	Query(ctx context.Context, query string, args []any) (*Result, error)
	// Exec runs a statement that returns no rows (materialization writes).
	Exec(ctx context.Context, query string, args []any) error
}

// TxExecutor is an Executor that can also run statements in one
// transaction. The Service swaps a materialized table through it on
// engines whose DDL is transactional (engine.Engine.Swap says which), so
// that a run never finds the table missing; without it the swap runs one
// statement at a time.
type TxExecutor interface {
	Executor
	// ExecTx runs the statements in order in one transaction, committed
	// when all succeed and rolled back otherwise.
	ExecTx(ctx context.Context, stmts []string) error
}

// Result is a query's answer: column names, their database types, and the
// rows as arrays in column order.
type Result struct {
	Columns []string
	Types   []string
	Rows    [][]any
	// RowsRead and BytesRead are what the engine read to answer, set by an
	// executor whose engine reports them (ClickHouse's read_rows and
	// read_bytes) and nil otherwise: the Service shows them in a run's
	// statistics and never estimates them.
	RowsRead, BytesRead *int64
}

// Bounds are the limits of one run, as the Service hands them to a
// BoundedExecutor.
type Bounds struct {
	// MaxRows ends the statement after that many rows, as QueryCapped
	// does (see RowCapper); 0 reads every row. The Service sets it only
	// for an executor whose CapsRows holds.
	MaxRows int
	// MaxBytes bounds the rows read, as RowBytes weighs them: once they
	// weigh more, the query is ended and the error wraps
	// ErrResultTooLarge. 0 means no bound.
	MaxBytes int64
	// Timeout is the run's time limit, which ctx's deadline carries too,
	// for the executor to pass on to the engine (engine.Guard), so that a
	// server stops the query itself rather than only when its client
	// gives up; 0 means none.
	Timeout time.Duration
}

// BoundedExecutor is an Executor that enforces a run's Bounds while it
// reads rows, so that a result too large is refused before it is all in
// memory. The Service runs every query of a run through QueryBounded when
// its executor has it; it checks the results of other executors once they
// are read.
//
// Guidelines for implementers: run the query read-only, and with the
// engine's own time limit where it has one (engine.Guard says how); count
// every row read, not only those the Service will return.
type BoundedExecutor interface {
	Executor
	// QueryBounded is Query within b.
	QueryBounded(ctx context.Context, query string, args []any, b Bounds) (*Result, error)
}

// ErrResultTooLarge is wrapped by the error of a BoundedExecutor whose rows
// exceeded Bounds.MaxBytes. The Service answers it with an *endpoint.Error of code
// endpoint.CodeResultTooLarge.
var ErrResultTooLarge = errors.New("endpoint: result exceeds its byte limit")

// RowBytes is about what row weighs in a JSON answer: its values' text
// (strings with their quotes, numbers at their length, floats and times at
// their longest), the commas and the brackets. It is the measure of
// Bounds.MaxBytes and endpoint.Config.MaxResultBytes; escapes inside strings are
// not counted.
func RowBytes(row []any) int64 {
	n := int64(2 + len(row))
	for _, v := range row {
		n += valueBytes(v)
	}
	return n
}

func valueBytes(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 4
	case string:
		return int64(len(x)) + 2
	case []byte:
		return int64(len(x)+2)/3*4 + 2 // base64
	case bool:
		return 5
	case int64:
		return intBytes(x)
	case int:
		return intBytes(int64(x))
	case int32:
		return intBytes(int64(x))
	case float64, float32:
		return 24 // -1.2345678901234567e-308
	case time.Time:
		return 37 // "2006-01-02T15:04:05.999999999Z07:00"
	}
	return 24
}

// intBytes is the length of n in decimal.
func intBytes(n int64) int64 {
	l := int64(1)
	if n < 0 {
		l++
		if n == -n { // math.MinInt64
			return 20
		}
		n = -n
	}
	for ; n >= 10; n /= 10 {
		l++
	}
	return l
}

// RowCapper is implemented by an Executor that can end a query after its
// first rows at no more cost than a LIMIT clause would have: an engine
// that computes rows only as they are read, such as SQLite in process.
// The Service then runs a saved query that is a plain SELECT as it was
// written, when the run asks for no offset, reading one row more than the
// limit to tell whether there are more; otherwise it wraps the query in
// SELECT * FROM (...) LIMIT ... OFFSET .... An executor whose engine
// computes or sends every row anyway (a client-server database that drains
// the rest when the rows are closed) should answer false from CapsRows:
// there the LIMIT of the wrapper is what saves the work.
//
// Rows, their order and HasMore are the same either way. Column names are
// the query's own when it runs as written; through the wrapper SQLite
// renames a name that repeats in the select list ("id", "id:1").
type RowCapper interface {
	Executor
	// CapsRows reports whether QueryCapped is as cheap as a LIMIT on this
	// executor's engine. The Service asks once, in New.
	CapsRows() bool
	// QueryCapped is Query reading no more than the first max rows (max
	// is at least 1) and then ending the statement.
	QueryCapped(ctx context.Context, query string, args []any, max int) (*Result, error)
}
