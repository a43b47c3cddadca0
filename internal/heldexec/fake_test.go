package heldexec

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	heldThenReleased(t, x, func() error {
		_, err := x.Query(context.Background(), query("SELECT 1"), driver.Bounds{})
		return err
	}, nil)
	assert.Equal(t, 1, entered)
	assert.Equal(t, 1, left)
}

// TestHoldOnly: with HoldOnly, Hold holds the chosen queries only; the
// others answer while those wait, and Release lets them go.
func TestHoldOnly(t *testing.T) {
	x := NewFake(sqlexec.New(testdb.SQLite(t), engine.SQLite), Held(1), HoldOnly(SQLContains("held")))
	heldThenReleased(t, x, func() error {
		_, err := x.Query(context.Background(), query("SELECT 'held'"), driver.Bounds{})
		return err
	}, func() {
		res, err := x.Query(context.Background(), query("SELECT 'free'"), driver.Bounds{})
		require.NoError(t, err, "a query HoldOnly does not choose passes while another is held")
		assert.Equal(t, [][]any{{"free"}}, res.Rows)
	})
}

// heldThenReleased holds x and runs run, which queries it, apart; once
// the query is held it calls meanwhile (when not nil), checks that the
// held query has not ended, releases x, and requires run's answer.
func heldThenReleased(t *testing.T, x *Fake, run func() error, meanwhile func()) {
	t.Helper()
	x.Hold()
	done := make(chan error, 1)
	go func() { done <- run() }()
	select {
	case <-x.Started:
	case err := <-done:
		require.FailNow(t, "the query was not held", "it ended: %v", err)
	}
	if meanwhile != nil {
		meanwhile()
	}
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

// keptSink keeps the columns and a copy of each row a stream hands it.
type keptSink struct {
	columns []string
	rows    [][]any
}

func (k *keptSink) Columns(names, _ []string) error { k.columns = names; return nil }
func (k *keptSink) Row(row []any) error {
	k.rows = append(k.rows, append([]any(nil), row...))
	return nil
}

// TestRowFake: a RowFake streams the inner executor's rows to the sink
// and records the stream apart from the queries, with the rows it handed
// over, counted as they go; Fail and Read apply to streams, and with
// Answer it streams Answer's rows. A plain Fake is no RowQuerier.
func TestRowFake(t *testing.T) {
	var plain driver.Executor = NewFake(nil)
	_, streams := plain.(driver.RowQuerier)
	assert.False(t, streams, "a Fake does not stream: a Service reads its answers with Query")

	boom := errors.New("code: 53")
	x := NewRowFake(sqlexec.New(testdb.SQLite(t), engine.SQLite), Fail(boom, SQLContains("broken")), Read(3, 30))
	var _ driver.RowQuerier = x
	sink := &keptSink{}
	var seen []int64
	counting := rowsSeen{sink, x, &seen}
	res, err := x.QueryRows(context.Background(), query("SELECT 1 AS n UNION ALL SELECT 2 UNION ALL SELECT ?", 3), driver.Bounds{MaxRows: 10}, counting)
	require.NoError(t, err)
	assert.Equal(t, []string{"n"}, sink.columns)
	assert.Equal(t, [][]any{{int64(1)}, {int64(2)}, {int64(3)}}, sink.rows)
	assert.Equal(t, []int64{1, 2, 3}, seen, "RowsHanded counts each row as it is handed over")
	assert.Empty(t, res.Rows)
	require.NotNil(t, res.RowsRead)
	assert.EqualValues(t, 3, *res.RowsRead)
	assert.Zero(t, x.Queries(), "a stream is no Query")
	assert.Empty(t, x.Calls())
	require.Len(t, x.Streams(), 1)
	assert.Equal(t, Call{SQL: "SELECT 1 AS n UNION ALL SELECT 2 UNION ALL SELECT ?", Args: []any{3},
		Bounds: driver.Bounds{MaxRows: 10}, Rows: 3}, x.Streams()[0])

	_, err = x.QueryRows(context.Background(), query("SELECT 'broken'"), driver.Bounds{}, &keptSink{})
	assert.ErrorIs(t, err, boom)
	assert.Len(t, x.Streams(), 2, "a failed stream is recorded too")
	_, err = x.Query(context.Background(), query("SELECT 1"), driver.Bounds{})
	require.NoError(t, err)
	assert.Equal(t, 1, x.Queries())
	assert.EqualValues(t, 3, x.RowsHanded())
	x.Reset()
	assert.Zero(t, x.Queries())
	assert.Empty(t, x.Streams())
	assert.Zero(t, x.RowsHanded())

	answered := NewRowFake(nil, Answer(&driver.Result{Columns: []string{"a"}, Rows: [][]any{{"x"}, {"y"}}}))
	sink = &keptSink{}
	_, err = answered.QueryRows(context.Background(), query("SELECT a FROM t"), driver.Bounds{}, sink)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, sink.columns)
	assert.Equal(t, [][]any{{"x"}, {"y"}}, sink.rows)
	assert.EqualValues(t, 2, answered.RowsHanded())
}

// rowsSeen is a sink that notes, at each row, how many rows the fake had
// counted as handed over.
type rowsSeen struct {
	*keptSink
	x    *RowFake
	seen *[]int64
}

func (r rowsSeen) Row(row []any) error {
	*r.seen = append(*r.seen, r.x.RowsHanded())
	return r.keptSink.Row(row)
}

// TestRowFakeHeld: Hold holds a stream as it holds a query, until
// Release.
func TestRowFakeHeld(t *testing.T) {
	x := NewRowFake(nil, Answer(&driver.Result{Columns: []string{"n"}, Rows: [][]any{{1}}}), Held(1))
	heldThenReleased(t, x.Fake, func() error {
		_, err := x.QueryRows(context.Background(), query("SELECT 1"), driver.Bounds{}, &keptSink{})
		return err
	}, nil)
	assert.EqualValues(t, 1, x.RowsHanded())
}

// TestRewrite: Rewrite changes every answer of Query before it is
// returned and recorded.
func TestRewrite(t *testing.T) {
	x := NewFake(sqlexec.New(testdb.SQLite(t), engine.SQLite), Rewrite(func(res *driver.Result) {
		for i := range res.Types {
			res.Types[i] = ""
		}
		res.Rows = append(res.Rows, []any{"added"})
	}))
	res, err := x.Query(context.Background(), query("SELECT 1 AS n"), driver.Bounds{})
	require.NoError(t, err)
	assert.Equal(t, []string{""}, res.Types)
	assert.Equal(t, [][]any{{int64(1)}, {"added"}}, res.Rows)
	assert.Equal(t, 2, x.Last().Rows, "the call records the rewritten answer")
}

// TestEachStatement: outside a transaction the hook sees each statement in
// order and run runs it alone (done once run returns); a hook's error is
// Exec's and stops the statements after it. In a transaction run goes on
// to the next statement's hook, the last one's runs them all at once, and
// every run returns the transaction's error (nothing of it kept).
func TestEachStatement(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("disk I/O error")
	var log []string
	var x *Fake
	count := func() any {
		res, err := x.Query(ctx, query("SELECT count(*) FROM t"), driver.Bounds{})
		if err != nil {
			return err.Error()
		}
		return res.Rows[0][0]
	}
	x = NewFake(sqlexec.New(testdb.SQLite(t), engine.SQLite), EachStatement(func(_ context.Context, st driver.Statement, run func() error) error {
		if strings.Contains(st.SQL(), "fail") {
			log = append(log, "failed "+st.SQL())
			return boom
		}
		log = append(log, "before "+st.SQL())
		err := run()
		log = append(log, fmt.Sprintf("after %s: %v, %v", st.SQL(), err, count()))
		return err
	}))
	require.NoError(t, x.Exec(ctx, stmts("CREATE TABLE t (n INTEGER)", "INSERT INTO t VALUES (1)"), driver.Write{}))
	assert.Equal(t, []string{
		"before CREATE TABLE t (n INTEGER)", "after CREATE TABLE t (n INTEGER): <nil>, 0",
		"before INSERT INTO t VALUES (1)", "after INSERT INTO t VALUES (1): <nil>, 1",
	}, log)

	log = nil
	assert.ErrorIs(t, x.Exec(ctx, stmts("INSERT INTO t VALUES (2)", "SELECT 'fail'", "INSERT INTO t VALUES (3)"), driver.Write{}), boom)
	assert.Equal(t, []string{"before INSERT INTO t VALUES (2)", "after INSERT INTO t VALUES (2): <nil>, 2", "failed SELECT 'fail'"}, log,
		"the statement after a failed hook does not run")

	log = nil
	require.NoError(t, x.Exec(ctx, stmts("INSERT INTO t VALUES (4)", "INSERT INTO t VALUES (5)"), driver.Write{Tx: true}))
	assert.Equal(t, []string{
		"before INSERT INTO t VALUES (4)", "before INSERT INTO t VALUES (5)",
		"after INSERT INTO t VALUES (5): <nil>, 4", "after INSERT INTO t VALUES (4): <nil>, 4",
	}, log, "in a transaction every run returns once all of it ran")

	log = nil
	err := x.Exec(ctx, stmts("INSERT INTO t VALUES (6)", "INSERT INTO missing VALUES (7)"), driver.Write{Tx: true})
	require.Error(t, err)
	require.Len(t, log, 4)
	assert.Contains(t, log[2], "no such table", "the last run returns the transaction's error")
	assert.Contains(t, log[3], "no such table", "and so does every run")
	assert.EqualValues(t, 4, count(), "the failed transaction kept nothing")
}

// TestHoldExec: with HoldExec, Hold holds the chosen statements of Exec
// before they run (the others run, and queries answer, meanwhile), until
// Release.
func TestHoldExec(t *testing.T) {
	ctx := context.Background()
	x := NewFake(sqlexec.New(testdb.SQLite(t), engine.SQLite), Held(1), HoldExec(SQLContains("INSERT")))
	require.NoError(t, x.Exec(ctx, stmts("CREATE TABLE t (n INTEGER)"), driver.Write{}))
	count := func() any {
		res, err := x.Query(ctx, query("SELECT count(*) FROM t"), driver.Bounds{})
		require.NoError(t, err, "a query passes while a statement is held")
		return res.Rows[0][0]
	}
	heldThenReleased(t, x, func() error {
		return x.Exec(ctx, stmts("CREATE TABLE u (n INTEGER)", "INSERT INTO t VALUES (1)"), driver.Write{})
	}, func() {
		assert.EqualValues(t, 0, count(), "the held statement has not run")
		_, err := x.Query(ctx, query("SELECT count(*) FROM u"), driver.Bounds{})
		assert.NoError(t, err, "the statement before it ran")
	})
	assert.EqualValues(t, 1, count())

	x.Hold()
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- x.Exec(cctx, stmts("INSERT INTO t VALUES (2)"), driver.Write{Tx: true}) }()
	select {
	case <-x.Started:
	case err := <-done:
		require.FailNow(t, "the statement was not held", "it ended: %v", err)
	}
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled, "a held statement ends with its context")
	x.Release()
	assert.EqualValues(t, 1, count())
}

func stmts(sqls ...string) []driver.Statement {
	var out []driver.Statement
	for _, s := range sqls {
		out = append(out, query(s))
	}
	return out
}
