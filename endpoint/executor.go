package endpoint

import (
	"context"

	"github.com/endpointkit/endpointkit/placeholder"
)

// Executor runs SQL against the analytics database.
//
// Guidelines for implementers: the query text comes with bind markers in the
// style of Dialect() and every value in args; never interpolate args into the
// text. Honour ctx cancellation and deadlines (return an error wrapping
// context.DeadlineExceeded on timeout). Errors may carry engine detail; the
// Service logs nothing and shows callers a generic message. Run the
// conformance suite in package endpoint/executortest against every
// implementation.
type Executor interface {
	// Dialect is the SQL dialect of the engine.
	Dialect() placeholder.Dialect
	// Query runs a statement that returns rows.
	Query(ctx context.Context, query string, args []any) (*Result, error)
	// Exec runs a statement that returns no rows (materialization writes).
	Exec(ctx context.Context, query string, args []any) error
}

// Result is a query's answer: column names, their database types, and the
// rows as arrays in column order.
type Result struct {
	Columns []string
	Types   []string
	Rows    [][]any
}
