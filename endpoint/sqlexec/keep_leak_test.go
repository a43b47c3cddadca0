package sqlexec

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
)

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
	dsn := "file:" + filepath.Join(t.TempDir(), "leak.db") + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
	db, err := sql.Open("sqlite", dsn)
	require.NoError(t, err)
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t (id INTEGER, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')"); err != nil {
		t.Fatal(err)
	}
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
