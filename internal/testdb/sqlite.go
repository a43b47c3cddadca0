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
	return SQLitePool(t, dsn, 1)
}

// SQLitePool opens a pool on the SQLite database dsn (a file path or a
// "file:" URI, its pragmas included) of at most conns connections (0: no
// bound, database/sql's default), closed when t ends: for a test of
// several connections on one file (concurrent writers, a read beside a
// write).
func SQLitePool(t testing.TB, dsn string, conns int) *sql.DB {
	t.Helper()
	db := open(t, "sqlite", dsn)
	db.SetMaxOpenConns(conns)
	return db
}
