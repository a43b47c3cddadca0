package sqlexec_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/sql/engine"
	_ "modernc.org/sqlite"
)

// A host hands the Executor to endpoint.Config, whose Service runs every
// query through Query, with statements only it makes. The host's own reads
// go through Read, which runs the same way, read-only.
func ExampleExecutor_Read() {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE plans (name TEXT, price REAL); INSERT INTO plans VALUES ('free', 0), ('pro', 49)`); err != nil {
		log.Fatal(err)
	}
	x := sqlexec.New(db, engine.SQLite)
	res, err := x.Read(context.Background(), "SELECT name, price, count(*) OVER () AS n FROM plans WHERE price >= ?", []any{int64(10)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Columns, res.Types, res.Rows)
	// Output: [name price n] [TEXT REAL INTEGER] [[pro 49 1]]
}

// An Executor keeps the statements it ran prepared, so that a saved query is
// parsed once; WithStatements bounds how many, and Close closes them when
// the host is done with the executor (the *sql.DB stays the host's).
func ExampleWithStatements() {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithStatements(64))
	defer x.Close()
	for _, n := range []int64{1, 2, 3} {
		// The same text each time: prepared on the first run only.
		res, err := x.Read(context.Background(), "SELECT ? * 10 AS v", []any{n})
		if err != nil {
			log.Fatal(err)
		}
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
	ro, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
	if err != nil {
		log.Fatal(err)
	}
	defer ro.Close()
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	ctx := context.Background()
	if err := x.Load(ctx, "CREATE TABLE plans (name TEXT); INSERT INTO plans VALUES ('free'), ('pro')", nil); err != nil {
		log.Fatal(err)
	}
	_, err = x.Read(ctx, "WITH p AS (SELECT 1) DELETE FROM plans", nil)
	fmt.Println("a run that writes:", err != nil)
	res, err := x.Read(ctx, "SELECT count(*) AS n FROM plans", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Rows)
	// Output:
	// a run that writes: true
	// [[2]]
}

// A run pool opened with KeepStatements keeps each connection's prepared
// statements and runs plain queries on them through the driver directly:
// the fastest way to run cheap queries, for a host that sets no SQLite
// limits (WithSQLiteLimits needs the driver's own connections).
func ExampleKeepStatements() {
	db, dsn, done := exampleFile()
	defer done()
	ro, err := sqlexec.Open("sqlite", dsn+"&_pragma=query_only(1)", engine.SQLite, sqlexec.KeepStatements(0))
	if err != nil {
		log.Fatal(err)
	}
	defer ro.Close()
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro))
	ctx := context.Background()
	if err := x.Load(ctx, "CREATE TABLE plans (name TEXT); INSERT INTO plans VALUES ('free'), ('pro')", nil); err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"free", "pro", "team"} {
		res, err := x.Read(ctx, "SELECT count(*) AS n FROM plans WHERE name = ?", []any{name})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(name, res.Rows)
	}
	// Output:
	// free [[1]]
	// pro [[1]]
	// team [[0]]
}

// exampleFile opens a SQLite database file in WAL mode in a directory of
// its own, returning its pool, its DSN (for a second pool on the file) and
// the function that closes the pool and removes the directory.
func exampleFile() (*sql.DB, string, func()) {
	dir, err := os.MkdirTemp("", "sqlexec-example-")
	if err != nil {
		log.Fatal(err)
	}
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
