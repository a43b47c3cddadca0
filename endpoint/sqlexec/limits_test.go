package sqlexec_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
)

// attack is the query of issue 25 that allocated 2 GB with SQLite's own
// length limit (a billion bytes).
const attack = "SELECT length(printf('%.*c', 999999999, 'x')) + length(printf('%.*c', 999999999, 'y')) AS n"

// limitedPools are the two ways a SQLite Executor runs: guarded on a
// pool shared with writers, and plain on a read-only pool.
func limitedPools(t *testing.T, l sqlexec.SQLiteLimits) map[string]*sqlexec.Executor {
	t.Helper()
	out := map[string]*sqlexec.Executor{}
	for _, ro := range []bool{false, true} {
		dsn := fileDSN(t)
		db, err := sql.Open("sqlite", dsn)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		mustExec(t, db, "CREATE TABLE t (id INTEGER)")
		opts := []sqlexec.Option{sqlexec.WithSQLiteLimits(sqlite.Limit, l)}
		name := "guarded"
		if ro {
			r, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
			require.NoError(t, err)
			t.Cleanup(func() { r.Close() })
			opts = append(opts, sqlexec.WithReadOnly(r))
			name = "read-only pool"
		}
		x := sqlexec.New(db, engine.SQLite, opts...)
		t.Cleanup(func() { x.Close() })
		out[name] = x
	}
	return out
}

// TestSQLiteLengthLimit: with WithSQLiteLimits, the attack fails at once
// with a query error naming the limit, on either kind of pool, and a value
// under the limit still runs.
func TestSQLiteLengthLimit(t *testing.T) {
	for name, x := range limitedPools(t, sqlexec.SQLiteLimits{}) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			for i := 0; i < 3; i++ { // every connection of the pool, not the first only
				start := time.Now()
				_, err := x.Query(ctx, stmt.New(attack, nil), driver.Bounds{Timeout: 10 * time.Second})
				var qe *driver.QueryError
				if !errors.As(err, &qe) || !errors.Is(err, sqlexec.ErrSQLiteLength) || !strings.Contains(qe.Message, "SQLiteLimits.Length") || !strings.Contains(qe.Message, "16777216") {
					t.Fatalf("the attack: %v, want a query error naming the length limit", err)
				}
				require.LessOrEqual(t, time.Since(start), time.Second, "the attack took")
			}
			res, err := x.Query(ctx, stmt.New("SELECT length(printf('%.*c', 1000000, 'x')) AS n", nil), driver.Bounds{})
			if err != nil || res.Rows[0][0] != int64(1000000) {
				t.Fatalf("a 1 MB value: %v, %v", res, err)
			}
		})
	}
}

// TestSQLiteLengthLimitSetting: Length is the setting, and a negative one
// leaves SQLite's own limit.
func TestSQLiteLengthLimitSetting(t *testing.T) {
	x := limitedPools(t, sqlexec.SQLiteLimits{Length: 1 << 20})["read-only pool"]
	ctx := context.Background()
	_, err := x.Query(ctx, stmt.New("SELECT length(printf('%.*c', 2000000, 'x'))", nil), driver.Bounds{})
	require.ErrorIs(t, err, sqlexec.ErrSQLiteLength, "2 MB under a 1 MiB limit: %v", err)
	require.Contains(t, err.Error(), "1048576 bytes", "2 MB under a 1 MiB limit: %v", err)
	x = limitedPools(t, sqlexec.SQLiteLimits{Length: -1})["guarded"]
	res, err := x.Query(ctx, stmt.New("SELECT length(printf('%.*c', 20000000, 'x'))", nil), driver.Bounds{})
	if err != nil || res.Rows[0][0] != int64(20000000) {
		t.Fatalf("20 MB with the limit left to SQLite: %v, %v", res, err)
	}
}

// TestSQLiteLengthLimitOnExec: Exec, which builds materialized tables, is
// bounded the same way, in a transaction or not.
func TestSQLiteLengthLimitOnExec(t *testing.T) {
	x := limitedPools(t, sqlexec.SQLiteLimits{Length: 1 << 20})["read-only pool"]
	ctx := context.Background()
	for _, tx := range []bool{false, true} {
		err := x.Exec(ctx, []driver.Statement{stmt.New("CREATE TABLE big AS SELECT printf('%.*c', 2000000, 'x') AS pad", nil)}, driver.Write{Tx: tx})
		require.ErrorIs(t, err, sqlexec.ErrSQLiteLength, "tx %v: a 2 MB row under a 1 MiB limit", tx)
	}
	require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New("CREATE TABLE small AS SELECT printf('%.*c', 1000, 'x') AS pad", nil)}, driver.Write{Tx: true}))
}

// TestSQLiteInterruptWithLimits: under the length limit each call is
// short, so the run's time limit stops a query that makes many of them,
// on a held connection as on the pool.
func TestSQLiteInterruptWithLimits(t *testing.T) {
	const q = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT sum(length(printf('%.*c', 16000000, 'x'))) FROM r"
	for name, x := range limitedPools(t, sqlexec.SQLiteLimits{}) {
		const limit = 200 * time.Millisecond
		start := time.Now()
		_, err := x.Query(context.Background(), stmt.New(q, nil), driver.Bounds{Timeout: limit})
		require.ErrorIs(t, err, context.DeadlineExceeded, "%s", name)
		require.LessOrEqual(t, time.Since(start), limit+time.Second, "%s: stopped after, limit %v", name, limit)
	}
}
