package driver

import "context"

// RowSink takes the rows of a query as an executor reads them
// (RowQuerier.QueryRows), so that a long answer is written out as it is
// read instead of held whole.
type RowSink interface {
	// Columns is called once, before the first row, with the names of
	// the columns and their database types ("" where the driver does not
	// say). An error ends the query, which QueryRows returns.
	Columns(names, types []string) error
	// Row is called with each row, in order. The slice, and the values it
	// holds, are the executor's again once Row returns: a sink that keeps
	// a value copies it (a string is immutable and may be kept). An error
	// ends the query, which QueryRows returns.
	Row(row []any) error
}

// RowQuerier is an Executor that can hand a query's rows over one at a
// time. The Service uses it for the answers it streams (CSV, NDJSON and
// Parquet exports, Service.RunRows), and Query for every other.
//
// Guidelines for implementers: QueryRows is Query with the rows given to
// sink instead of kept. Every guideline of Executor.Query holds: the
// Bounds (at most MaxRows rows; ErrResultTooLarge as soon as the rows
// handed over weigh more than MaxBytes, as RowBytes weighs them, the row
// past the bound not handed over; Timeout), ctx, read-only, the errors.
// The values are those Query would answer. The Result returned has the
// columns, the types (those the driver names; Query may fill the rest from
// the values), RowsRead and BytesRead, and no Rows. An error after rows
// were handed over is returned as it is: the rows given stand, and the
// caller, which has written them, ends its answer with the error. Memory
// must not grow with the rows: keep none of them.
type RowQuerier interface {
	Executor
	// QueryRows runs a statement that returns rows, read-only and within
	// b, and hands each row to sink as it is read.
	QueryRows(ctx context.Context, st Statement, b Bounds, sink RowSink) (*Result, error)
}
