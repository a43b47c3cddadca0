package sqlexec

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

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
