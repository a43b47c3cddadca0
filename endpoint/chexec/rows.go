package chexec

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

var _ driver.RowQuerier = (*Executor)(nil)

// QueryRows implements driver.RowQuerier: Query, with each row handed to
// sink as clickhouse-go reads it from the server's blocks rather than
// kept, the scan targets and the row reused. The bounds are enforced
// where Query enforces them: b.MaxRows and b.MaxBytes by the executor
// (each row weighed before it is handed over) and the server,
// b.Timeout by the server. A sink that stops the rows closes the rest of
// the stream.
func (x *Executor) QueryRows(ctx context.Context, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
	if sink == nil {
		return nil, errors.New("chexec: QueryRows without a sink")
	}
	ctx, cancel := driver.BoundContext(ctx, b.Timeout)
	defer cancel()
	r, err := x.RequestBounded(ctx, st.SQL(), st.Args(), b)
	if err != nil {
		return nil, err
	}
	rows, err := x.conn.Query(r.context(ctx), st.SQL())
	if err != nil {
		return nil, queryError(err)
	}
	defer rows.Close()
	cts := rows.ColumnTypes()
	res := &driver.Result{Columns: rows.Columns(), Types: make([]string, len(cts))}
	for i, ct := range cts {
		res.Types[i] = ct.DatabaseTypeName()
	}
	if err := sink.Columns(res.Columns, res.Types); err != nil {
		return nil, err
	}
	dest := make([]any, len(cts))
	for i, ct := range cts {
		dest[i] = reflect.New(ct.ScanType()).Interface()
	}
	row := make([]any, len(cts))
	var n int
	var size int64
	for (b.MaxRows <= 0 || n < b.MaxRows) && rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("chexec: scan: %w", err)
		}
		for i, d := range dest {
			row[i] = plain(reflect.ValueOf(d).Elem())
		}
		if size += driver.RowBytes(row); b.MaxBytes > 0 && size > b.MaxBytes {
			return nil, fmt.Errorf("chexec: %w: more than %d bytes", driver.ErrResultTooLarge, b.MaxBytes)
		}
		n++
		if err := sink.Row(row); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, queryError(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("chexec: %w", err)
	}
	return res, nil
}
