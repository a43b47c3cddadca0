package endpoint

import (
	"context"

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
