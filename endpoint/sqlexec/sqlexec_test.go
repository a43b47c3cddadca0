package sqlexec_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/executortest"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/cputime"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
)

// tableT makes the table t the tests read: a row of each type SQLite
// stores, and NULLs.
const tableT = `CREATE TABLE t (id INTEGER, name TEXT, score REAL, data BLOB, note TEXT);
	INSERT INTO t VALUES (1, 'ann', 1.5, x'6869', NULL), (2, 'bob', 2, NULL, NULL), (3, 'cy', NULL, x'', NULL)`

// tableTDB opens a database in memory (testdb.SQLite) holding tableT.
func tableTDB(t *testing.T) *sql.DB {
	t.Helper()
	db := testdb.SQLite(t)
	mustExec(t, db, tableT)
	return db
}

func TestQuery(t *testing.T) {
	x := sqlexec.New(tableTDB(t), engine.SQLite)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		query   string
		args    []any
		columns []string
		types   []string
		rows    [][]any
	}{
		{"declared types, []byte as string, NULL",
			"SELECT id, name, score, data, note FROM t ORDER BY id", nil,
			[]string{"id", "name", "score", "data", "note"},
			[]string{"INTEGER", "TEXT", "REAL", "BLOB", "TEXT"},
			[][]any{{int64(1), "ann", 1.5, "hi", nil}, {int64(2), "bob", 2.0, nil, nil}, {int64(3), "cy", nil, "", nil}}},
		{"expressions typed by their values",
			"SELECT count(*) AS n, sum(score) AS s, max(name) AS m, NULL AS z FROM t WHERE id >= ?", []any{int64(2)},
			[]string{"n", "s", "m", "z"},
			[]string{"INTEGER", "REAL", "TEXT", ""},
			[][]any{{int64(2), 2.0, "cy", nil}}},
		{"bound text argument",
			"SELECT id FROM t WHERE name = ?", []any{"bob' OR 1=1 --"},
			[]string{"id"}, []string{"INTEGER"}, [][]any{}},
		{"no rows is an empty slice",
			"SELECT id FROM t WHERE id > ?", []any{int64(99)},
			[]string{"id"}, []string{"INTEGER"}, [][]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := x.Query(ctx, stmt.New(tc.query, tc.args), driver.Bounds{})
			require.NoError(t, err)
			if !reflect.DeepEqual(res.Columns, tc.columns) || !reflect.DeepEqual(res.Types, tc.types) || !reflect.DeepEqual(res.Rows, tc.rows) {
				t.Fatalf("got %q %q %#v, want %q %q %#v", res.Columns, res.Types, res.Rows, tc.columns, tc.types, tc.rows)
			}
		})
	}
}

func TestQueryErrors(t *testing.T) {
	x := sqlexec.New(tableTDB(t), engine.SQLite)
	_, err := x.Query(context.Background(), stmt.New("SELECT * FROM missing", nil), driver.Bounds{})
	require.Error(t, err, "no error for a missing table")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := x.Query(ctx, stmt.New("SELECT 1", nil), driver.Bounds{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v, want context.Canceled", err)
	}
	require.ErrorIs(t, x.Exec(ctx, []driver.Statement{stmt.New("DELETE FROM t", nil)}, driver.Write{Tx: false}), context.Canceled, "cancelled Exec")
}

func TestExec(t *testing.T) {
	db := tableTDB(t)
	x := sqlexec.New(db, engine.SQLite)
	if x.Engine() != engine.SQLite {
		t.Fatalf("Dialect = %v", x.Engine())
	}
	ctx := context.Background()
	require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New("INSERT INTO t (id, name) VALUES (?, ?)", []any{int64(4), "dee"})}, driver.Write{Tx: false}))
	res, err := x.Query(ctx, stmt.New("SELECT name FROM t WHERE id = ?", []any{int64(4)}), driver.Bounds{})
	require.NoError(t, err, "after Exec: %v, %v", res, err)
	require.Equal(t, [][]any{{"dee"}}, res.Rows, "after Exec: %v, %v", res, err)
	require.Error(t, x.Exec(ctx, []driver.Statement{stmt.New("INSERT INTO nowhere VALUES (1)", nil)}, driver.Write{Tx: false}), "no error for a bad statement")
}

// TestQueryRowsApart: rows read in blocks are each a slice of their own:
// as many rows as asked, in order, each as long as its capacity, so that
// writing to one row or appending to it never changes another; a []byte
// value (a BLOB) reads as a string of its own, not the driver's buffer.
// Results narrow enough to come in one allocation and wider ones both.
func TestQueryRowsApart(t *testing.T) {
	x := sqlexec.New(tableTDB(t), engine.SQLite)
	for _, width := range []int{1, 2, 4, 5, 9} {
		cols := ""
		for c := 1; c < width; c++ {
			cols += fmt.Sprintf("i + %d AS c%d, ", c-1, c)
		}
		cols += "CAST(printf('b%d', i) AS BLOB) AS b"
		q := stmt.New("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 300) SELECT "+cols+" FROM r", nil)
		wantRow := func(i int) []any {
			row := make([]any, width)
			for c := 0; c < width-1; c++ {
				row[c] = int64(i + c)
			}
			row[width-1] = fmt.Sprintf("b%d", i)
			return row
		}
		for _, maxRows := range []int{0, 1, 3, 100, 299} {
			res, err := x.Query(context.Background(), q, driver.Bounds{MaxRows: maxRows})
			require.NoError(t, err)
			want := maxRows
			if want == 0 {
				want = 300
			}
			if len(res.Rows) != want || len(res.Columns) != width || cap(res.Columns) != width || len(res.Types) != width || cap(res.Types) != width {
				t.Fatalf("width %d, MaxRows %d: %d rows, columns %q, types %q", width, maxRows, len(res.Rows), res.Columns, res.Types)
			}
			for i, row := range res.Rows {
				require.Equal(t, width, cap(row), "width %d, MaxRows %d: row %d is %#v (cap %d)", width, maxRows, i, row, cap(row))
				require.Equal(t, wantRow(i+1), row, "width %d, MaxRows %d: row %d is %#v (cap %d)", width, maxRows, i, row, cap(row))
			}
			if want < 2 {
				continue
			}
			res.Rows[0] = append(res.Rows[0], "extra")
			res.Rows[0][0] = "changed"
			res.Columns = append(res.Columns, "extra")
			require.Equal(t, wantRow(2), res.Rows[1], "width %d, MaxRows %d: changing row 0 changed row 1 to %#v, types %q", width, maxRows, res.Rows[1], res.Types)
			require.NotEqual(t, "extra", res.Types[0], "width %d, MaxRows %d: changing row 0 changed row 1 to %#v, types %q", width, maxRows, res.Rows[1], res.Types)
		}
	}
}

// TestQueryAllocations: reading rows costs the executor no allocation
// per row of its own (rows come in blocks, a BLOB is copied once), beyond
// what the driver allocates for the values; a read of 200 small integers
// allocates little more than a read of one.
func TestQueryAllocations(t *testing.T) {
	x := sqlexec.New(tableTDB(t), engine.SQLite)
	ctx := context.Background()
	allocs := func(n int) float64 {
		q := stmt.New("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < ?) SELECT i % 100 FROM r", []any{int64(n)})
		return testing.AllocsPerRun(50, func() {
			res, err := x.Query(ctx, q, driver.Bounds{})
			require.NoError(t, err, "%d rows: %v", len(res.Rows), err)
			require.Len(t, res.Rows, n, "%d rows: %v", len(res.Rows), err)
		})
	}
	one, many := allocs(1), allocs(200)
	// 200 rows: blocks of 1, 2, 4, ..., 64 rows (8) and the slice of rows
	// growing (about 10 times).
	t.Logf("one row %v, 200 rows %v", one, many)
	if many-one > 25 {
		t.Errorf("200 rows allocate %v times, one row %v: more than 25 allocations for 199 more rows", many, one)
	}
}

// fileDSN is a SQLite file in t's directory, opened as the example server
// opens its database.
func fileDSN(t *testing.T) string {
	return "file:" + filepath.Join(t.TempDir(), "bounds.db") + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
}

// fileDB opens a pool of at most conns connections (0: no bound) on the
// SQLite file dsn (testdb.SQLitePool) and runs ddl through it: a test's
// writing pool, its tables made.
func fileDB(t *testing.T, dsn string, conns int, ddl string) *sql.DB {
	t.Helper()
	db := testdb.SQLitePool(t, dsn, conns)
	mustExec(t, db, ddl)
	return db
}

// readOnly opens a read-only pool (query_only) of at most conns
// connections (0: no bound) on the SQLite file dsn, the run pool beside
// a writer (sqlexec.WithReadOnly).
func readOnly(tb testing.TB, dsn string, conns int) *sql.DB {
	tb.Helper()
	return testdb.SQLitePool(tb, dsn+"&_pragma=query_only(1)", conns)
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
	db := fileDB(t, dsn, 0, "CREATE TABLE t (id INTEGER); INSERT INTO t VALUES (1), (2)")
	ro := readOnly(t, dsn, 0)
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
	db := fileDB(t, fileDSN(t), 1, "CREATE TABLE t (id INTEGER)")
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
	db := testdb.SQLitePool(t, fileDSN(t), 1)
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
	_, err := x.Query(ctx, stmt.New(huge, nil), driver.Bounds{})
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
// (the run's and its context's), and requires a deadline error: q being
// endless, its return is the interrupt; the bound (interruptHang) only
// tells a hang from a loaded machine.
func requireStopsAt(t *testing.T, x *sqlexec.Executor, q string, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	_, err := x.Query(ctx, stmt.New(q, nil), driver.Bounds{Timeout: limit})
	took := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded, "%s", q)
	require.Less(t, took, limit+interruptHang, "%s not interrupted, limit %v", q, limit)
}

// TestBoundsWhileReading: MaxRows ends the read, and MaxBytes fails it as
// soon as the rows read weigh more, with ErrResultTooLarge.
func TestBoundsWhileReading(t *testing.T) {
	x := sqlexec.New(tableTDB(t), engine.SQLite)
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
	lite := sqlexec.New(tableTDB(t), engine.SQLite)
	my := sqlexec.New(tableTDB(t), engine.MySQL) // only the check is reached
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

// TestConformance runs the Executor suite on SQLite in memory (one
// connection, as each connection of :memory: is a database of its own) and
// on a file, where the pool opens several connections and concurrent
// queries really run at once.
func TestConformance(t *testing.T) {
	for _, c := range []struct {
		name string
		dsn  func(t *testing.T) string
		max  int
	}{
		{"memory", func(*testing.T) string { return ":memory:" }, 1},
		{"file", func(t *testing.T) string {
			return "file:" + filepath.Join(t.TempDir(), "executortest.db") + "?_pragma=busy_timeout(5000)"
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			executortest.Run(t, func(t *testing.T) driver.Executor {
				db := testdb.SQLitePool(t, c.dsn(t), c.max)
				return sqlexec.New(db, engine.SQLite)
			})
		})
	}
}

// TestContainsIgnoresTheDatabaseLocale: PostgreSQL's case-insensitive
// test (engine.Engine.Contains, insight's icontains) matches the same
// texts in a database of LC_CTYPE C as in one of the server's default
// (C.UTF-8 in CI), and as MySQL and ClickHouse do: every letter folded,
// 'ÜNÏ' in 'ünïcode'. With lower() under the database's locale, the C
// database folded ASCII letters only.
func TestContainsIgnoresTheDatabaseLocale(t *testing.T) {
	base := testdb.Require(t, testdb.PostgresEnv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := sql.Open("pgx", base)
	require.NoError(t, err)
	defer admin.Close()
	name := fmt.Sprintf("endpointkit_test_c_%d", time.Now().UnixNano())
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name) })
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/" + name
	cdb, err := sql.Open("pgx", u.String())
	require.NoError(t, err)
	t.Cleanup(func() { cdb.Close() }) // before the drop
	for label, db := range map[string]*sql.DB{"LC_CTYPE C": cdb, "server default": testdb.Postgres(t)} {
		matches := func(needle string) []string {
			t.Helper()
			b := placeholder.NewBuilder(engine.PostgreSQL)
			b.WriteString("SELECT s FROM (VALUES ('Ünïcode'), ('ünïcode'), ('UNICODE'), ('Chrome'), ('chrome')) AS v(s) WHERE ")
			engine.PostgreSQL.Contains(b, func() { b.WriteString("s") }, needle)
			b.WriteString(" ORDER BY s COLLATE \"C\"")
			return testdb.Strings(t, db, b.SQL(), b.Args()...)
		}
		for needle, want := range map[string]string{
			"ÜNÏ":  "[Ünïcode ünïcode]",
			"ünï":  "[Ünïcode ünïcode]",
			"CHR":  "[Chrome chrome]",
			"rome": "[Chrome chrome]",
			"unic": "[UNICODE]",
		} {
			assert.Equal(t, want, fmt.Sprint(matches(needle)), "%s: icontains %q matches", label, needle)
		}
	}
}

// testEngine is an engine the tests run on: its name, the variable that
// enables it (none for SQLite, always there) and how a test opens a
// database of its own on it.
type testEngine struct {
	name string
	env  string
	eng  engine.Engine
	open func(testing.TB) *sql.DB
}

// serverEngines are the server engines of the matrix: PostgreSQL (pgx) and
// MySQL (go-sql-driver; MariaDB in CI).
var serverEngines = []testEngine{
	{"postgres", testdb.PostgresEnv, engine.PostgreSQL, testdb.Postgres},
	{"mysql", testdb.MySQLEnv, engine.MySQL, testdb.MySQL},
}

// TestEngineConformance runs the Executor suite on PostgreSQL (pgx) and
// MySQL (go-sql-driver; MariaDB in CI), each check on a database of its
// own. An engine whose variable (scripts/engines env prints them) is unset
// is skipped, naming it.
func TestEngineConformance(t *testing.T) {
	for _, e := range serverEngines {
		t.Run(e.name, func(t *testing.T) {
			testdb.Require(t, e.env)
			executortest.Run(t, func(t *testing.T) driver.Executor {
				return sqlexec.New(e.open(t), e.eng)
			})
		})
	}
}

// BenchmarkQuerySQLite sets Executor.Query against what a hand-written
// caller does with the same SQL text on the same pool (db.QueryContext
// with a cancellable context, Columns, Scan into []any, []byte turned
// into string), on a SQLite file in WAL opened as the example server opens
// it: 10,000 demo events, runs on a query_only pool (WithReadOnly).
// select1 is SELECT 1, the executor's whole overhead; count is a count of
// one event's rows scoped to a project, as sql/scope writes it, with
// both values bound.
//
// prepared is the hand-written caller again on a statement it prepared
// once (db.PrepareContext), as the executor keeps its statements: the
// floor of the executor's way, where direct parses the text on every run.
//
// The sides run in turn, benchBlock runs at a time, each going first in
// its turn, so that all see the same machine: the figures are
// executor-ns/op, direct-ns/op and prepared-ns/op (wall time of one
// query), the same in process CPU time (...-cpu-ns/op: user and system,
// GC included; on a machine shared with other work steadier than wall
// time, which counts waits for a core), executor/direct and
// executor/prepared (ratios of wall time), cpu-executor/direct and
// cpu-executor/prepared (of CPU time), and executor-allocs/op,
// direct-allocs/op and prepared-allocs/op (testing.AllocsPerRun before
// the timed loop); ns/op and allocs/op are those of the three together.
//
//	go test -run '^$' -bench BenchmarkQuerySQLite -benchmem -count 5 ./endpoint/sqlexec/
//
// Every side's context carries the deadline the Service gives a run by
// default (30 s), made afresh for each run, so that the ratios are the
// executor's own cost; its Bounds are the Service's other defaults (101
// rows, 10 MiB).
func BenchmarkQuerySQLite(b *testing.B) {
	dsn := "file:" + filepath.Join(b.TempDir(), "bench.db") + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	db := openBench(b, dsn)
	require.NoError(b, demo.Load(context.Background(), db, 10000, 1))
	ro := openBench(b, dsn+"&_pragma=query_only(1)")
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	b.Cleanup(func() { x.Close() })
	// kept runs on a read-only pool whose connections keep their
	// statements (KeepStatements).
	roKept, err := sqlexec.Open("sqlite", dsn+"&_pragma=query_only(1)", engine.SQLite, sqlexec.KeepStatements(0))
	require.NoError(b, err)
	b.Cleanup(func() { roKept.Close() })
	xKept := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(roKept))
	bounds := driver.Bounds{MaxRows: 101, MaxBytes: 10 << 20, Timeout: 30 * time.Second}

	for _, bc := range []struct {
		name  string
		query string
		args  []any
		want  any
	}{
		{"select1", "SELECT 1", nil, int64(1)},
		{"count", `SELECT count(*) AS n FROM (SELECT * FROM "events" WHERE "events".project_id = ?) AS "events" WHERE event = ?`, []any{"1", "purchase"}, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			st := stmt.New(bc.query, bc.args)
			executor := func() {
				ctx, cancel := context.WithTimeout(context.Background(), bounds.Timeout)
				defer cancel()
				res, err := x.Query(ctx, st, bounds)
				require.NoError(b, err)
				require.Len(b, res.Rows, 1)
			}
			kept := func() {
				ctx, cancel := context.WithTimeout(context.Background(), bounds.Timeout)
				defer cancel()
				res, err := xKept.Query(ctx, st, bounds)
				require.NoError(b, err, "kept: %v, %v", res, err)
				require.Len(b, res.Rows, 1, "kept: %v, %v", res, err)
			}
			direct := func() {
				ctx, cancel := context.WithTimeout(context.Background(), bounds.Timeout)
				defer cancel()
				rows := directQuery(b, ctx, ro, bc.query, bc.args)
				require.Len(b, rows, 1)
			}
			// Both sides read the same answer.
			ctx := context.Background()
			res, err := x.Query(ctx, st, bounds)
			require.NoError(b, err)
			if got := directQuery(b, ctx, ro, bc.query, bc.args); len(got) != 1 || len(res.Rows) != 1 || got[0][0] != res.Rows[0][0] {
				b.Fatalf("executor read %v, direct %v", res.Rows, got)
			}
			if bc.want != nil && res.Rows[0][0] != bc.want {
				b.Fatalf("got %v, want %v", res.Rows[0][0], bc.want)
			}
			execAllocs := testing.AllocsPerRun(200, executor)
			directAllocs := testing.AllocsPerRun(200, direct)

			// prepared is direct on a statement prepared once, as the
			// executor's are: the floor of what the executor does.
			prep, err := ro.PrepareContext(ctx, bc.query)
			require.NoError(b, err)
			defer prep.Close()
			prepared := func() {
				ctx, cancel := context.WithTimeout(context.Background(), bounds.Timeout)
				defer cancel()
				rows, err := prep.QueryContext(ctx, bc.args...)
				require.NoError(b, err)
				got := testdb.Rows(b, rows)
				require.Len(b, got, 1)
			}
			preparedAllocs := testing.AllocsPerRun(200, prepared)

			keptAllocs := testing.AllocsPerRun(200, kept)

			sides := []func(){executor, direct, prepared, kept}
			names := []string{"executor", "direct", "prepared", "kept"}
			var wall, cpu [4]time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for done, round := 0, 0; done < b.N; round++ {
				m := min(benchBlock, b.N-done)
				// Each side goes first, second and third in turn.
				for k := range sides {
					j := (round + k) % len(sides)
					c0, _ := cputime.Process()
					t0 := time.Now()
					for range m {
						sides[j]()
					}
					wall[j] += time.Since(t0)
					c1, _ := cputime.Process()
					cpu[j] += c1 - c0
				}
				done += m
			}
			n := float64(b.N)
			for j, name := range names {
				b.ReportMetric(float64(wall[j])/n, name+"-ns/op")
				if cpu[j] > 0 {
					b.ReportMetric(float64(cpu[j])/n, name+"-cpu-ns/op")
				}
			}
			b.ReportMetric(float64(wall[0])/float64(wall[1]), "executor/direct")
			b.ReportMetric(float64(wall[0])/float64(wall[2]), "executor/prepared")
			if cpu[1] > 0 && cpu[2] > 0 {
				b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "cpu-executor/direct")
				b.ReportMetric(float64(cpu[0])/float64(cpu[2]), "cpu-executor/prepared")
			}
			b.ReportMetric(float64(wall[3])/float64(wall[1]), "kept/direct")
			b.ReportMetric(keptAllocs, "kept-allocs/op")
			b.ReportMetric(preparedAllocs, "prepared-allocs/op")
			b.ReportMetric(execAllocs, "executor-allocs/op")
			b.ReportMetric(directAllocs, "direct-allocs/op")
		})
	}
}

// benchBlock is how many runs of one side BenchmarkQuerySQLite times
// together before the next side's.
const benchBlock = 50

// directQuery is the hand-written read of BenchmarkQuerySQLite.
func directQuery(b *testing.B, ctx context.Context, db *sql.DB, query string, args []any) [][]any {
	rows, err := db.QueryContext(ctx, query, args...)
	require.NoError(b, err)
	return testdb.Rows(b, rows)
}

func openBench(b *testing.B, dsn string) *sql.DB {
	b.Helper()
	db := testdb.SQLitePool(b, dsn, 0)
	require.NoError(b, db.Ping())
	return db
}

// TestSchemaChangeUnderPreparedStatement: a statement kept prepared keeps
// working after its table changes shape, on every engine: SQLite prepares
// it again by itself, PostgreSQL refuses the old plan once and the
// Executor prepares it anew. A table that is gone fails the run, and the
// next run after it is back works. PostgreSQL and MySQL run when their
// variables are set (scripts/engines env).
func TestSchemaChangeUnderPreparedStatement(t *testing.T) {
	sqlite := testEngine{"sqlite", "", engine.SQLite, func(t testing.TB) *sql.DB { return tableTDB(t.(*testing.T)) }}
	for _, e := range append([]testEngine{sqlite}, serverEngines...) {
		t.Run(e.name, func(t *testing.T) {
			if e.env != "" {
				testdb.Require(t, e.env)
			}
			db := e.open(t)
			x := sqlexec.New(db, e.eng)
			t.Cleanup(func() { x.Close() })
			ctx := context.Background()
			exec := func(q string) {
				t.Helper()
				_, err := db.ExecContext(ctx, q)
				require.NoError(t, err, "%s", q)
			}
			columns := func() []string {
				t.Helper()
				res, err := x.Query(ctx, stmt.New("SELECT * FROM shape ORDER BY a", nil), driver.Bounds{})
				require.NoError(t, err, "query")
				return res.Columns
			}
			exec("CREATE TABLE shape (a INTEGER)")
			exec("INSERT INTO shape VALUES (1)")
			got := columns()
			require.True(t, slices.Equal(got, []string{"a"}), "columns %v", got)
			exec("ALTER TABLE shape ADD COLUMN b INTEGER")
			if got := columns(); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("after ADD COLUMN: columns %v", got)
			}
			exec("DROP TABLE shape")
			_, err := x.Query(ctx, stmt.New("SELECT * FROM shape ORDER BY a", nil), driver.Bounds{})
			require.Error(t, err, "a query of a dropped table ran")
			exec("CREATE TABLE shape (a INTEGER, c VARCHAR(10))")
			if got := columns(); !slices.Equal(got, []string{"a", "c"}) {
				t.Fatalf("after re-creating: columns %v", got)
			}
		})
	}
}
