package sqlexec_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/executortest"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
)

// keptPools opens an SQLite file as the example server does: a writing
// pool, and a read-only run pool whose connections keep their statements
// (KeepStatements, at most keep each); the file has the table t of tableTDB.
func keptPools(t *testing.T, keep int) (db, ro *sql.DB) {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "kept.db") + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
	db = fileDB(t, dsn, 0, tableT)
	ro, err := sqlexec.Open("sqlite", dsn+"&_pragma=query_only(1)", engine.SQLite, sqlexec.KeepStatements(keep))
	require.NoError(t, err)
	t.Cleanup(func() { ro.Close() })
	return db, ro
}

// TestKeptStatementsAnswerAlike: a run on the kept statements of a run
// pool (KeepStatements) answers what the same run answers through
// database/sql's statements, for every type SQLite stores and the
// arguments a run binds, run after run on the same connection.
func TestKeptStatementsAnswerAlike(t *testing.T) {
	db, ro := keptPools(t, 0)
	ro.SetMaxOpenConns(1)
	plainRO := readOnly(t, fileOf(t, db), 0)
	kept := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	plain := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(plainRO))
	ctx := context.Background()
	at := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"SELECT * FROM t ORDER BY id", nil},
		{"SELECT id, name FROM t WHERE name = ? AND score >= ? ORDER BY id", []any{"bob", 1.0}},
		{"SELECT count(*) AS n, sum(score) AS s, max(data) AS d FROM t WHERE id > ?", []any{int64(1)}},
		{"SELECT ? AS b, ? AS n, ? AS at, ? AS raw", []any{true, nil, at, []byte("xy")}},
		{"SELECT 1 WHERE 0", nil},
	} {
		for run := range 3 { // the first prepares, the next reuse the kept statement
			want, werr := plain.Query(ctx, stmt.New(q.sql, q.args), driver.Bounds{})
			got, gerr := kept.Query(ctx, stmt.New(q.sql, q.args), driver.Bounds{})
			require.NoError(t, werr, "%s (run %d): %v; through database/sql: %v", q.sql, run, gerr, werr)
			require.NoError(t, gerr, "%s (run %d): %v; through database/sql: %v", q.sql, run, gerr, werr)
			require.Equal(t, want, got, "%s (run %d):\n kept", q.sql, run)
		}
	}
	require.Equal(t, 5, sqlexec.KeptOf(t, ro)(), "the run pool's connection keeps")
	// The wrong number of arguments is the run's error, naming the argument.
	if _, err := kept.Query(ctx, stmt.New("SELECT ?", nil), driver.Bounds{}); err == nil || !strings.Contains(err.Error(), "argument") {
		t.Fatalf("a run missing its argument: %v", err)
	}
	// Not a query: refused before any statement is prepared, kept or not.
	if _, err := kept.Query(ctx, stmt.New("DELETE FROM t", nil), driver.Bounds{}); err == nil {
		t.Fatal("a DELETE ran on the kept path")
	}
}

// fileOf returns the DSN of db's SQLite file, for a pool of the same file
// beside it (readOnly: one that does not keep statements).
func fileOf(t *testing.T, db *sql.DB) string {
	t.Helper()
	var file string
	require.NoError(t, db.QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file))
	return "file:" + file + "?_pragma=busy_timeout(5000)"
}

// TestKeptStatementsClosedWithTheirConnection: a connection keeps at most
// its number of statements, and closes them when database/sql closes it,
// before the connection itself (SQLite would otherwise keep a closed
// connection's memory for as long as a statement of it is open).
func TestKeptStatementsClosedWithTheirConnection(t *testing.T) {
	db, ro := keptPools(t, 2)
	ro.SetMaxOpenConns(1)
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	ctx := context.Background()
	for i := range 5 {
		q := "SELECT id FROM t WHERE id > " + string(rune('0'+i))
		_, err := x.Query(ctx, stmt.New(q, nil), driver.Bounds{})
		require.NoError(t, err)
	}
	kept := sqlexec.KeptOf(t, ro)
	require.Equal(t, 2, kept(), "the connection keeps")
	ro.SetMaxIdleConns(0) // closes the idle connection
	require.Equal(t, 0, kept(), "the closed connection still keeps")
}

// TestKeptStatementsStopWithTheContext: on the kept path, SQLite stops a
// query that never ends at the run's deadline (the driver watches the
// context while the query starts), and a query whose rows keep coming
// stops at the next row once the context ends.
func TestKeptStatementsStopWithTheContext(t *testing.T) {
	db, ro := keptPools(t, 0)
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	for _, q := range []string{
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
	} {
		requireStopsAt(t, x, q, 100*time.Millisecond)
	}
	// And the connection still serves the next run.
	res, err := x.Query(context.Background(), stmt.New("SELECT count(*) FROM t", nil), driver.Bounds{})
	if err != nil || res.Rows[0][0] != int64(3) {
		t.Fatalf("after the stopped runs: %v, %v", res, err)
	}
}

// TestKeptStatementsBounds: MaxRows and MaxBytes hold on the kept path.
func TestKeptStatementsBounds(t *testing.T) {
	db, ro := keptPools(t, 0)
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	ctx := context.Background()
	const q = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n, 'abcdefgh' AS s FROM r"
	res, err := x.Query(ctx, stmt.New(q, nil), driver.Bounds{MaxRows: 6, MaxBytes: 90})
	require.NoError(t, err, "6 rows in 90 bytes: %v, %v", res, err)
	require.Len(t, res.Rows, 6, "6 rows in 90 bytes: %v, %v", res, err)
	if _, err := x.Query(ctx, stmt.New(q, nil), driver.Bounds{MaxRows: 7, MaxBytes: 90}); !errors.Is(err, driver.ErrResultTooLarge) {
		t.Fatalf("7 rows in 90 bytes: %v, want ErrResultTooLarge", err)
	}
}

// TestKeptStatementsAfterSchemaChange: a kept statement whose table
// changed shape answers the new shape; one whose table is gone fails the
// run, and the next run after the table is back works.
func TestKeptStatementsAfterSchemaChange(t *testing.T) {
	db, ro := keptPools(t, 0)
	ro.SetMaxOpenConns(1)
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	ctx := context.Background()
	columns := func() ([]string, error) {
		res, err := x.Query(ctx, stmt.New("SELECT * FROM shape", nil), driver.Bounds{})
		if err != nil {
			return nil, err
		}
		return res.Columns, nil
	}
	mustExec(t, db, "CREATE TABLE shape (a INTEGER)")
	c, err := columns()
	require.NoError(t, err, "before: %v, %v", c, err)
	require.Equal(t, []string{"a"}, c, "before: %v, %v", c, err)
	mustExec(t, db, "ALTER TABLE shape ADD COLUMN b TEXT")
	if c, err := columns(); err != nil || !reflect.DeepEqual(c, []string{"a", "b"}) {
		t.Fatalf("after ADD COLUMN: %v, %v", c, err)
	}
	mustExec(t, db, "DROP TABLE shape")
	if _, err := columns(); err == nil {
		t.Fatal("a run of a dropped table answered")
	}
	mustExec(t, db, "CREATE TABLE shape (z TEXT)")
	if c, err := columns(); err != nil || !reflect.DeepEqual(c, []string{"z"}) {
		t.Fatalf("after the table is back: %v, %v", c, err)
	}
}

// TestLimitsNeedTheDriversConnections: WithSQLiteLimits cannot reach the
// connections of a pool that keeps statements (modernc.org/sqlite's Limit
// asks for its own): every run and Exec fails with ErrLimitsOnKeptPool
// rather than run without the limits.
func TestLimitsNeedTheDriversConnections(t *testing.T) {
	db, ro := keptPools(t, 0)
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro), sqlexec.WithSQLiteLimits(sqlite.Limit, sqlexec.SQLiteLimits{}))
	ctx := context.Background()
	_, err := x.Query(ctx, stmt.New("SELECT 1", nil), driver.Bounds{})
	require.ErrorIs(t, err, sqlexec.ErrLimitsOnKeptPool, "a run")
	require.ErrorIs(t, x.Exec(ctx, []driver.Statement{stmt.New("CREATE TABLE u (a INTEGER)", nil)}, driver.Write{}), sqlexec.ErrLimitsOnKeptPool, "an Exec")
}

// TestConformanceKept runs the Executor suite with runs on a read-only
// pool that keeps statements, and Exec on a pool opened by Open that keeps
// them too (its connections pass every other call to the driver's).
func TestConformanceKept(t *testing.T) {
	executortest.Run(t, func(t *testing.T) driver.Executor {
		dsn := "file:" + filepath.Join(t.TempDir(), "executortest.db") + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
		db, err := sqlexec.Open("sqlite", dsn, engine.SQLite, sqlexec.KeepStatements(0))
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		ro, err := sqlexec.Open("sqlite", dsn+"&_pragma=query_only(1)", engine.SQLite, sqlexec.KeepStatements(0))
		require.NoError(t, err)
		t.Cleanup(func() { ro.Close() })
		return sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	})
}

// TestKeepStatementsIsForSQLite: Open refuses KeepStatements for an engine
// other than SQLite with ErrKeepStatementsEngine, naming the engine, before
// it opens anything. On PostgreSQL, pgx shares one server statement among
// the statements of one text on a connection: a kept statement and the
// statement database/sql prepared for a guarded run of the same text kept
// each other alive, and after ALTER TABLE ... ADD COLUMN the next run failed
// ("cached plan must not change result type") instead of being prepared
// anew.
func TestKeepStatementsIsForSQLite(t *testing.T) {
	for _, e := range []struct {
		drv string
		eng engine.Engine
	}{
		{"pgx", engine.PostgreSQL},
		{"mysql", engine.MySQL},
		{"clickhouse", engine.ClickHouse},
	} {
		db, err := sqlexec.Open(e.drv, "unused", e.eng, sqlexec.KeepStatements(0))
		if !errors.Is(err, sqlexec.ErrKeepStatementsEngine) || !strings.Contains(err.Error(), e.eng.Name()) {
			if db != nil {
				db.Close()
			}
			t.Fatalf("KeepStatements on %s: %v, want ErrKeepStatementsEngine naming the engine", e.eng.Name(), err)
		}
	}
	db, err := sqlexec.Open("sqlite", ":memory:", engine.SQLite, sqlexec.KeepStatements(0))
	require.NoError(t, err, "KeepStatements on SQLite")
	db.Close()
}

// TestKeptArgumentsAlike: the arguments of a run on a kept statement are
// converted as database/sql converts them: the same answers for the types
// a host may bind (driver.Valuer, pointers, named kinds, extreme numbers),
// and the same errors, naming the argument as database/sql does ($1), for
// those it refuses.
func TestKeptArgumentsAlike(t *testing.T) {
	db, ro := keptPools(t, 0)
	plainRO := readOnly(t, fileOf(t, db), 0)
	kept := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	plain := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(plainRO))
	type named int
	var nilPtr *int64
	five := int64(5)
	for _, a := range []any{
		uint64(math.MaxUint64), uint64(5), int8(-3), float32(1.5), named(4), math.MaxInt64, math.MinInt64,
		json.RawMessage(`{"a":1}`), sql.NullString{}, sql.NullInt64{Int64: 3, Valid: true}, nilPtr, &five,
		time.Date(2025, 5, 1, 12, 0, 0, 7, time.FixedZone("X", 3600)), math.Inf(1), struct{}{}, []int{1}, "", []byte(nil),
	} {
		const q = "SELECT ? AS v, typeof(?) AS t"
		want, werr := plain.Query(context.Background(), stmt.New(q, []any{a, a}), driver.Bounds{})
		got, gerr := kept.Query(context.Background(), stmt.New(q, []any{a, a}), driver.Bounds{})
		if assert.Equal(t, fmt.Sprint(werr), fmt.Sprint(gerr), "%T %v:\n kept   %v, %v\n plain  %v, %v", a, a, got, gerr, want, werr) {
			assert.Equal(t, want, got, "%T %v:\n kept   %v, %v\n plain  %v, %v", a, a, got, gerr, want, werr)
		}
	}
}
