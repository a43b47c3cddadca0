package executortest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/placeholder"
)

// ErrSinkStopped is the error a Sink with StopAt returns from Row.
var ErrSinkStopped = errors.New("executortest: the sink stopped")

// Sink is a driver.RowSink that keeps what it is handed, for an
// implementation's own tests of QueryRows as for the suite's.
type Sink struct {
	Names, Types []string // as given to Columns
	Rows         [][]any  // copies of the rows given to Row, in order
	StopAt       int      // > 0: Row returns ErrSinkStopped when StopAt rows are kept
	rowsBefore   []int    // len(Rows) at each Columns call
}

// Columns keeps names and types.
func (s *Sink) Columns(names, types []string) error {
	s.rowsBefore = append(s.rowsBefore, len(s.Rows))
	s.Names, s.Types = names, types
	return nil
}

// Row keeps a copy of row ([]byte values copied too, as the contract asks
// of a sink that keeps them), or returns ErrSinkStopped at StopAt.
func (s *Sink) Row(row []any) error {
	if s.StopAt > 0 && len(s.Rows) == s.StopAt {
		return ErrSinkStopped
	}
	kept := make([]any, len(row))
	for i, v := range row {
		if b, ok := v.([]byte); ok {
			v = append([]byte(nil), b...)
		}
		kept[i] = v
	}
	s.Rows = append(s.Rows, kept)
	return nil
}

// queryRows calls rq.QueryRows within b into a new Sink, failing t if it
// panics.
func queryRows(t *testing.T, rq driver.RowQuerier, q string, args []any, b driver.Bounds, stopAt int) (s *Sink, res *driver.Result, err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("QueryRows(%q) panicked: %v", q, p)
		}
	}()
	s = &Sink{StopAt: stopAt}
	res, err = rq.QueryRows(context.Background(), stmt.New(q, args), b, s)
	return s, res, err
}

// testQueryRows: an executor that is a driver.RowQuerier hands over, through
// QueryRows, the rows Query answers, in order, after the columns (given
// once, with a type each), and returns the columns and no rows; it holds
// Bounds.MaxRows and Bounds.MaxBytes as Query does (ErrResultTooLarge, the
// row past the bound not handed over), ends with the sink's error, answers
// no rows with the columns and no error, returns the engine's errors, and
// is usable after each (rows left unread must not hold a connection).
func testQueryRows(t *testing.T, x driver.Executor, f Fixture) {
	rq, ok := x.(driver.RowQuerier)
	if !ok {
		t.Skip("the executor is not a driver.RowQuerier")
	}
	tb := filledTable(t, x, f)
	q, args := tb.selectAll(t)
	all := mustQuery(t, x, q, args)
	wantRows(t, "Query", all.Rows, len(fixtureRows))

	s, res, err := queryRows(t, rq, q, args, driver.Bounds{}, 0)
	require.NoError(t, err, "QueryRows(%q)", q)
	require.NotNil(t, res, "QueryRows(%q) returned a nil result and no error", q)
	assert.Equal(t, []int{0}, s.rowsBefore, "Columns is called once, before the first row")
	assert.Equal(t, all.Columns, s.Names, "the columns given to the sink")
	assert.Len(t, s.Types, len(all.Columns), "a type for each column")
	assert.Equal(t, all.Columns, res.Columns, "the result's columns")
	assert.Empty(t, res.Rows, "the rows are the sink's, not the result's")
	wantRows(t, "QueryRows", s.Rows, len(fixtureRows))

	for _, max := range []int{1, 2} {
		s, _, err := queryRows(t, rq, q, args, driver.Bounds{MaxRows: max}, 0)
		require.NoError(t, err, "QueryRows(%q) with MaxRows %d", q, max)
		wantRows(t, "QueryRows with MaxRows", s.Rows, max)
	}

	firstTwo := driver.RowBytes(all.Rows[0]) + driver.RowBytes(all.Rows[1])
	s, _, err = queryRows(t, rq, q, args, driver.Bounds{MaxBytes: firstTwo}, 0)
	require.ErrorIs(t, err, driver.ErrResultTooLarge, "QueryRows(%q) with MaxBytes %d, the weight of its first 2 rows", q, firstTwo)
	wantRows(t, "QueryRows past MaxBytes (the row past the bound not handed over)", s.Rows, 2)

	s, _, err = queryRows(t, rq, q, args, driver.Bounds{}, 1)
	require.ErrorIs(t, err, ErrSinkStopped, "QueryRows(%q) into a sink that stops at its second row", q)
	wantRows(t, "QueryRows into a stopping sink", s.Rows, 1)

	none, noneArgs := tb.sql(t, func(b *placeholder.Builder, table string) {
		b.WriteString("SELECT id, name FROM " + table + " WHERE id > ")
		b.Bind(int64(1 << 62))
	})
	s, res, err = queryRows(t, rq, none, noneArgs, driver.Bounds{}, 0)
	require.NoError(t, err, "QueryRows(%q), which matches no row", none)
	assert.Equal(t, []string{"id", "name"}, s.Names, "the columns of an answer of no rows")
	assert.Equal(t, []string{"id", "name"}, res.Columns, "the result's columns of an answer of no rows")
	assert.Empty(t, s.Rows)

	bad := "SELECT no_such_column FROM " + tb.d.QuoteIdent(tb.name)
	_, _, err = queryRows(t, rq, bad, nil, driver.Bounds{}, 0)
	require.Error(t, err, "QueryRows(%q)", bad)

	// Every run above ended early or failed on a pool that may hold one
	// connection: the executor still reads.
	wantRows(t, "Query after the QueryRows runs", mustQuery(t, x, q, args).Rows, len(fixtureRows))
}
