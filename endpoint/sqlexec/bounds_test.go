package sqlexec_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
)

// fileDSN is a SQLite file in t's directory, opened as the example server
// opens its database.
func fileDSN(t *testing.T) string {
	return "file:" + filepath.Join(t.TempDir(), "bounds.db") + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	_, err := db.Exec(q)
	require.NoError(t, err, "%s", q)
}

func count(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM "+table).Scan(&n))
	return n
}

// TestReadOnlyPool: with WithReadOnly, runs go to a pool opened with
// query_only, which refuses writes without any statement per run, while
// Exec still writes through the other pool.
func TestReadOnlyPool(t *testing.T) {
	dsn := fileDSN(t)
	db, err := sql.Open("sqlite", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, "CREATE TABLE t (id INTEGER); INSERT INTO t VALUES (1), (2)")
	ro, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
	require.NoError(t, err)
	t.Cleanup(func() { ro.Close() })
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	ctx := context.Background()
	if _, err := x.Query(ctx, stmt.New("WITH w AS (SELECT 1) DELETE FROM t", nil), driver.Bounds{}); err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Fatalf("a DELETE through the read-only pool: %v", err)
	}
	require.Equal(t, 2, count(t, db, "t"))
	require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New("INSERT INTO t VALUES (3)", nil)}, driver.Write{Tx: false}), "Exec beside a read-only pool")
	res, err := x.Query(ctx, stmt.New("SELECT count(*) FROM t", nil), driver.Bounds{})
	if err != nil || res.Rows[0][0] != int64(3) {
		t.Fatalf("a run reads what Exec wrote: %v, %v", res, err)
	}
}

// TestGuardEndsOnEveryPath: the connection a guarded SQLite run held goes
// back to the pool writable, whether the run succeeded, failed, or ran
// out of time; with one connection, every Exec after it would fail
// otherwise.
func TestGuardEndsOnEveryPath(t *testing.T) {
	db, err := sql.Open("sqlite", fileDSN(t))
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, "CREATE TABLE t (id INTEGER)")
	x := sqlexec.New(db, engine.SQLite)
	for i, run := range []func() error{
		func() error {
			_, err := x.Query(context.Background(), stmt.New("SELECT 1", nil), driver.Bounds{})
			return err
		},
		func() error {
			_, err := x.Query(context.Background(), stmt.New("SELECT nope FROM t", nil), driver.Bounds{})
			return err
		},
		func() error {
			_, err := x.Query(context.Background(), stmt.New("WITH w AS (SELECT 1) INSERT INTO t VALUES (9)", nil), driver.Bounds{})
			return err
		},
		func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			_, err := x.Query(ctx, stmt.New("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r", nil), driver.Bounds{})
			return err
		},
	} {
		_ = run()
		require.NoError(t, x.Exec(context.Background(), []driver.Statement{stmt.New("INSERT INTO t VALUES (1)", nil)}, driver.Write{Tx: false}), "Exec after run %d", i)
		_, err := db.Exec("INSERT INTO t VALUES (1)")
		require.NoError(t, err, "another user of the pool after run %d", i)
	}
	require.Equal(t, 8, count(t, db, "t"))
}

// TestTimeLimitOnSQLite: SQLite checks for interruption at each step of a
// loop, so a WITH RECURSIVE without end and randomblob called once per row
// stop at the limit. One call of a function that builds a large value
// runs to its end whatever the limit (here printf of 100 MB); what bounds
// it is SQLITE_LIMIT_LENGTH, which, lowered on a connection, fails such a
// call at once.
func TestTimeLimitOnSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", fileDSN(t))
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	x := sqlexec.New(db, engine.SQLite)
	const limit = 100 * time.Millisecond
	for _, q := range []string{
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT sum(length(randomblob(100000))) FROM r",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r ORDER BY n DESC",
	} {
		requireStopsAt(t, x, q, limit)
	}

	// One call that never checks: it ends well after the limit.
	const huge = "SELECT length(printf('%.*c', 100000000, 'x'))"
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	start := time.Now()
	_, err = x.Query(ctx, stmt.New(huge, nil), driver.Bounds{})
	cancel()
	require.Error(t, err, "the run passed its deadline and still answered")
	t.Logf("one printf of 100 MB with a 1ms limit took %v", time.Since(start))

	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	const sqliteLimitLength = 0 // SQLITE_LIMIT_LENGTH
	if _, err := sqlite.Limit(conn, sqliteLimitLength, 10<<20); err != nil {
		t.Fatal(err)
	}
	conn.Close() // back to the pool of one, limit kept
	start = time.Now()
	_, err = x.Query(context.Background(), stmt.New(huge, nil), driver.Bounds{})
	if err == nil || !strings.Contains(err.Error(), "too big") || time.Since(start) > time.Second {
		t.Fatalf("with SQLITE_LIMIT_LENGTH at 10 MiB: %v after %v, want a fast 'too big'", err, time.Since(start))
	}
}

// requireStopsAt runs q, which never ends, on x under a deadline of limit
// (the run's and its context's), and requires a deadline error within a
// second of it.
func requireStopsAt(t *testing.T, x *sqlexec.Executor, q string, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	_, err := x.Query(ctx, stmt.New(q, nil), driver.Bounds{Timeout: limit})
	took := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded, "%s", q)
	require.LessOrEqual(t, took, limit+time.Second, "%s stopped after, limit %v", q, limit)
}

// TestBoundsWhileReading: MaxRows ends the read, and MaxBytes fails it as
// soon as the rows read weigh more, with ErrResultTooLarge.
func TestBoundsWhileReading(t *testing.T) {
	x := sqlexec.New(openDB(t), engine.SQLite)
	ctx := context.Background()
	const q = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n, 'abcdefgh' AS s FROM r"
	res, err := x.Query(ctx, stmt.New(q, nil), driver.Bounds{MaxRows: 3, MaxBytes: 1000})
	require.NoError(t, err, "MaxRows 3: %v, %v", res, err)
	require.Len(t, res.Rows, 3, "MaxRows 3: %v, %v", res, err)
	// Each row weighs 2 + 2 + 1 (n < 10) + 10 = 15 bytes: 6 rows are 90.
	res, err = x.Query(ctx, stmt.New(q, nil), driver.Bounds{MaxRows: 6, MaxBytes: 90})
	require.NoError(t, err, "6 rows in 90 bytes: %v, %v", res, err)
	require.Len(t, res.Rows, 6, "6 rows in 90 bytes: %v, %v", res, err)
	_, err = x.Query(ctx, stmt.New(q, nil), driver.Bounds{MaxRows: 7, MaxBytes: 90})
	require.ErrorIs(t, err, driver.ErrResultTooLarge, "7 rows in 90 bytes")
	// Without MaxRows the query has no end; the byte bound ends it.
	_, err = x.Query(ctx, stmt.New(q, nil), driver.Bounds{MaxBytes: 1 << 20})
	require.ErrorIs(t, err, driver.ErrResultTooLarge, "an endless query under 1 MiB")
}

// TestNotAQuery: Query refuses a text that does not begin as a query,
// past comments; comments that MySQL and MariaDB execute are text.
func TestNotAQuery(t *testing.T) {
	lite := sqlexec.New(openDB(t), engine.SQLite)
	my := sqlexec.New(openDB(t), engine.MySQL) // only the check is reached
	ctx := context.Background()
	for _, q := range []string{"DROP TABLE t", "  -- c\n DELETE FROM t", "/* x */ UPDATE t SET id = 1", "PRAGMA query_only = 0",
		"/*!50000 DROP TABLE t */ SELECT 1", "/*M!100000 DROP TABLE t */ SELECT 1", "", "-- only a comment", "selectx 1"} {
		_, err := lite.Query(ctx, stmt.New(q, nil), driver.Bounds{})
		assert.ErrorContains(t, err, "begins with SELECT", "Query(%q)", q)
	}
	_, err := my.Query(ctx, stmt.New("# comment\nDROP TABLE t", nil), driver.Bounds{})
	assert.ErrorContains(t, err, "begins with SELECT", "MySQL '#' comment then DROP")
	for _, q := range []string{"SELECT 1", " -- c\n/* d */ select 1", "WITH a AS (SELECT 1) SELECT * FROM a", "VALUES (1)"} {
		_, err := lite.Query(ctx, stmt.New(q, nil), driver.Bounds{})
		assert.NoError(t, err, "Query(%q)", q)
	}
}

// TestReadOnlyOnServers: what the engines refuse inside a run's read-only
// transaction and stop at its time limit, even with a context that has no
// deadline: PostgreSQL a data-modifying CTE and a side-effecting function
// (nextval), MariaDB a stored function that inserts; pg_sleep and SLEEP
// end at the limit on the server. Each write is shown to work outside a
// run first, so that the refusal is the guard's.
func TestReadOnlyOnServers(t *testing.T) {
	ctx := context.Background()
	t.Run("postgres", func(t *testing.T) {
		db := testdb.Postgres(t)
		mustExec(t, db, "CREATE TABLE t (id integer)")
		mustExec(t, db, "CREATE SEQUENCE s")
		mustExec(t, db, "INSERT INTO t SELECT nextval('s')")
		x := sqlexec.New(db, engine.PostgreSQL)
		t.Cleanup(func() { x.Close() })
		for _, q := range []string{
			"WITH d AS (DELETE FROM t RETURNING id) SELECT id FROM d",
			"SELECT nextval('s')",
			"SELECT id FROM t FOR UPDATE",
		} {
			_, err := x.Query(ctx, stmt.New(q, nil), driver.Bounds{})
			assert.ErrorContains(t, err, "read-only transaction", "%s", q)
		}
		var id, next int
		if err := db.QueryRow("SELECT id, nextval('s') FROM t").Scan(&id, &next); err != nil || id != 1 || next != 2 {
			t.Fatalf("after the runs: id %d, nextval %d, %v", id, next, err)
		}
		start := time.Now()
		_, err := x.Query(ctx, stmt.New("SELECT pg_sleep(5)", nil), driver.Bounds{Timeout: 200 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "statement timeout") || time.Since(start) > 3*time.Second {
			t.Fatalf("pg_sleep(5) with a 200ms limit: %v after %v", err, time.Since(start))
		}
	})
	t.Run("mysql", func(t *testing.T) {
		db := testdb.MySQL(t)
		mustExec(t, db, "CREATE TABLE t (id integer)")
		mustExec(t, db, "CREATE FUNCTION f() RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO t VALUES (7); RETURN 1; END")
		var one int
		if err := db.QueryRow("SELECT f()").Scan(&one); err != nil || count(t, db, "t") != 1 {
			t.Fatalf("f() outside a run: %v, %d rows", err, count(t, db, "t"))
		}
		x := sqlexec.New(db, engine.MySQL)
		t.Cleanup(func() { x.Close() })
		if _, err := x.Query(ctx, stmt.New("SELECT f()", nil), driver.Bounds{}); err == nil || !strings.Contains(err.Error(), "READ ONLY") {
			t.Errorf("SELECT f() in a run: %v, want a read-only refusal", err)
		}
		require.Equal(t, 1, count(t, db, "t"))
		start := time.Now()
		_, err := x.Query(ctx, stmt.New("SELECT SLEEP(5)", nil), driver.Bounds{Timeout: 200 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "max_statement_time") || time.Since(start) > 3*time.Second {
			t.Fatalf("SLEEP(5) with a 200ms limit: %v after %v", err, time.Since(start))
		}
	})
}
