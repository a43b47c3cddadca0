package httpapi_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// newStores returns the SQL stores over a fresh in-memory SQLite database,
// separate from the events so that an endpoint's query cannot reach them.
func newStores(tb testing.TB) (driver.Store, variable.Store) {
	tb.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		tb.Fatalf("unexpected error: %v", err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	st, err := sqlstore.New(db, engine.SQLite)
	if err != nil {
		tb.Fatalf("unexpected error: %v", err)
	}
	if err := st.Migrate(context.Background()); err != nil {
		tb.Fatalf("unexpected error: %v", err)
	}
	return st.Endpoints(), st.Variables()
}

// newExecutor returns the SQL executor over the events database.
func newExecutor(db *sql.DB) driver.Executor { return sqlexec.New(db, engine.SQLite) }
