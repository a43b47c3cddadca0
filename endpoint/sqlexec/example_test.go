package sqlexec_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"

	"github.com/endpointkit/endpointkit/endpoint/engine"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	_ "modernc.org/sqlite"
)

func ExampleExecutor_Query() {
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
	res, err := x.Query(context.Background(), "SELECT name, price, count(*) OVER () AS n FROM plans WHERE price >= ?", []any{int64(10)})
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
		res, err := x.Query(context.Background(), "SELECT ? * 10 AS v", []any{n})
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
