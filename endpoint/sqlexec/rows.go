package sqlexec

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"fmt"
	"io"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// QueryRows implements driver.RowQuerier: Query, with each row handed to
// sink as it is scanned rather than kept, one row's values reused for the
// next. The bounds are enforced where Query enforces them; b.MaxBytes by
// weighing each row before it is handed over.
func (e *Executor) QueryRows(ctx context.Context, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
	if sink == nil {
		return nil, fmt.Errorf("sqlexec: QueryRows without a sink")
	}
	return e.Query(context.WithValue(ctx, sinkKey{}, sink), st, b)
}

type sinkKey struct{}

// sinkOf is the sink a QueryRows call put in ctx, nil for a Query.
func sinkOf(ctx context.Context) driver.RowSink {
	s, _ := ctx.Value(sinkKey{}).(driver.RowSink)
	return s
}

// readEach is read for QueryRows: the rows handed to sink, none kept.
func (e *Executor) readEach(ctx context.Context, rows *sql.Rows, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, fmt.Errorf("sqlexec: column types: %w", err)
	}
	res := &driver.Result{Columns: make([]string, len(cts)), Types: make([]string, len(cts))}
	for i, ct := range cts {
		res.Columns[i] = ct.Name()
		res.Types[i] = e.typeName(ct.DatabaseTypeName())
	}
	if err := sink.Columns(res.Columns, res.Types); err != nil {
		return nil, err
	}
	row := make([]any, len(cts))
	cells := make([]cell, len(cts))
	dest := make([]any, len(cts))
	for i := range cells {
		cells[i].v = &row[i]
		dest[i] = &cells[i]
	}
	lim := limiter{b: b}
	for lim.more() && rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("sqlexec: scan: %w", err)
		}
		if err := lim.add(row); err != nil {
			return nil, err
		}
		if err := sink.Row(row); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlexec: rows: %w", err)
	}
	return res, ctxDone(ctx)
}

// readDriverEach is readDriver for QueryRows.
func (e *Executor) readDriverEach(ctx context.Context, rows sqldriver.Rows, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
	defer rows.Close()
	names := rows.Columns()
	res := &driver.Result{Columns: append([]string(nil), names...), Types: make([]string, len(names))}
	if tn, ok := rows.(sqldriver.RowsColumnTypeDatabaseTypeName); ok {
		for i := range res.Types {
			res.Types[i] = e.typeName(tn.ColumnTypeDatabaseTypeName(i))
		}
	}
	if err := sink.Columns(res.Columns, res.Types); err != nil {
		return nil, err
	}
	done := ctx.Done()
	dest := make([]sqldriver.Value, len(names))
	row := make([]any, len(names))
	lim := limiter{b: b}
	for lim.more() {
		select {
		case <-done:
			return nil, fmt.Errorf("sqlexec: %w", ctx.Err())
		default:
		}
		if err := rows.Next(dest); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("sqlexec: rows: %w", err)
		}
		for i, v := range dest {
			row[i] = resultValue(v)
		}
		if err := lim.add(row); err != nil {
			return nil, err
		}
		if err := sink.Row(row); err != nil {
			return nil, err
		}
	}
	return res, ctxDone(ctx)
}

// ctxDone is finish's check for QueryRows: rows ended by ctx are not a
// whole answer.
func ctxDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlexec: %w", err)
	}
	return nil
}

// limiter counts the rows handed over against b.MaxRows and their bytes
// against b.MaxBytes, as rowBlocks does for Query.
type limiter struct {
	b    driver.Bounds
	rows int
	size int64
}

func (l *limiter) more() bool { return l.b.MaxRows <= 0 || l.rows < l.b.MaxRows }

func (l *limiter) add(row []any) error {
	l.rows++
	if l.b.MaxBytes > 0 {
		if l.size += driver.RowBytes(row); l.size > l.b.MaxBytes {
			return fmt.Errorf("sqlexec: %w (%d bytes)", driver.ErrResultTooLarge, l.b.MaxBytes)
		}
	}
	return nil
}
