package chexec

import (
	"context"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/executortest"
	"github.com/endpointkit/endpointkit/internal/stmt"
)

// TestQueryRows: the executor hands the rows over as it reads them (a
// driver.RowQuerier, so that CSV, NDJSON and Parquet answers from
// ClickHouse stream), within Bounds.MaxRows and Bounds.MaxBytes as Query
// reads them, the sink's error ending the rows, the server's errors as
// Query's.
func TestQueryRows(t *testing.T) {
	ctx := context.Background()
	x := New(&answering{values: []string{"aaaa", "bbbb", "cccc"}}, nil)
	var rq driver.RowQuerier = x

	k := &executortest.Sink{}
	res, err := rq.QueryRows(ctx, stmt.New("SELECT s", nil), driver.Bounds{}, k)
	require.NoError(t, err)
	assert.Equal(t, [][]any{{"aaaa"}, {"bbbb"}, {"cccc"}}, k.Rows)
	assert.Equal(t, []string{"s"}, k.Names)
	assert.Equal(t, []string{"String"}, k.Types)
	assert.Empty(t, res.Rows, "the rows are the sink's, not the result's")
	assert.Equal(t, []string{"String"}, res.Types)

	k = &executortest.Sink{}
	_, err = rq.QueryRows(ctx, stmt.New("SELECT s", nil), driver.Bounds{MaxRows: 2}, k)
	require.NoError(t, err)
	assert.Len(t, k.Rows, 2)

	row := driver.RowBytes([]any{"aaaa"})
	k = &executortest.Sink{}
	_, err = rq.QueryRows(ctx, stmt.New("SELECT s", nil), driver.Bounds{MaxBytes: 2*row + 1}, k)
	require.ErrorIs(t, err, driver.ErrResultTooLarge)
	assert.Len(t, k.Rows, 2, "the row past the bound is not handed over")

	k = &executortest.Sink{StopAt: 1}
	_, err = rq.QueryRows(ctx, stmt.New("SELECT s", nil), driver.Bounds{}, k)
	require.ErrorIs(t, err, executortest.ErrSinkStopped)
	assert.Len(t, k.Rows, 1)

	server := New(&answering{err: &clickhouse.Exception{Code: 396, Message: "Limit for result exceeded"}}, nil)
	_, err = server.QueryRows(ctx, stmt.New("SELECT s", nil), driver.Bounds{MaxBytes: 1000}, &executortest.Sink{})
	require.ErrorIs(t, err, driver.ErrResultTooLarge)
}
