package sqlexec

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

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
