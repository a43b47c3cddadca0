package sqlexec

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	edriver "github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counts are the statements a counting driver prepared and closed.
type counts struct{ prepares, closes atomic.Int64 }

func (c *counts) open() int64 { return c.prepares.Load() - c.closes.Load() }

// countingConnector opens SQLite connections whose statements are counted.
// Its connections offer no QueryerContext, so that database/sql prepares
// every query through them, and an unprepared query counts as a prepare
// and a close. Statements without rows (the run guard's PRAGMAs) run
// unprepared and uncounted.
type countingConnector struct {
	drv driver.Driver
	dsn string
	c   *counts
}

func (k countingConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := k.drv.Open(k.dsn)
	if err != nil {
		return nil, err
	}
	return countingConn{conn, k.c}, nil
}

func (k countingConnector) Driver() driver.Driver { return k.drv }

type countingConn struct {
	driver.Conn
	c *counts
}

func (c countingConn) Prepare(q string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}

func (c countingConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	s, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.c.prepares.Add(1)
	return countingStmt{s, c.c}, nil
}

func (c countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c countingConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
}

func (c countingConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

type countingStmt struct {
	driver.Stmt
	c *counts
}

func (s countingStmt) Close() error {
	s.c.closes.Add(1)
	return s.Stmt.Close()
}

func (s countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}

func (s countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

// countingDB opens a SQLite file with a table t of ids 1 to 5 and counts
// the statements prepared on it; conns bounds its pool.
func countingDB(t *testing.T, conns int) (*sql.DB, *counts) {
	t.Helper()
	plain, dsn := sqliteFile(t, "stmts.db", "CREATE TABLE t (id INTEGER); INSERT INTO t VALUES (1), (2), (3), (4), (5)")
	c := &counts{}
	db := sql.OpenDB(countingConnector{plain.Driver(), dsn, c})
	db.SetMaxOpenConns(conns)
	t.Cleanup(func() { db.Close() })
	return db, c
}

func ids(t *testing.T, x *Executor, ctx context.Context, query string, args ...any) []int64 {
	t.Helper()
	res, err := x.Query(ctx, stmt.New(query, args), edriver.Bounds{})
	require.NoError(t, err, "%s", query)
	var out []int64
	for _, r := range res.Rows {
		out = append(out, r[0].(int64))
	}
	return out
}

// TestStatementsPreparedOnce: a query text is prepared once and then run
// as the same statement, with other values bound.
func TestStatementsPreparedOnce(t *testing.T) {
	db, c := countingDB(t, 1)
	x := New(db, engine.SQLite)
	ctx := context.Background()
	for i := int64(1); i <= 5; i++ {
		got := ids(t, x, ctx, "SELECT id FROM t WHERE id >= ? ORDER BY id", i)
		require.Len(t, got, int(6-i), "run %d: %v", i, got)
		require.Equal(t, i, got[0], "run %d: %v", i, got)
	}
	require.Equal(t, int64(1), c.prepares.Load(), "5 runs of one text prepared")
	require.NoError(t, x.Close())
	require.Equal(t, int64(0), c.open(), "Close left")
	// After Close queries still run, unprepared.
	require.Equal(t, []int64{3}, ids(t, x, ctx, "SELECT id FROM t WHERE id = ?", 3), "after Close")
	if n := c.open(); n != 0 || x.stmts.len() != 0 {
		t.Fatalf("a query after Close kept a statement: %d open, %d cached", n, x.stmts.len())
	}
}

// TestStatementsBounded: the cache keeps at most its bound, the least
// recently used going first, and closes what it evicts.
func TestStatementsBounded(t *testing.T) {
	db, c := countingDB(t, 1)
	x := New(db, engine.SQLite, WithStatements(2))
	ctx := context.Background()
	q := func(i int) string { return fmt.Sprintf("SELECT id FROM t WHERE id = %d", i) }
	ids(t, x, ctx, q(1))
	ids(t, x, ctx, q(2))
	ids(t, x, ctx, q(1)) // 1 becomes the most recent
	ids(t, x, ctx, q(3)) // evicts 2
	require.Equal(t, 2, x.stmts.len())
	require.Equal(t, int64(2), c.open())
	before := c.prepares.Load()
	ids(t, x, ctx, q(1))
	ids(t, x, ctx, q(3))
	n := c.prepares.Load() - before
	require.Equal(t, int64(0), n, "cached texts prepared again")
	ids(t, x, ctx, q(2))
	if n := c.prepares.Load() - before; n != 1 {
		t.Fatalf("the evicted text was prepared %d times, want 1", n)
	}
}

// TestStatementsOff: WithStatements(-1) keeps none.
func TestStatementsOff(t *testing.T) {
	db, c := countingDB(t, 1)
	x := New(db, engine.SQLite, WithStatements(-1))
	for range 3 {
		ids(t, x, context.Background(), "SELECT id FROM t")
	}
	if x.stmts != nil || c.prepares.Load() != 3 || c.open() != 0 {
		t.Fatalf("cache %v, %d prepared, %d open; want none kept", x.stmts, c.prepares.Load(), c.open())
	}
	require.NoError(t, x.Close())
}

// TestStatementsDroppedOnFailure: a statement whose run fails leaves the
// cache and is closed, so that the next run prepares it anew (it may have
// been prepared against a schema that changed).
func TestStatementsDroppedOnFailure(t *testing.T) {
	db, c := countingDB(t, 1)
	x := New(db, engine.SQLite)
	ctx := context.Background()
	const q = "SELECT json_extract(?, '$.a')"
	_, err := x.Query(ctx, stmt.New(q, []any{`{"a": 1}`}), edriver.Bounds{})
	require.NoError(t, err)
	if _, err := x.Query(ctx, stmt.New(q, []any{`{not json`}), edriver.Bounds{}); err == nil {
		t.Fatal("malformed JSON gave no error")
	}
	if x.stmts.len() != 0 || c.open() != 0 {
		t.Fatalf("after a failure: %d cached, %d open", x.stmts.len(), c.open())
	}
	// A text that does not prepare is not cached either.
	if _, err := x.Query(ctx, stmt.New("SELECT FROM nowhere", nil), edriver.Bounds{}); err == nil {
		t.Fatal("a syntax error gave no error")
	}
	if x.stmts.len() != 0 || c.open() != 0 {
		t.Fatalf("after a syntax error: %d cached, %d open", x.stmts.len(), c.open())
	}
}

// TestStatementsConcurrent: queries of more texts than the bound, from
// several goroutines on a pool of connections, all answer right while
// statements are evicted under them; nothing stays open after Close.
func TestStatementsConcurrent(t *testing.T) {
	db, c := countingDB(t, 4)
	x := New(db, engine.SQLite, WithStatements(3))
	ctx := context.Background()
	inParallel(t, 8, 60, func(w, i int) error {
		n := int64((w+i)%5 + 1)
		query := fmt.Sprintf("SELECT id, %d AS k FROM t WHERE id <= ? ORDER BY id", (w+i)%7)
		res, err := x.Query(ctx, stmt.New(query, []any{n}), edriver.Bounds{})
		if err == nil && len(res.Rows) != int(n) {
			err = fmt.Errorf("%s with %d: %d rows", query, n, len(res.Rows))
		}
		if err == nil && i%3 == 0 {
			res, err = x.Query(ctx, stmt.New(query, []any{int64(5)}), edriver.Bounds{MaxRows: 2})
			if err == nil && len(res.Rows) != 2 {
				err = fmt.Errorf("capped at 2: %d rows", len(res.Rows))
			}
		}
		return err
	})
	require.LessOrEqual(t, x.stmts.len(), 3)
	require.NoError(t, x.Close())
	require.Equal(t, int64(0), c.open())
}

// TestMaxRows: Query stops after Bounds.MaxRows rows, 0 reading them all,
// on a pool of one connection that each ended query gives back.
func TestMaxRows(t *testing.T) {
	db, _ := countingDB(t, 1)
	x := New(db, engine.SQLite)
	for _, tc := range []struct{ max, want int }{{1, 1}, {3, 3}, {5, 5}, {9, 5}, {0, 5}} {
		res, err := x.Query(context.Background(), stmt.New("SELECT id FROM t ORDER BY id", nil), edriver.Bounds{MaxRows: tc.max})
		require.NoError(t, err, "MaxRows %d: %v rows, %v; want %d", tc.max, res, err, tc.want)
		require.Len(t, res.Rows, tc.want, "MaxRows %d: %v rows, %v; want %d", tc.max, res, err, tc.want)
	}
}

// TestStatementHeldThroughEviction: a statement evicted while a query
// holds it stays open for that query and closes at its release, once;
// one evicted while held by none closes at once.
func TestStatementHeldThroughEviction(t *testing.T) {
	db, c := countingDB(t, 2)
	cache := newStmtCache(1)
	ctx := context.Background()
	lex := engine.SQLite.Lexical()
	a, _, err := cache.acquire(ctx, db, "SELECT id FROM t WHERE id = 1", lex, 0)
	require.NoError(t, err)
	b, _, err := cache.acquire(ctx, db, "SELECT id FROM t WHERE id = 2", lex, 0) // evicts a, held
	require.NoError(t, err)
	require.Equal(t, int64(2), c.open())
	var id int64
	if err := a.stmt.QueryRowContext(ctx).Scan(&id); err != nil || id != 1 {
		t.Fatalf("the held, evicted statement: %d, %v", id, err)
	}
	cache.release(a, false)
	require.Equal(t, int64(1), c.open())
	cache.release(b, false)
	if n := c.open(); n != 1 || cache.len() != 1 {
		t.Fatalf("%d open, %d cached: the cached one closed at its release", n, cache.len())
	}
	// Evicted held by none: closed by the eviction.
	d, _, err := cache.acquire(ctx, db, "SELECT id FROM t WHERE id = 3", lex, 0)
	require.NoError(t, err)
	require.Equal(t, int64(1), c.open())
	// Dropped while held by two: closed at the second release.
	d2, fresh, err := cache.acquire(ctx, db, "SELECT id FROM t WHERE id = 3", lex, 0)
	if err != nil || fresh || d2 != d {
		t.Fatalf("a second hold: %v, fresh %v, same %v", err, fresh, d2 == d)
	}
	cache.release(d, true)
	if n := c.open(); n != 1 || cache.len() != 0 {
		t.Fatalf("dropped, still held: %d open, %d cached", n, cache.len())
	}
	cache.release(d2, false)
	require.Equal(t, int64(0), c.open())
	require.NoError(t, cache.close())
}

// TestStatementCheckedUnderItsPrefix: a text whose statement is kept is
// not taken as checked when the same key came from another guard's
// prefix: MariaDB's time limit prefix kept with SELECT 1 does not let the
// same characters through as the query of a run without that prefix,
// where the executable comment is the query's own.
func TestStatementCheckedUnderItsPrefix(t *testing.T) {
	db, _ := countingDB(t, 1)
	cache := newStmtCache(4)
	ctx := context.Background()
	lex := engine.MySQL.Lexical()
	const prefix = "/*M!100102 SET STATEMENT max_statement_time=1 FOR */ "
	e, fresh, err := cache.acquire(ctx, db, prefix+"SELECT 1", lex, len(prefix))
	require.NoError(t, err, "under its prefix: %v, fresh %v", err, fresh)
	require.True(t, fresh, "under its prefix: %v, fresh %v", err, fresh)
	cache.release(e, false)
	if _, _, err := cache.acquire(ctx, db, prefix+"SELECT 1", lex, 0); err != errNotQuery {
		t.Fatalf("without the prefix: %v, want errNotQuery", err)
	}
	e, fresh, err = cache.acquire(ctx, db, prefix+"SELECT 1", lex, len(prefix))
	require.NoError(t, err, "under its prefix again: %v, fresh %v", err, fresh)
	require.False(t, fresh, "under its prefix again: %v, fresh %v", err, fresh)
	cache.release(e, false)
	require.NoError(t, cache.close())
	// Once the cache is closed the text is still checked.
	if _, _, err := cache.acquire(ctx, db, "DROP TABLE t", lex, 0); err != errNotQuery {
		t.Fatalf("after close: %v, want errNotQuery", err)
	}
}

// TestNoSQLiteLimitsNoHeldConnection: with every limit left to SQLite
// (a negative Length), WithSQLiteLimits sets nothing, so that runs take the
// plain path instead of holding a connection to set nothing on.
func TestNoSQLiteLimitsNoHeldConnection(t *testing.T) {
	limit := func(*sql.Conn, int, int) (int, error) { return 0, nil }
	for _, c := range []struct {
		l    SQLiteLimits
		want bool
	}{{SQLiteLimits{Length: -1}, false}, {SQLiteLimits{}, true}, {SQLiteLimits{Length: 1 << 20}, true}} {
		x := New(nil, engine.SQLite, WithSQLiteLimits(limit, c.l))
		assert.Equal(t, c.want, x.hasLimits(), "Length %d: hasLimits", c.l.Length)
	}
}

// inParallel calls run(g, i) for i from 0 to n-1 on each of goroutines
// goroutines g at once, each stopping at its first error, and once all
// have ended stops t at the first error any returned.
func inParallel(t *testing.T, goroutines, n int, run func(g, i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := range n {
				if err := run(g, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// sqliteFile makes the SQLite file name, in WAL mode, in a directory of the
// test's own, runs ddl on it, and returns a pool on it (its connections
// unbounded, closed when the test ends) and its DSN.
func sqliteFile(t *testing.T, name, ddl string) (*sql.DB, string) {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), name) + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
	db := testdb.SQLitePool(t, dsn, 0)
	_, err := db.Exec(ddl)
	require.NoError(t, err, "%s", ddl)
	return db, dsn
}
