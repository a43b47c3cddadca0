package sqlexec_test

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec/sqliteinterrupt"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// keptLimited is an Executor as the example server builds it: runs on a
// read-only pool that keeps its statements, the length limit set through
// the driver's connections (WithSQLiteConnLimits), and the interrupt. It
// returns the run pool, and the count of the limit's calls.
func keptLimited(t *testing.T, l sqlexec.SQLiteLimits, conns int) (*sqlexec.Executor, *sql.DB, *atomic.Int64) {
	t.Helper()
	dsn := fileDSN(t)
	db, err := sql.Open("sqlite", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, "CREATE TABLE t (id INTEGER)")
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
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(began), limit+time.Second)
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
