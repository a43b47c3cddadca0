package sqlexec_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/sql/engine"
	"modernc.org/sqlite"
)

// A host on SQLite bounds what one query may build with WithSQLiteLimits,
// passing modernc.org/sqlite's Limit: a query asking for a gigabyte string
// fails at once with a query error naming the limit (a 400 from the
// Service) instead of allocating it.
func ExampleWithSQLiteLimits() {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithSQLiteLimits(sqlite.Limit, sqlexec.SQLiteLimits{Length: 1 << 20}))
	_, err = x.Read(context.Background(), "SELECT length(printf('%.*c', 999999999, 'x'))", nil)
	var qe *driver.QueryError
	fmt.Println(errors.As(err, &qe), errors.Is(err, sqlexec.ErrSQLiteLength))
	fmt.Println(qe.Message)
	// Output:
	// true true
	// the query built a string, blob or row longer than 1048576 bytes, the SQLite length limit (sqlexec.SQLiteLimits.Length)
}
