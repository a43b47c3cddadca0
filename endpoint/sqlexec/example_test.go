package sqlexec_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec/sqliteinterrupt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"modernc.org/sqlite"
)

// A host hands the Executor to endpoint.Config, whose Service runs every
// query through Query, with statements only it makes. The host's own reads
// go through Read, which runs the same way, read-only.
func ExampleExecutor_Read() {
	db := exampleMemory()
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE plans (name TEXT, price REAL); INSERT INTO plans VALUES ('free', 0), ('pro', 49)`); err != nil {
		log.Fatal(err)
	}
	x := sqlexec.New(db, engine.SQLite)
	res := must(x.Read(context.Background(), "SELECT name, price, count(*) OVER () AS n FROM plans WHERE price >= ?", []any{int64(10)}))
	fmt.Println(res.Columns, res.Types, res.Rows)
	// Output: [name price n] [TEXT REAL INTEGER] [[pro 49 1]]
}

// An Executor keeps the statements it ran prepared, so that a saved query is
// parsed once; WithStatements bounds how many, and Close closes them when
// the host is done with the executor (the *sql.DB stays the host's).
func ExampleWithStatements() {
	db := exampleMemory()
	defer db.Close()
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithStatements(64))
	defer x.Close()
	for _, n := range []int64{1, 2, 3} {
		// The same text each time: prepared on the first run only.
		res := must(x.Read(context.Background(), "SELECT ? * 10 AS v", []any{n}))
		fmt.Println(res.Rows)
	}
	// Output:
	// [[10]]
	// [[20]]
	// [[30]]
}

// Runs are read-only. On SQLite the cheapest way is a second pool on the
// same file whose connections are opened with query_only: runs (Query, and
// the host's Read) go there, and Exec (which builds materialized tables) and
// the host's Load write through the first.
func ExampleWithReadOnly() {
	db, dsn, done := exampleFile()
	defer done()
	ro := must(sql.Open("sqlite", dsn+"&_pragma=query_only(1)"))
	defer ro.Close()
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	ctx := context.Background()
	if err := x.Load(ctx, "CREATE TABLE plans (name TEXT); INSERT INTO plans VALUES ('free'), ('pro')", nil); err != nil {
		log.Fatal(err)
	}
	_, err := x.Read(ctx, "WITH p AS (SELECT 1) DELETE FROM plans", nil)
	fmt.Println("a run that writes:", err != nil)
	fmt.Println(must(x.Read(ctx, "SELECT count(*) AS n FROM plans", nil)).Rows)
	// Output:
	// a run that writes: true
	// [[2]]
}

// A run pool opened with KeepStatements keeps each connection's prepared
// statements and runs plain queries on them through the driver directly:
// the fastest way to run cheap queries, for a host that sets no SQLite
// limits (WithSQLiteLimits needs the driver's own connections). The host
// writes through its first pool, as in ExampleWithReadOnly.
func ExampleKeepStatements() {
	db, dsn, done := exampleFile()
	defer done()
	if _, err := db.Exec("CREATE TABLE plans (name TEXT); INSERT INTO plans VALUES ('free'), ('pro')"); err != nil {
		log.Fatal(err)
	}
	ro := must(sqlexec.Open("sqlite", dsn+"&_pragma=query_only(1)", engine.SQLite, sqlexec.KeepStatements(0)))
	defer ro.Close()
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	for _, name := range []string{"free", "pro", "team"} {
		res := must(x.Read(context.Background(), "SELECT count(*) AS n FROM plans WHERE name = ?", []any{name}))
		fmt.Println(name, res.Rows)
	}
	// Output:
	// free [[1]]
	// pro [[1]]
	// team [[0]]
}

// A SQLite executor given WithInterrupt stops a run at its time limit even
// when the run's work comes after its first row, which modernc.org/sqlite
// alone no longer interrupts: this query answers one row at once and then
// looks for a second for ever.
func ExampleWithInterrupt() {
	db := exampleMemory()
	defer db.Close()
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithInterrupt(sqliteinterrupt.For))
	defer x.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := x.Read(ctx, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r WHERE n = 1 OR n < 0", nil)
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output: true
}

// A host on SQLite bounds what one query may build with WithSQLiteLimits,
// passing modernc.org/sqlite's Limit: a query asking for a gigabyte string
// fails at once with a query error naming the limit (a 400 from the
// Service) instead of allocating it.
func ExampleWithSQLiteLimits() {
	db := exampleMemory()
	defer db.Close()
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithSQLiteLimits(sqlite.Limit, sqlexec.SQLiteLimits{Length: 1 << 20}))
	_, err := x.Read(context.Background(), "SELECT length(printf('%.*c', 999999999, 'x'))", nil)
	var qe *driver.QueryError
	fmt.Println(errors.As(err, &qe), errors.Is(err, sqlexec.ErrSQLiteLength))
	fmt.Println(qe.Message)
	// Output:
	// true true
	// the query built a string, blob or row longer than 1048576 bytes, the SQLite length limit (sqlexec.SQLiteLimits.Length)
}

// must returns v, or ends the example on err.
func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

// exampleMemory opens a SQLite database in memory on one connection (each
// connection to ":memory:" is a database of its own).
func exampleMemory() *sql.DB {
	db := must(sql.Open("sqlite", ":memory:"))
	db.SetMaxOpenConns(1)
	return db
}

// exampleFile opens a SQLite database file in WAL mode in a directory of
// its own, returning its pool, its DSN (for a second pool on the file) and
// the function that closes the pool and removes the directory.
func exampleFile() (*sql.DB, string, func()) {
	dir := must(os.MkdirTemp("", "sqlexec-example-"))
	dsn := "file:" + filepath.Join(dir, "events.db") + "?_pragma=journal_mode(WAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		os.RemoveAll(dir)
		log.Fatal(err)
	}
	return db, dsn, func() {
		db.Close()
		os.RemoveAll(dir)
	}
}
