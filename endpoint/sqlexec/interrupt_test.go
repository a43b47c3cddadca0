package sqlexec_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec/sqliteinterrupt"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
)

// afterFirstRow answers its first row at once and then looks for a second
// for ever: its work comes after the query started, where
// modernc.org/sqlite no longer interrupts it.
const afterFirstRow = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r WHERE n = 1 OR n < 0"

// interruptiblePools returns an Executor for each way a SQLite run holds
// its connection, each with WithInterrupt: the guarded run (a
// transaction), a read-only pool, each with and without SQLite limits, a
// pool without a statement cache, and a read-only or writable pool that
// keeps statements.
func interruptiblePools(t *testing.T) map[string]*sqlexec.Executor {
	t.Helper()
	out := map[string]*sqlexec.Executor{}
	open := func(dsn string, opts ...sqlexec.OpenOption) *sql.DB {
		db, err := sqlexec.Open("sqlite", dsn, engine.SQLite, opts...)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	interrupt := sqlexec.WithInterrupt(sqliteinterrupt.For)
	limits := sqlexec.WithSQLiteLimits(sqlite.Limit, sqlexec.SQLiteLimits{})
	for _, c := range []struct {
		name     string
		readOnly bool
		keep     bool
		opts     []sqlexec.Option
	}{
		{"guarded", false, false, nil},
		{"guarded with limits", false, false, []sqlexec.Option{limits}},
		{"read-only pool", true, false, nil},
		{"read-only pool with limits", true, false, []sqlexec.Option{limits}},
		{"read-only pool without statements", true, false, []sqlexec.Option{sqlexec.WithStatements(-1)}},
		{"read-only pool keeping statements", true, true, nil},
		// A guarded run holds a connection that keeps statements: the
		// driver's connection it wraps is interrupted.
		{"guarded keeping statements", false, true, nil},
	} {
		dsn := fileDSN(t)
		var keep []sqlexec.OpenOption
		if c.keep {
			keep = append(keep, sqlexec.KeepStatements(0))
		}
		opts := append([]sqlexec.Option{interrupt}, c.opts...)
		var db *sql.DB
		if c.readOnly {
			db = open(dsn)
			opts = append(opts, sqlexec.WithReadOnly(open(dsn+"&_pragma=query_only(1)", keep...)))
		} else {
			db = open(dsn, keep...)
		}
		x := sqlexec.New(db, engine.SQLite, opts...)
		t.Cleanup(func() { x.Close() })
		out[c.name] = x
	}
	return out
}

// TestInterruptStopsAFollowingRow: with WithInterrupt, a run whose work
// comes after its first row stops at its time limit, with a deadline
// error, whichever way it holds its connection; the connection then runs
// the next query (the interrupt reached no later run). Without it the run
// never ends.
func TestInterruptStopsAFollowingRow(t *testing.T) {
	for name, x := range interruptiblePools(t) {
		t.Run(name, func(t *testing.T) {
			for i := range 2 { // the second on a connection the first was interrupted on
				requireEndsWithin(t, x, afterFirstRow, 100*time.Millisecond)
				res, err := x.Query(context.Background(), stmt.New("SELECT 1 AS one", nil), driver.Bounds{Timeout: time.Second})
				require.NoError(t, err, "run %d: the next query: %v, %v", i, res, err)
				require.Len(t, res.Rows, 1, "run %d: the next query: %v, %v", i, res, err)
			}
		})
	}
}

// requireEndsWithin runs q on x with a time limit of limit and requires a
// deadline error within 3 s of it; a run still going 10 s later fails
// the test (and is left running: nothing else can stop it).
func requireEndsWithin(t *testing.T, x *sqlexec.Executor, q string, limit time.Duration) {
	t.Helper()
	type answer struct {
		err  error
		took time.Duration
	}
	done := make(chan answer, 1)
	go func() {
		start := time.Now()
		_, err := x.Query(context.Background(), stmt.New(q, nil), driver.Bounds{Timeout: limit})
		done <- answer{err, time.Since(start)}
	}()
	select {
	case a := <-done:
		require.ErrorIs(t, a.err, context.DeadlineExceeded)
		// The slack is for a loaded machine (a CI runner's other test
		// binaries): a run without the interrupt never ends, so even a
		// generous bound tells the two apart.
		require.LessOrEqual(t, a.took, limit+3*time.Second, "stopped after, limit %v", limit)
	case <-time.After(limit + 10*time.Second):
		t.Fatalf("still running %v after its limit of %v", 10*time.Second, limit)
	}
}
