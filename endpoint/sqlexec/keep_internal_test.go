package sqlexec

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"sync/atomic"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
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
