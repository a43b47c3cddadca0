package chexec

import (
	"context"
	"errors"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/stmt"
)

// keepSink keeps the rows handed over; stopAt > 0 stops them at that row.
type keepSink struct {
	cols, types []string
	rows        [][]any
	stopAt      int
}

var errStop = errors.New("the sink stopped")

func (k *keepSink) Columns(names, types []string) error {
	k.cols, k.types = names, types
	return nil
}

func (k *keepSink) Row(row []any) error {
	if k.stopAt > 0 && len(k.rows) == k.stopAt {
		return errStop
	}
	k.rows = append(k.rows, append([]any(nil), row...))
	return nil
}

// TestQueryRows: the executor hands the rows over as it reads them (a
// driver.RowQuerier, so that CSV, NDJSON and Parquet answers from
// ClickHouse stream), within Bounds.MaxRows and Bounds.MaxBytes as Query
// reads them, the sink's error ending the rows, the server's errors as
// Query's.
func TestQueryRows(t *testing.T) {
	ctx := context.Background()
	x := New(&answering{values: []string{"aaaa", "bbbb", "cccc"}}, nil)
	var rq driver.RowQuerier = x

	k := &keepSink{}
	res, err := rq.QueryRows(ctx, stmt.New("SELECT s", nil), driver.Bounds{}, k)
	require.NoError(t, err)
	assert.Equal(t, [][]any{{"aaaa"}, {"bbbb"}, {"cccc"}}, k.rows)
	assert.Equal(t, []string{"s"}, k.cols)
	assert.Equal(t, []string{"String"}, k.types)
	assert.Empty(t, res.Rows, "the rows are the sink's, not the result's")
	assert.Equal(t, []string{"String"}, res.Types)

	k = &keepSink{}
	_, err = rq.QueryRows(ctx, stmt.New("SELECT s", nil), driver.Bounds{MaxRows: 2}, k)
	require.NoError(t, err)
	assert.Len(t, k.rows, 2)

	row := driver.RowBytes([]any{"aaaa"})
	k = &keepSink{}
	_, err = rq.QueryRows(ctx, stmt.New("SELECT s", nil), driver.Bounds{MaxBytes: 2*row + 1}, k)
	require.ErrorIs(t, err, driver.ErrResultTooLarge)
	assert.Len(t, k.rows, 2, "the row past the bound is not handed over")

	k = &keepSink{stopAt: 1}
	_, err = rq.QueryRows(ctx, stmt.New("SELECT s", nil), driver.Bounds{}, k)
	require.ErrorIs(t, err, errStop)
	assert.Len(t, k.rows, 1)

	server := New(&answering{err: &clickhouse.Exception{Code: 396, Message: "Limit for result exceeded"}}, nil)
	_, err = server.QueryRows(ctx, stmt.New("SELECT s", nil), driver.Bounds{MaxBytes: 1000}, &keepSink{})
	require.ErrorIs(t, err, driver.ErrResultTooLarge)
}
