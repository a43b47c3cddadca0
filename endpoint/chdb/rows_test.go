//go:build chdb

package chdb

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/executortest"
	"github.com/endpointkit/endpointkit/internal/stmt"
)

// streamSQL answers rows of many types, in many of the engine's blocks,
// some of whose strings are long, so that rows cross the stream's blocks.
const streamSQL = `SELECT number AS n, toString(number) AS s, repeat('x', number % 300) AS long,
	number / 7 AS f, if(number % 5 = 0, NULL, number) AS maybe, toDateTime(1700000000 + number, 'UTC') AS at,
	[number, number + 1] AS arr, {p1:String} AS p
	FROM numbers(200000)`

// TestQueryRowsAsQuery: QueryRows hands over the rows Query answers, in
// order, with the columns and types, reading chDB's answer as a stream
// (rows that cross the stream's blocks included), and its statistics.
func TestQueryRowsAsQuery(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	st := stmt.New(streamSQL, []any{"it's {p1}"})
	want, err := x.Query(ctx, st, driver.Bounds{})
	require.NoError(t, err)
	k := &executortest.Sink{}
	res, err := x.QueryRows(ctx, st, driver.Bounds{}, k)
	require.NoError(t, err)
	assert.Equal(t, want.Columns, k.Names)
	assert.Equal(t, want.Types, k.Types)
	assert.Equal(t, want.Columns, res.Columns)
	assert.Empty(t, res.Rows)
	require.Len(t, k.Rows, len(want.Rows))
	for i := range want.Rows {
		require.Equal(t, want.Rows[i], k.Rows[i], "row %d", i)
	}
	require.NotNil(t, res.RowsRead)
	assert.Positive(t, *res.RowsRead)
}

// TestQueryRowsBounds: QueryRows stops at Bounds.MaxRows, fails past
// Bounds.MaxBytes with driver.ErrResultTooLarge (the row past the bound
// not handed over), ends with the sink's error, and a stream stopped
// early leaves nothing of its answer to the next statement.
func TestQueryRowsBounds(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	st := stmt.New(streamSQL, []any{"p"})

	k := &executortest.Sink{}
	_, err := x.QueryRows(ctx, st, driver.Bounds{MaxRows: 70000}, k)
	require.NoError(t, err)
	assert.Len(t, k.Rows, 70000)

	all, err := x.Query(ctx, stmt.New(streamSQL+" LIMIT 1000", []any{"p"}), driver.Bounds{})
	require.NoError(t, err)
	var bound int64
	for _, r := range all.Rows[:500] {
		bound += driver.RowBytes(r)
	}
	k = &executortest.Sink{}
	_, err = x.QueryRows(ctx, st, driver.Bounds{MaxBytes: bound}, k)
	require.ErrorIs(t, err, driver.ErrResultTooLarge)
	assert.Len(t, k.Rows, 500)

	k = &executortest.Sink{StopAt: 3}
	_, err = x.QueryRows(ctx, st, driver.Bounds{}, k)
	require.ErrorIs(t, err, executortest.ErrSinkStopped)
	assert.Len(t, k.Rows, 3)

	res, err := x.Query(ctx, stmt.New("SELECT 'next' AS v", nil), driver.Bounds{})
	require.NoError(t, err)
	assert.Equal(t, [][]any{{"next"}}, res.Rows, "the next statement answers its own rows only")

	_, err = x.QueryRows(ctx, stmt.New("SELECT no_such_column FROM numbers(3)", nil), driver.Bounds{}, &executortest.Sink{})
	var qe *driver.QueryError
	assert.ErrorAs(t, err, &qe)
}

// TestQueryRowsEmpty: an answer of no rows, whose stream chDB ends before
// any block (a fetch then fails with "No active streaming query"), gives
// its columns and types and no rows, as Query does, and no error.
func TestQueryRowsEmpty(t *testing.T) {
	x := executor(t)
	ctx := context.Background()
	for _, q := range []string{
		"SELECT 1 AS one WHERE 0",
		"SELECT number AS n, toString(number) AS s FROM numbers(10) WHERE n > {p1:String}",
		"SELECT count(*) AS n FROM numbers(10) WHERE number > 100 GROUP BY number % 2",
	} {
		args := []any{}
		if strings.Contains(q, "p1") {
			args = []any{"20"}
		}
		want, err := x.Query(ctx, stmt.New(q, args), driver.Bounds{})
		require.NoError(t, err, q)
		k := &executortest.Sink{}
		res, err := x.QueryRows(ctx, stmt.New(q, args), driver.Bounds{}, k)
		require.NoError(t, err, q)
		assert.Empty(t, k.Rows, q)
		assert.Equal(t, want.Columns, k.Names, q)
		assert.Equal(t, want.Types, k.Types, q)
		assert.Equal(t, want.Columns, res.Columns, q)
	}
}
