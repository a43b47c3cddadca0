package testdb

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWithSearchPath(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{"postgres://postgres@127.0.0.1:55432/endpointkit?sslmode=disable",
			"postgres://postgres@127.0.0.1:55432/endpointkit?search_path=ektest_1&sslmode=disable"},
		{"postgresql://u:p%40ss@h/db", "postgresql://u:p%40ss@h/db?search_path=ektest_1"},
		{"postgres://h/db?search_path=public", "postgres://h/db?search_path=ektest_1"},
		{"host=127.0.0.1 port=55432 user=postgres", "host=127.0.0.1 port=55432 user=postgres search_path=ektest_1"},
	} {
		got, err := withSearchPath(c.dsn, "ektest_1")
		if assert.NoError(t, err, "withSearchPath(%q) = %q, %v; want %q", c.dsn, got, err, c.want) {
			assert.Equal(t, c.want, got, "withSearchPath(%q) = %q, %v; want %q", c.dsn, got, err, c.want)
		}
	}
	_, err := withSearchPath("postgres://h:bad port/db", "s")
	assert.Error(t, err, "withSearchPath accepted a URL with a bad port")
}

func TestHasParam(t *testing.T) {
	for _, c := range []struct {
		dsn  string
		want bool
	}{
		{"root@tcp(127.0.0.1:33306)/endpointkit", false},
		{"root@tcp(127.0.0.1:33306)/endpointkit?parseTime=false", true},
		{"root@tcp(127.0.0.1:33306)/endpointkit?loc=UTC&parseTime=true", true},
		{"root@tcp(127.0.0.1:33306)/endpointkit?parseTimeX=1", false},
		{"u:pa?parseTime=x@tcp(h)/db", false},
	} {
		assert.Equal(t, c.want, hasParam(c.dsn, "parseTime"), "hasParam(%q)", c.dsn)
	}
}

func TestUniqueName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z][a-z0-9_]{1,62}$`)
	seen := map[string]bool{}
	for range 100 {
		n := uniqueName(t)
		if !valid.MatchString(n) || seen[n] {
			t.Fatalf("uniqueName() = %q: not a fresh lower-case identifier", n)
		}
		seen[n] = true
	}
}

// TestRequireSkipsNamingTheVariable runs Require with the variable unset,
// in a subtest, and wants the subtest skipped, not failed.
func TestRequireSkipsNamingTheVariable(t *testing.T) {
	for _, env := range []string{PostgresEnv, MySQLEnv} {
		t.Setenv(env, "")
		var ran bool
		ok := t.Run(env, func(t *testing.T) {
			Require(t, env)
			ran = true
		})
		if assert.True(t, ok, "Require(%s) with the variable unset: passed=%v, went on=%v; want a skip", env, ok, ran) {
			assert.False(t, ran, "Require(%s) with the variable unset: passed=%v, went on=%v; want a skip", env, ok, ran)
		}
	}
}

// TestPrivateDatabases checks, on each server that is set, that two
// databases of one test do not see each other's tables, that the DSN
// options hold, and that both are gone when the test ends.
func TestPrivateDatabases(t *testing.T) {
	for _, e := range []struct {
		env, driver string
		open        func(testing.TB) *sql.DB
		// exists counts the schemas (databases) named $1.
		exists string
		// now is a query whose one value is a timestamp.
		now string
	}{
		{PostgresEnv, "pgx", Postgres, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1", "SELECT now()"},
		{MySQLEnv, "mysql", MySQL, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?", "SELECT NOW()"},
	} {
		t.Run(e.env, func(t *testing.T) {
			base := Require(t, e.env)
			ctx := context.Background()
			var names []string
			t.Run("two", func(t *testing.T) {
				a, b := e.open(t), e.open(t)
				_, err := a.ExecContext(ctx, "CREATE TABLE only_in_a (x INT)")
				require.NoError(t, err)
				if _, err := a.ExecContext(ctx, "SELECT x FROM only_in_a"); err != nil {
					t.Fatalf("a cannot read its own table: %v", err)
				}
				if _, err := b.ExecContext(ctx, "SELECT x FROM only_in_a"); err == nil {
					t.Fatal("b reads a's table")
				}
				for _, db := range []*sql.DB{a, b} {
					var name string
					q := "SELECT current_schema()"
					if e.driver == "mysql" {
						q = "SELECT DATABASE()"
					}
					require.NoError(t, db.QueryRowContext(ctx, q).Scan(&name))
					require.True(t, strings.HasPrefix(name, "ektest_"), "connected to %q, not a test database", name)
					names = append(names, name)
				}
				var now any
				require.NoError(t, a.QueryRowContext(ctx, e.now).Scan(&now))
				_, ok := now.(interface{ UnixNano() int64 })
				assert.True(t, ok, "%s gave %T, want time.Time", e.now, now)
			})
			require.Len(t, names, 2, "database names")
			require.NotEqual(t, names[1], names[0], "database names")
			admin, err := sql.Open(e.driver, base)
			require.NoError(t, err)
			defer admin.Close()
			for _, n := range names {
				var count int
				require.NoError(t, admin.QueryRowContext(ctx, e.exists, n).Scan(&count))
				assert.Equal(t, 0, count, "%s still exists after its test ended", n)
			}
		})
	}
}

// TestSQLite: the opener's database keeps its tables across statements
// (one connection), and two openers' databases are apart.
func TestSQLite(t *testing.T) {
	a, b := SQLite(t), SQLite(t)
	_, err := a.Exec("CREATE TABLE t (x INTEGER)")
	require.NoError(t, err)
	_, err = a.Exec("INSERT INTO t VALUES (1)")
	require.NoError(t, err)
	var n int
	require.NoError(t, a.QueryRow("SELECT count(*) FROM t").Scan(&n))
	assert.Equal(t, 1, n)
	assert.Equal(t, 1, a.Stats().MaxOpenConnections)
	_, err = b.Exec("SELECT * FROM t")
	assert.ErrorContains(t, err, "no such table")
}

// TestSQLitePool: a pool on a file holds up to conns connections (two
// at once here, one reading while another writes), or as many as
// database/sql's default with 0, and the file keeps what they wrote; the
// pools close when the test ends.
func TestSQLitePool(t *testing.T) {
	path := "file:" + t.TempDir() + "/p.db?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
	db := SQLitePool(t, path, 2)
	assert.Equal(t, 2, db.Stats().MaxOpenConnections)
	_, err := db.Exec("CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2)")
	require.NoError(t, err)
	rows, err := db.Query("SELECT n FROM t ORDER BY n")
	require.NoError(t, err)
	require.True(t, rows.Next(), "a read holds one connection")
	_, err = db.Exec("INSERT INTO t VALUES (3)")
	require.NoError(t, err, "a second connection writes meanwhile")
	require.NoError(t, rows.Close())
	assert.Equal(t, 2, db.Stats().OpenConnections)

	again := SQLitePool(t, path, 0)
	assert.Zero(t, again.Stats().MaxOpenConnections, "0: no bound")
	var n int
	require.NoError(t, again.QueryRow("SELECT count(*) FROM t").Scan(&n))
	assert.Equal(t, 3, n)
	assert.Equal(t, 1, SQLiteAt(t, path).Stats().MaxOpenConnections)
}

// TestRows: Rows reads every row and column, text as strings (not the
// []byte SQLite's blobs and MySQL's text scan into), NULL as nil, and
// fails the test on a query error met while reading.
func TestRows(t *testing.T) {
	db := SQLite(t)
	rows, err := db.Query("SELECT 1 AS n, 'a' AS s, x'6869' AS b, NULL AS z UNION ALL SELECT 2, 'b', x'', NULL ORDER BY n")
	require.NoError(t, err)
	assert.Equal(t, [][]any{{int64(1), "a", "hi", nil}, {int64(2), "b", "", nil}}, Rows(t, rows))
	rows, err = db.Query("SELECT 1 WHERE 0")
	require.NoError(t, err)
	assert.Equal(t, [][]any{}, Rows(t, rows), "no rows")

	rows, err = db.Query("SELECT abs(x) FROM (SELECT 1 AS x UNION ALL SELECT -9223372036854775807 - 1)") // integer overflow, met on the second row
	require.NoError(t, err)
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Rows(r, rows)
	}()
	<-done
	assert.Contains(t, r.msg, "integer overflow", "a read that fails")
}

// fatalRecorder is a testing.TB whose Fatalf records its message and ends
// the goroutine, as testing's does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestSetParallel: SetParallel sets -parallel, and leaves one given on the
// command line (or set before) alone.
func TestSetParallel(t *testing.T) {
	f := flag.Lookup("test.parallel")
	require.NotNil(t, f)
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	before := f.Value.String()
	t.Cleanup(func() { require.NoError(t, flag.Set("test.parallel", before)) })
	SetParallel(runtime.GOMAXPROCS(0) + 5)
	if given {
		assert.Equal(t, before, f.Value.String(), "a -parallel given on the command line is kept")
		return
	}
	assert.Equal(t, fmt.Sprint(runtime.GOMAXPROCS(0)+5), f.Value.String())
	SetParallel(1)
	assert.Equal(t, fmt.Sprint(runtime.GOMAXPROCS(0)+5), f.Value.String(), "a value set before is kept")
}
