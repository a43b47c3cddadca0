package placeholder

import (
	"database/sql"
	"testing"

	_ "modernc.org/sqlite"
)

// openSQLite returns a fresh in-memory database; one connection, since
// each connection of ":memory:" is a database of its own.
func openSQLite(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}
