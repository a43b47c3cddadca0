package sqlexec_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec/sqliteinterrupt"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// A SQLite executor given WithInterrupt stops a run at its time limit even
// when the run's work comes after its first row, which modernc.org/sqlite
// alone no longer interrupts: this query answers one row at once and then
// looks for a second for ever.
func ExampleWithInterrupt() {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	x := sqlexec.New(db, engine.SQLite, sqlexec.WithInterrupt(sqliteinterrupt.For))
	defer x.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = x.Read(ctx, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r WHERE n = 1 OR n < 0", nil)
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output: true
}
