package sqlexec_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec/sqliteinterrupt"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
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
		db := fileDB(t, dsn, 0, "CREATE TABLE t (id INTEGER)")
		opts := []sqlexec.Option{sqlexec.WithSQLiteLimits(sqlite.Limit, l)}
		name := "guarded"
		if ro {
			r := readOnly(t, dsn, 0)
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

// interruptHang is how long past its time limit an interrupted run may
// take before a test calls it a hang: far more than a loaded machine (or
// -race) adds, so that no test asserts a speed.
const interruptHang = 30 * time.Second

// TestSQLiteInterruptWithLimits: under the length limit each call is
// short, so the run's time limit stops a query that makes many of them,
// on a held connection as on the pool.
func TestSQLiteInterruptWithLimits(t *testing.T) {
	const q = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT sum(length(printf('%.*c', 16000000, 'x'))) FROM r"
	for name, x := range limitedPools(t, sqlexec.SQLiteLimits{}) {
		const limit = 200 * time.Millisecond
		start := time.Now()
		_, err := x.Query(context.Background(), stmt.New(q, nil), driver.Bounds{Timeout: limit})
		// The query is endless: its return with the deadline's error is the
		// interrupt. The bound only tells a hang from a loaded machine.
		require.ErrorIs(t, err, context.DeadlineExceeded, "%s", name)
		require.Less(t, time.Since(start), limit+interruptHang, "%s: not interrupted, limit %v", name, limit)
	}
}

// BenchmarkReadOnlyRun is a cheap run on a read-only pool, as the example
// server's, with and without WithSQLiteLimits (which holds a connection
// per run and prepares the text on it instead of using the statement
// cache).
func BenchmarkReadOnlyRun(b *testing.B) {
	for _, limits := range []bool{false, true} {
		name := "plain"
		if limits {
			name = "limits"
		}
		b.Run(name, func(b *testing.B) {
			dsn := "file:" + b.TempDir() + "/b.db?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
			db := testdb.SQLitePool(b, dsn, 0)
			if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t SELECT value, 'x' FROM (WITH RECURSIVE r(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM r WHERE value < 1000) SELECT value FROM r)"); err != nil {
				b.Fatal(err)
			}
			ro := readOnly(b, dsn, 0)
			opts := []sqlexec.Option{sqlexec.WithReadOnly(ro)}
			if limits {
				opts = append(opts, sqlexec.WithSQLiteLimits(sqlite.Limit, sqlexec.SQLiteLimits{}))
			}
			x := sqlexec.New(db, engine.SQLite, opts...)
			defer x.Close()
			st := stmt.New("SELECT v FROM t WHERE id = ?", []any{int64(500)})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_, err := x.Query(ctx, st, driver.Bounds{})
				require.NoError(b, err)
			}
		})
	}
}

// keptLimited is an Executor as the example server builds it: runs on a
// read-only pool that keeps its statements, the length limit set through
// the driver's connections (WithSQLiteConnLimits), and the interrupt. It
// returns the run pool, and the count of the limit's calls.
func keptLimited(t *testing.T, l sqlexec.SQLiteLimits, conns int) (*sqlexec.Executor, *sql.DB, *atomic.Int64) {
	t.Helper()
	dsn := fileDSN(t)
	db := fileDB(t, dsn, 0, "CREATE TABLE t (id INTEGER)")
	runs, err := sqlexec.Open("sqlite", dsn+"&_pragma=query_only(1)", engine.SQLite, sqlexec.KeepStatements(0))
	require.NoError(t, err)
	t.Cleanup(func() { runs.Close() })
	runs.SetMaxOpenConns(conns)
	runs.SetMaxIdleConns(conns)
	calls := &atomic.Int64{}
	counted := func(dc any, id, v int) (int, error) {
		calls.Add(1)
		return sqliteinterrupt.Limit(dc, id, v)
	}
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(runs),
		sqlexec.WithSQLiteConnLimits(counted, l), sqlexec.WithInterrupt(sqliteinterrupt.For))
	t.Cleanup(func() { x.Close() })
	return x, runs, calls
}

// TestSQLiteConnLimitsOnKeptPool: with the limits set through the driver's
// connections, a run pool that keeps statements keeps them (the run took
// the kept path, holding no connection for the limit), the limit is set
// once a connection rather than once a run, and the attack still fails at
// once with the error naming the limit.
func TestSQLiteConnLimitsOnKeptPool(t *testing.T) {
	x, runs, calls := keptLimited(t, sqlexec.SQLiteLimits{}, 1)
	kept := sqlexec.KeptOf(t, runs)
	ctx := context.Background()
	for range 5 {
		res, err := x.Query(ctx, stmt.New("SELECT count(*) AS n FROM t", nil), driver.Bounds{Timeout: 10 * time.Second})
		require.NoError(t, err)
		assert.Equal(t, int64(0), res.Rows[0][0])
	}
	assert.Equal(t, 1, kept(), "the run's statement is kept on the connection")
	assert.Equal(t, int64(1), calls.Load(), "the limit is set once on the pool's one connection, not once a run")

	start := time.Now()
	_, err := x.Query(ctx, stmt.New(attack, nil), driver.Bounds{Timeout: 10 * time.Second})
	var qe *driver.QueryError
	require.ErrorAs(t, err, &qe)
	assert.ErrorIs(t, err, sqlexec.ErrSQLiteLength)
	assert.Contains(t, qe.Message, "16777216")
	assert.Less(t, time.Since(start), time.Second)
	assert.Equal(t, int64(1), calls.Load())
}

// TestSQLiteConnLimitsEveryConnection: each connection of the kept pool
// gets the limit, the setting is the one given, and Exec on the writing
// pool (which keeps no statements) is bounded too.
func TestSQLiteConnLimitsEveryConnection(t *testing.T) {
	x, _, calls := keptLimited(t, sqlexec.SQLiteLimits{Length: 1 << 20}, 4)
	ctx := context.Background()
	q := stmt.New("SELECT length(printf('%.*c', 2000000, 'x'))", nil)
	start := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			<-start
			_, err := x.Query(ctx, q, driver.Bounds{})
			errs <- err
		}()
	}
	close(start)
	for range 4 {
		err := <-errs
		require.ErrorIs(t, err, sqlexec.ErrSQLiteLength)
		assert.Contains(t, err.Error(), "1048576 bytes")
	}
	assert.LessOrEqual(t, calls.Load(), int64(4), "at most one call a connection")
	before := calls.Load()
	err := x.Exec(ctx, []driver.Statement{stmt.New("CREATE TABLE big AS SELECT printf('%.*c', 2000000, 'x') AS pad", nil)}, driver.Write{Tx: true})
	require.ErrorIs(t, err, sqlexec.ErrSQLiteLength)
	assert.Equal(t, before+1, calls.Load(), "Exec holds a connection of the writing pool and sets the limit on it")
	res, err := x.Query(ctx, stmt.New("SELECT length(printf('%.*c', 1000, 'x')) AS n", nil), driver.Bounds{})
	require.NoError(t, err)
	assert.Equal(t, int64(1000), res.Rows[0][0])
}

// TestSQLiteConnLimitsOffAndInterrupt: a negative Length sets nothing,
// and under the limit a run past its time limit is interrupted on a kept
// connection.
func TestSQLiteConnLimitsOffAndInterrupt(t *testing.T) {
	x, _, calls := keptLimited(t, sqlexec.SQLiteLimits{Length: -1}, 1)
	res, err := x.Query(context.Background(), stmt.New("SELECT length(printf('%.*c', 20000000, 'x'))", nil), driver.Bounds{})
	require.NoError(t, err)
	assert.Equal(t, int64(20000000), res.Rows[0][0])
	assert.Zero(t, calls.Load())

	x, _, _ = keptLimited(t, sqlexec.SQLiteLimits{}, 1)
	const q = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT sum(length(printf('%.*c', 16000000, 'x'))) FROM r"
	const limit = 200 * time.Millisecond
	began := time.Now()
	_, err = x.Query(context.Background(), stmt.New(q, nil), driver.Bounds{Timeout: limit})
	// The query is endless: its return with the deadline's error is the
	// interrupt. The bound only tells a hang from a loaded machine.
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(began), limit+interruptHang, "not interrupted")
}

// TestLimitRefusesOtherConnections: sqliteinterrupt.Limit refuses what is
// not a connection of modernc.org/sqlite, and a kept pool's wrapper is
// not one (sqlexec unwraps it).
func TestLimitRefusesOtherConnections(t *testing.T) {
	_, err := sqliteinterrupt.Limit(struct{}{}, 0, 1)
	require.ErrorIs(t, err, sqliteinterrupt.ErrNotModernc)
	_, runs, _ := keptLimited(t, sqlexec.SQLiteLimits{}, 1)
	c, err := runs.Conn(context.Background())
	require.NoError(t, err)
	defer c.Close()
	err = c.Raw(func(dc any) error { _, err := sqliteinterrupt.Limit(dc, 0, 1); return err })
	require.ErrorIs(t, err, sqliteinterrupt.ErrNotModernc)
}

// TestExecWithinOnSQLite: a statement that would grow the database by
// more than Write.MaxBytes fails as it grows, with ErrWriteLimit, and
// the file grows by about the bound, not by what the statement asked for;
// the connection's own bound is back afterwards, so a later write of the
// same size succeeds.
func TestExecWithinOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	db := fileDB(t, "file:"+path+"?_pragma=busy_timeout(5000)", 1, "CREATE TABLE seed (x INTEGER)") // the bounded connection is the one every later write gets
	x := sqlexec.New(db, engine.SQLite)
	ctx := context.Background()
	fileSize := func() int64 {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		return fi.Size()
	}
	before := fileSize()
	// 200 rows of 100 KB: 20 MB, under a bound of 2 MB.
	const big = "CREATE TABLE big AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 200) SELECT n, printf('%.*c', 100000, 'x') AS pad FROM r"
	for _, tx := range []bool{false, true} {
		err := x.Exec(ctx, []driver.Statement{stmt.New(big, nil)}, driver.Write{Tx: tx, MaxBytes: 2 << 20})
		require.ErrorIs(t, err, driver.ErrWriteLimit, "tx %v: 20 MB under a 2 MB bound", tx)
	}
	grew := fileSize() - before
	require.LessOrEqual(t, grew, int64(3<<20), "the file grew by")
	require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New("CREATE TABLE small AS SELECT printf('%.*c', 100000, 'x') AS pad", nil)}, driver.Write{MaxBytes: 2 << 20}), "100 KB under a 2 MB bound")
	require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(big, nil)}, driver.Write{Tx: false}), "the same write unbounded after")
}
