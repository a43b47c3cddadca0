package driver

import (
	"context"
	"errors"
	"time"

	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// Statement is one statement for an executor: SQL text with the bind
// markers of the executor's engine, and the arguments of those markers in
// order (Statement.SQL, Statement.Args). Its fields are sealed: the
// Service's statements are made only where they are scoped to a project's
// tables (package sql/scope), and the conformance suite
// (endpoint/executortest) makes its own, so an executor never receives SQL
// that skipped the access policy.
type Statement = stmt.Statement

// Executor runs SQL against the analytics database. The Service calls
// Query for everything that returns rows (a run, the editor's queries, the
// count of a stored table's rows) and Exec for everything that writes (the
// DDL and the pre-compute of materialized tables); it calls nothing else.
//
// Guidelines for implementers:
//
//   - Bind, never interpolate: a Statement's text comes with bind markers
//     in the style of Engine() and every value is in its Args. On
//     ClickHouse the markers are typed parameters {p1:T}, {p2:T}, ... and
//     the arguments are their values as text, in order: bind the n-th as
//     the parameter named pn.
//   - Query runs read-only: a statement that writes fails and changes
//     nothing (the Service checks that a saved query is one SELECT; this is
//     the second line of defence).
//   - Query always honours its Bounds, whatever the statement: at most
//     MaxRows rows, ended then (the Service reads one more row than a page
//     to tell whether there are more); an error wrapping ErrResultTooLarge
//     as soon as the rows read weigh more than MaxBytes (RowBytes), not once
//     they are all in memory; Timeout sent to the engine, so that a server
//     stops the query itself (engine.Guard says how), and ending the query
//     even when ctx has no deadline as near. Say in your doc where a bound
//     is enforced by the engine and where by your reading of the rows.
//   - Honour ctx: cancellation and deadlines end the statement, and the
//     error wraps context.Canceled or context.DeadlineExceeded (the Service
//     answers a timeout with 504, anything else with 502).
//   - Errors may carry engine detail. Return a *QueryError when the
//     engine's code says the query itself is at fault (syntax, unknown
//     name, type, division by zero): the Service shows its Message to the
//     query's author. The Service shows callers a generic message for
//     every other error.
//   - Safe for concurrent use.
//
// Run the conformance suite in package endpoint/executortest against every
// implementation: it checks each of these, every bound included.
type Executor interface {
	// Engine is the SQL engine the executor runs on: it decides the SQL
	// the Service writes, its markers, and whether a query may run without
	// the Service's paging wrapper (engine.Engine.StopsEarly).
	Engine() engine.Engine
	// Query runs a statement that returns rows, read-only and within b.
	Query(ctx context.Context, st Statement, b Bounds) (*Result, error)
	// Exec runs statements that return no rows, in order, stopping at the
	// first that fails, as w says: in one transaction when w.Tx is set,
	// and growing the database by at most w.MaxBytes where the executor
	// can count it. Its time is bounded by ctx.
	Exec(ctx context.Context, stmts []Statement, w Write) error
}

// Explainer is an Executor that can show the engine's plan of a query
// without running it, in the engine's own form: the rows of SQLite's
// EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN (FORMAT JSON) or MySQL's and
// MariaDB's EXPLAIN. The Service asks it once a refresh whether an index
// serves the reads of the source a materialized endpoint's runs make
// (MaterializationReport.EdgeIndex); an Executor that is no Explainer
// leaves them not checked.
type Explainer interface {
	// Explain returns the plan of st, a query (it refuses any other
	// statement), without running it.
	Explain(ctx context.Context, st Statement) (*Result, error)
}

// Write says how Exec runs its statements.
type Write struct {
	// Tx runs them in one transaction, committed when all succeed and
	// rolled back otherwise. The Service sets it only where the engine's
	// DDL is transactional (the swap of a stored table,
	// engine.Engine.Swap); an executor whose engine has no transactions
	// runs them in order.
	Tx bool
	// MaxBytes, when positive, bounds how much the statements may grow
	// the database while they run: past it Exec fails with an error
	// wrapping ErrWriteLimit. An executor that cannot count what a write
	// grows (an engine without page accounting) ignores it, and says so
	// in its doc; the Service measures a stored table once it is built
	// anyway (Config.MaxMaterializedBytes).
	MaxBytes int64
}

// ErrWriteLimit is the error (in the chain of an Exec's error) of
// statements that grew the database past Write.MaxBytes.
var ErrWriteLimit = errors.New("driver: the statements wrote past their byte limit")

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

// Bounds are the limits of one Query, which an executor always enforces.
// The zero Bounds reads every row without a limit of time but ctx's.
type Bounds struct {
	// MaxRows ends the statement after that many rows; 0 reads every row.
	// An engine that computes rows only as they are read (StopsEarly) then
	// stops working as it would at a LIMIT.
	MaxRows int
	// MaxBytes bounds the rows read, as RowBytes weighs them: once they
	// weigh more, the query is ended and the error wraps
	// ErrResultTooLarge. 0 means no bound.
	MaxBytes int64
	// Timeout is the query's time limit, which ctx's deadline carries too,
	// for the executor to pass on to the engine (engine.Guard), so that a
	// server stops the query itself rather than only when its client
	// gives up; 0 means none.
	Timeout time.Duration
}

// ErrResultTooLarge is wrapped by the error of a Query whose rows exceeded
// Bounds.MaxBytes. The Service answers it with an *endpoint.Error of code
// endpoint.CodeResultTooLarge.
var ErrResultTooLarge = errors.New("driver: result exceeds its byte limit")

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

// BoundContext returns ctx with a deadline timeout from now when timeout
// is set and ctx has none as near, so that an executor ends a statement at
// Bounds.Timeout even when its caller set no deadline (the Service sets
// one already). Call cancel when the statement is done.
func BoundContext(ctx context.Context, timeout time.Duration) (bounded context.Context, cancel context.CancelFunc) {
	if timeout <= 0 {
		return ctx, func() {}
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, timeout)
}
