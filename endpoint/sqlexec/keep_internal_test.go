package sqlexec

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
)

// badFirst is a driver whose first connection breaks when a query starts
// on it (driver.ErrBadConn), as a connection the server dropped does,
// and whose next ones answer one row: a broken connection cannot be made
// on demand with a real engine.
type badFirst struct{ conns atomic.Int64 }

func (d *badFirst) Connect(context.Context) (sqldriver.Conn, error) {
	return &badConn{bad: d.conns.Add(1) == 1}, nil
}
func (d *badFirst) Driver() sqldriver.Driver { return nil }

type badConn struct{ bad bool }

func (c *badConn) Prepare(string) (sqldriver.Stmt, error) { return &badStmt{c}, nil }
func (c *badConn) Close() error                           { return nil }
func (c *badConn) Begin() (sqldriver.Tx, error)           { return nil, sqldriver.ErrSkip }

type badStmt struct{ c *badConn }

func (s *badStmt) Close() error                                     { return nil }
func (s *badStmt) NumInput() int                                    { return 0 }
func (s *badStmt) Exec([]sqldriver.Value) (sqldriver.Result, error) { return nil, sqldriver.ErrSkip }
func (s *badStmt) Query([]sqldriver.Value) (sqldriver.Rows, error) {
	if s.c.bad {
		return nil, sqldriver.ErrBadConn
	}
	return &faultyRows{}, nil // one row, no fault
}

// TestKeptRetriesABrokenConnection: a kept statement whose connection
// turns out broken before the query starts runs again on another
// connection, and the broken one leaves the pool, as database/sql does.
func TestKeptRetriesABrokenConnection(t *testing.T) {
	d := &badFirst{}
	ro := sql.OpenDB(&keepingConnector{Connector: d})
	defer ro.Close()
	x := New(ro, engine.SQLite, WithReadOnly(ro))
	res, err := x.Query(context.Background(), stmt.New("SELECT 1 AS n", nil), driver.Bounds{})
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != int64(1) {
		t.Fatalf("after a broken connection: %v, %v", res, err)
	}
	require.Equal(t, int64(2), d.conns.Load())
	require.Equal(t, 1, ro.Stats().OpenConnections)
}

// faulty is a driver whose connections fail as a scripted test says: the
// rows of a query panic (panicNext), a connection reports itself invalid
// once used (invalid), or its session cannot be reset (badReset). It
// counts the connections and statements open.
type faulty struct {
	panicNext, invalid, badReset atomic.Bool
	conns, stmts, opened         atomic.Int64
}

func (d *faulty) Connect(context.Context) (sqldriver.Conn, error) {
	d.conns.Add(1)
	d.opened.Add(1)
	return &faultyConn{d: d}, nil
}
func (d *faulty) Driver() sqldriver.Driver { return nil }

type faultyConn struct {
	d    *faulty
	used bool
}

func (c *faultyConn) Prepare(string) (sqldriver.Stmt, error) {
	c.d.stmts.Add(1)
	return &faultyStmt{c: c}, nil
}
func (c *faultyConn) Close() error                 { c.d.conns.Add(-1); return nil }
func (c *faultyConn) Begin() (sqldriver.Tx, error) { return nil, errors.New("no transactions") }
func (c *faultyConn) IsValid() bool                { return !(c.used && c.d.invalid.Load()) }
func (c *faultyConn) ResetSession(context.Context) error {
	if c.d.badReset.Load() {
		return sqldriver.ErrBadConn
	}
	return nil
}

type faultyStmt struct {
	c      *faultyConn
	closed bool
}

func (s *faultyStmt) Close() error {
	if s.closed {
		return errors.New("a statement closed twice")
	}
	s.closed = true
	s.c.d.stmts.Add(-1)
	return nil
}
func (s *faultyStmt) NumInput() int                                    { return 0 }
func (s *faultyStmt) Exec([]sqldriver.Value) (sqldriver.Result, error) { return nil, sqldriver.ErrSkip }
func (s *faultyStmt) Query([]sqldriver.Value) (sqldriver.Rows, error) {
	if s.closed {
		return nil, errors.New("a closed statement used")
	}
	s.c.used = true
	return &faultyRows{panics: s.c.d.panicNext.Load()}, nil
}

type faultyRows struct{ panics, done bool }

func (r *faultyRows) Columns() []string { return []string{"n"} }
func (r *faultyRows) Close() error      { return nil }
func (r *faultyRows) Next(dest []sqldriver.Value) error {
	if r.panics {
		panic("the driver failed")
	}
	if r.done {
		return io.EOF
	}
	r.done, dest[0] = true, int64(1)
	return nil
}

// TestKeptConnectionFaults: a connection whose driver panics while a kept
// statement's rows are read, reports itself invalid, or cannot have its
// session reset leaves the pool with its kept statements closed, and the
// next run gets a fresh connection and answers.
func TestKeptConnectionFaults(t *testing.T) {
	d := &faulty{}
	ro := sql.OpenDB(&keepingConnector{Connector: d})
	defer ro.Close()
	ro.SetMaxOpenConns(1)
	x := New(ro, engine.SQLite, WithReadOnly(ro))
	ctx := context.Background()
	run := func() {
		t.Helper()
		for _, q := range []string{"SELECT 1 AS n", "SELECT 2 AS n"} {
			res, err := x.Query(ctx, stmt.New(q, nil), driver.Bounds{})
			if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != int64(1) {
				t.Fatalf("%s: %v, %v", q, res, err)
			}
		}
	}
	check := func(what string, opened int64) {
		t.Helper()
		require.Equal(t, opened, d.opened.Load(), "%s", what)
		c, s := d.conns.Load(), d.stmts.Load()
		require.Equal(t, int64(1), c, "%s: %d connections and %d statements open, want 1 and its 2", what, c, s)
		require.Equal(t, int64(2), s, "%s: %d connections and %d statements open, want 1 and its 2", what, c, s)
	}
	run()
	check("at first", 1)

	d.panicNext.Store(true)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the driver's panic did not reach the caller")
			}
		}()
		x.Query(ctx, stmt.New("SELECT 1 AS n", nil), driver.Bounds{}) //nolint:errcheck // it panics
	}()
	d.panicNext.Store(false)
	run()
	check("after a panic", 2)

	d.invalid.Store(true)
	run()
	d.invalid.Store(false)
	run()
	check("after an invalid connection", 4) // each query of the first round closed its connection

	d.badReset.Store(true)
	run() // database/sql discards the connection it cannot reset, and opens one
	d.badReset.Store(false)
	c, s := d.conns.Load(), d.stmts.Load()
	require.Equal(t, int64(1), c, "after a failed reset: %d connections and %d statements open", c, s)
	require.LessOrEqual(t, s, int64(2), "after a failed reset: %d connections and %d statements open", c, s)
}

// counting wraps modernc.org/sqlite's connections to count the
// statements and rows the driver has open, and the connections.
type counting struct {
	dsn                string
	conns, stmts, rows atomic.Int64
}

func (c *counting) Connect(context.Context) (sqldriver.Conn, error) {
	dc, err := (&sqlite.Driver{}).Open(c.dsn)
	if err != nil {
		return nil, err
	}
	c.conns.Add(1)
	return &countedConn{Conn: dc, n: c}, nil
}
func (c *counting) Driver() sqldriver.Driver { return nil }

type countedConn struct {
	sqldriver.Conn
	n *counting
}

func (c *countedConn) Close() error { c.n.conns.Add(-1); return c.Conn.Close() }
func (c *countedConn) Prepare(q string) (sqldriver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}
func (c *countedConn) PrepareContext(ctx context.Context, q string) (sqldriver.Stmt, error) {
	s, err := c.Conn.(sqldriver.ConnPrepareContext).PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.n.stmts.Add(1)
	return &countedStmt{Stmt: s, n: c.n}, nil
}
func (c *countedConn) BeginTx(ctx context.Context, o sqldriver.TxOptions) (sqldriver.Tx, error) {
	return c.Conn.(sqldriver.ConnBeginTx).BeginTx(ctx, o)
}
func (c *countedConn) ResetSession(ctx context.Context) error {
	return c.Conn.(sqldriver.SessionResetter).ResetSession(ctx)
}
func (c *countedConn) IsValid() bool { return c.Conn.(sqldriver.Validator).IsValid() }

type countedStmt struct {
	sqldriver.Stmt
	n      *counting
	closed bool
}

func (s *countedStmt) Close() error {
	if s.closed {
		return errors.New("a statement closed twice")
	}
	s.closed = true
	s.n.stmts.Add(-1)
	return s.Stmt.Close()
}
func (s *countedStmt) QueryContext(ctx context.Context, args []sqldriver.NamedValue) (sqldriver.Rows, error) {
	if s.closed {
		return nil, errors.New("a closed statement used")
	}
	r, err := s.Stmt.(sqldriver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	s.n.rows.Add(1)
	return &countedRows{Rows: r, n: s.n}, nil
}

type countedRows struct {
	sqldriver.Rows
	n *counting
}

func (r *countedRows) Close() error { r.n.rows.Add(-1); return r.Rows.Close() }
func (r *countedRows) ColumnTypeDatabaseTypeName(i int) string {
	return r.Rows.(sqldriver.RowsColumnTypeDatabaseTypeName).ColumnTypeDatabaseTypeName(i)
}

// TestKeptStatementsNeverLeak: runs on kept statements, at once from many
// goroutines on a pool of two connections, that succeed, fail to prepare,
// fail while they run, are stopped by their context or by a bound, never
// leave a driver's rows open, never use a statement the cache closed, keep
// at most their bound of statements on each connection, and leave none
// open once the pool is closed.
func TestKeptStatementsNeverLeak(t *testing.T) {
	db, dsn := sqliteFile(t, "leak.db", "CREATE TABLE t (id INTEGER, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	const keep, conns = 3, 2
	n := &counting{dsn: dsn + "&_pragma=query_only(1)"}
	ro := sql.OpenDB(&keepingConnector{Connector: n, max: keep})
	ro.SetMaxOpenConns(conns)
	x := New(db, engine.SQLite, WithReadOnly(ro))
	const forever = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n, 'abcdefgh' FROM r"
	runs := []func(ctx context.Context, i int) error{
		func(ctx context.Context, i int) error { // many texts: the cache evicts
			_, err := x.Query(ctx, stmt.New(fmt.Sprintf("SELECT id FROM t WHERE id > %d", i%7), nil), driver.Bounds{})
			return err
		},
		func(ctx context.Context, i int) error { // fails to prepare
			if _, err := x.Query(ctx, stmt.New("SELECT nosuch FROM t", nil), driver.Bounds{}); err == nil {
				return errors.New("a run of a missing column answered")
			}
			return nil
		},
		func(ctx context.Context, i int) error { // fails while it runs: dropped and prepared again
			if _, err := x.Query(ctx, stmt.New("SELECT json_extract(?, '$') AS j", []any{"{"}), driver.Bounds{}); err == nil {
				return errors.New("malformed JSON answered")
			}
			return nil
		},
		func(ctx context.Context, i int) error { // the wrong number of arguments
			if _, err := x.Query(ctx, stmt.New("SELECT ? AS a", nil), driver.Bounds{}); err == nil {
				return errors.New("a run missing its argument answered")
			}
			return nil
		},
		func(ctx context.Context, i int) error { // stopped by its context while it reads rows
			ctx, cancel := context.WithTimeout(ctx, time.Millisecond)
			defer cancel()
			if _, err := x.Query(ctx, stmt.New(forever, nil), driver.Bounds{}); !errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("a run past its deadline: %v", err)
			}
			return nil
		},
		func(ctx context.Context, i int) error { // stopped by its bounds
			if res, err := x.Query(ctx, stmt.New(forever, nil), driver.Bounds{MaxRows: 5}); err != nil || len(res.Rows) != 5 {
				return fmt.Errorf("MaxRows 5: %v", err)
			}
			if _, err := x.Query(ctx, stmt.New(forever, nil), driver.Bounds{MaxBytes: 100}); !errors.Is(err, driver.ErrResultTooLarge) {
				return fmt.Errorf("MaxBytes 100: %v", err)
			}
			return nil
		},
	}
	inParallel(t, 8, 60, func(g, i int) error { return runs[(g+i)%len(runs)](context.Background(), i) })
	require.Equal(t, int64(0), n.rows.Load())
	open, c := n.stmts.Load(), n.conns.Load()
	require.LessOrEqual(t, open, keep*c, "statements open on %d connections, bound %d each", c, keep)
	require.NoError(t, ro.Close())
	if open, c := n.stmts.Load(), n.conns.Load(); open != 0 || c != 0 {
		t.Fatalf("after the pool closed: %d statements and %d connections open", open, c)
	}
}

// ctxSeen is a driver whose statements record whether the context a query
// started under could end (a driver such as modernc.org/sqlite starts a
// goroutine to watch one that can).
type ctxSeen struct{ ending, detached atomic.Int64 }

func (d *ctxSeen) Connect(context.Context) (sqldriver.Conn, error) { return &ctxSeenConn{d: d}, nil }
func (d *ctxSeen) Driver() sqldriver.Driver                        { return nil }

type ctxSeenConn struct{ d *ctxSeen }

func (c *ctxSeenConn) Prepare(string) (sqldriver.Stmt, error) { return &ctxSeenStmt{d: c.d}, nil }
func (c *ctxSeenConn) Close() error                           { return nil }
func (c *ctxSeenConn) Begin() (sqldriver.Tx, error)           { return nil, errors.New("no transactions") }

type ctxSeenStmt struct{ d *ctxSeen }

func (s *ctxSeenStmt) Close() error  { return nil }
func (s *ctxSeenStmt) NumInput() int { return 0 }
func (s *ctxSeenStmt) Exec([]sqldriver.Value) (sqldriver.Result, error) {
	return nil, sqldriver.ErrSkip
}
func (s *ctxSeenStmt) Query([]sqldriver.Value) (sqldriver.Rows, error) {
	return nil, errors.New("Query without a context")
}
func (s *ctxSeenStmt) QueryContext(ctx context.Context, _ []sqldriver.NamedValue) (sqldriver.Rows, error) {
	if ctx.Done() == nil {
		s.d.detached.Add(1)
	} else {
		s.d.ending.Add(1)
	}
	return &faultyRows{}, nil
}

// TestKeptRunDetachedFromItsEnd: a run on a kept statement whose
// connection the Executor's watch interrupts (WithInterrupt) gives the
// driver its context without its end, so that the driver does not watch it
// too (a goroutine a query); without an interrupt, the driver gets the
// context as it is, and is what ends the run. A context already ended
// fails the run before the query starts.
func TestKeptRunDetachedFromItsEnd(t *testing.T) {
	q := stmt.New("SELECT 1 AS n", nil)
	for _, interrupt := range []bool{true, false} {
		d := &ctxSeen{}
		ro := sql.OpenDB(&keepingConnector{Connector: d})
		var opts []Option
		opts = append(opts, WithReadOnly(ro))
		if interrupt {
			opts = append(opts, WithInterrupt(func(any) (func(), error) { return func() {}, nil }))
		}
		x := New(ro, engine.SQLite, opts...)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := x.Query(ctx, q, driver.Bounds{})
		require.NoError(t, err)
		require.Equal(t, [][]any{{int64(1)}}, res.Rows)
		if interrupt {
			require.Equal(t, int64(1), d.detached.Load(), "with an interrupt: queries started without an end")
			require.Equal(t, int64(0), d.ending.Load(), "with an interrupt: queries started under a context that can end")
		} else {
			require.Equal(t, int64(0), d.detached.Load(), "without an interrupt: queries started without an end")
			require.Equal(t, int64(1), d.ending.Load(), "without an interrupt: queries started under a context that can end")
		}
		cancel()
		_, err = x.Query(ctx, q, driver.Bounds{})
		require.ErrorIs(t, err, context.Canceled, "interrupt %v", interrupt)
		require.Equal(t, int64(1), d.detached.Load()+d.ending.Load(), "interrupt %v: a query started under an ended context", interrupt)
		require.NoError(t, x.Close())
		require.NoError(t, ro.Close())
	}
}
