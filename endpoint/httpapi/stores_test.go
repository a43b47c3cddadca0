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
	"github.com/stretchr/testify/require"
)

// newStores returns the SQL stores over a fresh in-memory SQLite database,
// separate from the events so that an endpoint's query cannot reach them.
func newStores(tb testing.TB) (driver.Store, variable.Store) {
	tb.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(tb, err)
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	st, err := sqlstore.New(db, engine.SQLite)
	require.NoError(tb, err)
	require.NoError(tb, st.Migrate(context.Background()))
	return st.Endpoints(), st.Variables()
}

// newExecutor returns the SQL executor over the events database.
func newExecutor(db *sql.DB) driver.Executor { return sqlexec.New(db, engine.SQLite) }
