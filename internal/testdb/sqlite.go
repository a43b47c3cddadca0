package testdb

import (
	"database/sql"
	"testing"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// SQLite returns a fresh in-memory SQLite database (driver "sqlite",
// modernc.org/sqlite), closed when t ends. The pool holds one connection:
// each connection of ":memory:" is a database of its own, so a second one
// would see no tables. Unlike Postgres and MySQL it needs no server and
// never skips.
func SQLite(t testing.TB) *sql.DB {
	t.Helper()
	return SQLiteAt(t, ":memory:")
}

// SQLiteAt opens the SQLite database dsn (a file path or a "file:" URI)
// with one connection, closed when t ends: for a test that reopens a
// database it wrote, or hands its path to a program.
func SQLiteAt(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db := open(t, "sqlite", dsn)
	db.SetMaxOpenConns(1)
	return db
}
