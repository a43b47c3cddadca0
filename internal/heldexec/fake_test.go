package heldexec

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
)

func query(sql string, args ...any) driver.Statement { return stmt.New(sql, args) }

// TestRecordsOverARealExecutor: the fake passes queries to the inner
// executor and records each (text, arguments, bounds, deadline, rows).
func TestRecordsOverARealExecutor(t *testing.T) {
	x := NewFake(sqlexec.New(testdb.SQLite(t), engine.SQLite))
	assert.Equal(t, engine.SQLite, x.Engine())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := x.Query(ctx, query("SELECT ? UNION ALL SELECT 2", 1), driver.Bounds{MaxRows: 10})
	require.NoError(t, err)
	require.Len(t, res.Rows, 2)
	assert.Equal(t, 1, x.Queries())
	last := x.Last()
	assert.Equal(t, "SELECT ? UNION ALL SELECT 2", last.SQL)
	assert.Equal(t, []any{1}, last.Args)
	assert.Equal(t, 10, last.Bounds.MaxRows)
	assert.False(t, last.Deadline.IsZero())
	assert.Equal(t, 2, last.Rows)
	x.Reset()
	assert.Zero(t, x.Queries())
	assert.Empty(t, x.Calls())
}

// TestAnswerAndFail: a fixed answer without an inner executor; a failure
// for the chosen statements only, and for Exec when it chooses all.
func TestAnswerAndFail(t *testing.T) {
	boom := errors.New("code: 53")
	x := NewFake(nil, Answer(&driver.Result{Columns: []string{"n"}, Rows: [][]any{{1}}}),
		Fail(boom, SQLContains("endpointkit_mat_")), OnEngine(engine.ClickHouse))
	assert.Equal(t, engine.ClickHouse, x.Engine())
	res, err := x.Query(context.Background(), query("SELECT n FROM t"), driver.Bounds{})
	require.NoError(t, err)
	assert.Equal(t, []string{"n"}, res.Columns)
	_, err = x.Query(context.Background(), query("SELECT n FROM endpointkit_mat_1"), driver.Bounds{})
	assert.ErrorIs(t, err, boom)
	assert.NoError(t, x.Exec(context.Background(), nil, driver.Write{}))

	all := NewFake(nil, Fail(boom, nil))
	_, err = all.Query(context.Background(), query("SELECT 1"), driver.Bounds{})
	assert.ErrorIs(t, err, boom)
	assert.ErrorIs(t, all.Exec(context.Background(), nil, driver.Write{}), boom)

	_, err = NewFake(nil).Query(context.Background(), query("SELECT 1"), driver.Bounds{})
	assert.ErrorContains(t, err, "no inner executor")
}

// TestWaitHoldAround: WaitForCancel ends with the context; a held query
// waits for Release; Around's hooks see every query.
func TestWaitHoldAround(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewFake(nil, WaitForCancel()).Query(ctx, query("SELECT 1"), driver.Bounds{})
	assert.ErrorIs(t, err, context.Canceled)

	var entered, left int
	x := NewFake(nil, Answer(&driver.Result{}), Held(1), Around(
		func(context.Context) { entered++ }, func(context.Context) { left++ }))
	x.Hold()
	done := make(chan error)
	go func() {
		_, err := x.Query(context.Background(), query("SELECT 1"), driver.Bounds{})
		done <- err
	}()
	<-x.Started
	select {
	case <-done:
		t.Fatal("a held query ended before Release")
	case <-time.After(20 * time.Millisecond):
	}
	x.Release()
	require.NoError(t, <-done)
	assert.Equal(t, 1, entered)
	assert.Equal(t, 1, left)
}

// TestHoldOnly: with HoldOnly, Hold holds the chosen queries only; the
// others answer while those wait, and Release lets them go.
func TestHoldOnly(t *testing.T) {
	x := NewFake(sqlexec.New(testdb.SQLite(t), engine.SQLite), Held(1), HoldOnly(SQLContains("held")))
	x.Hold()
	done := make(chan error, 1)
	go func() {
		_, err := x.Query(context.Background(), query("SELECT 'held'"), driver.Bounds{})
		done <- err
	}()
	<-x.Started
	res, err := x.Query(context.Background(), query("SELECT 'free'"), driver.Bounds{})
	require.NoError(t, err, "a query HoldOnly does not choose passes while another is held")
	assert.Equal(t, [][]any{{"free"}}, res.Rows)
	select {
	case err := <-done:
		t.Fatalf("the held query ended before Release: %v", err)
	default:
	}
	x.Release()
	require.NoError(t, <-done)
}

// TestBeforeExec: BeforeExec sees every Exec's statements first, and its
// error is Exec's, the statements not run.
func TestBeforeExec(t *testing.T) {
	db := testdb.SQLite(t)
	boom := errors.New("disk I/O error")
	var fail bool
	var seen []string
	x := NewFake(sqlexec.New(db, engine.SQLite), BeforeExec(func(_ context.Context, stmts []driver.Statement) error {
		for _, st := range stmts {
			seen = append(seen, st.SQL())
		}
		if fail {
			return boom
		}
		return nil
	}))
	require.NoError(t, x.Exec(context.Background(), []driver.Statement{query("CREATE TABLE t (n INTEGER)")}, driver.Write{}))
	fail = true
	assert.ErrorIs(t, x.Exec(context.Background(), []driver.Statement{query("INSERT INTO t VALUES (1)")}, driver.Write{}), boom)
	assert.Equal(t, []string{"CREATE TABLE t (n INTEGER)", "INSERT INTO t VALUES (1)"}, seen)
	res, err := x.Query(context.Background(), query("SELECT count(*) FROM t"), driver.Bounds{})
	require.NoError(t, err)
	assert.EqualValues(t, 0, res.Rows[0][0], "the failed Exec ran nothing")
}

// TestUnrecorded: an unrecorded fake counts its queries and keeps none.
func TestUnrecorded(t *testing.T) {
	x := NewFake(nil, Answer(&driver.Result{}), Unrecorded())
	for range 3 {
		_, err := x.Query(context.Background(), query("SELECT 1"), driver.Bounds{})
		require.NoError(t, err)
	}
	assert.Equal(t, 3, x.Queries())
	assert.Empty(t, x.Calls())
	assert.Equal(t, Call{}, x.Last())
}

// TestReadAndWaitWhen: Read makes every answer report what the engine
// read, SetRead changes it; WaitForCancelWhen holds the chosen queries
// only, until their context ends.
func TestReadAndWaitWhen(t *testing.T) {
	x := NewFake(nil, Answer(&driver.Result{}), Read(6, 60))
	res, err := x.Query(context.Background(), query("SELECT 1"), driver.Bounds{})
	require.NoError(t, err)
	require.NotNil(t, res.RowsRead)
	require.NotNil(t, res.BytesRead)
	assert.EqualValues(t, 6, *res.RowsRead)
	assert.EqualValues(t, 60, *res.BytesRead)
	x.SetRead(7, 70)
	res, err = x.Query(context.Background(), query("SELECT 1"), driver.Bounds{})
	require.NoError(t, err)
	assert.EqualValues(t, 7, *res.RowsRead)
	assert.EqualValues(t, 70, *res.BytesRead)
	res, err = NewFake(nil, Answer(&driver.Result{})).Query(context.Background(), query("SELECT 1"), driver.Bounds{})
	require.NoError(t, err)
	assert.Nil(t, res.RowsRead, "without Read an answer reports no read")

	w := NewFake(nil, Answer(&driver.Result{}), WaitForCancelWhen(SQLContains("slow")))
	_, err = w.Query(context.Background(), query("SELECT 'fast'"), driver.Bounds{})
	require.NoError(t, err, "a query WaitForCancelWhen does not choose answers")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = w.Query(ctx, query("SELECT 'slow'"), driver.Bounds{})
	assert.ErrorIs(t, err, context.Canceled)
}
