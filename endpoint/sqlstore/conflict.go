package sqlstore

import (
	"errors"
	"strings"
)

// isUniqueViolation reports whether err is a driver's report of a broken
// unique or primary key. The store checks for duplicates inside its
// transaction before writing, so this is the fallback for what those checks
// cannot see: a concurrent writer on an engine whose isolation lets two
// transactions pass the same check (PostgreSQL and MySQL at READ
// COMMITTED). database/sql has no portable error codes, so the drivers'
// SQLSTATE (where offered) and message texts are recognised instead.
func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	var st interface{ SQLState() string } // pgx's *pgconn.PgError
	if errors.As(err, &st) && st.SQLState() == "23505" {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, s := range uniqueViolationTexts {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// uniqueViolationTexts are lower-case fragments of the messages of a unique
// key violation.
var uniqueViolationTexts = []string{
	"unique constraint failed",            // SQLite (modernc.org/sqlite, mattn/go-sqlite3)
	"duplicate key value violates unique", // PostgreSQL (pgx, lib/pq)
	"sqlstate 23505",                      // PostgreSQL, pgx's formatting
	"error 1062",                          // MySQL (go-sql-driver/mysql)
	"duplicate entry",                     // MySQL, other drivers
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "database is locked") || strings.Contains(msg, "sqlite_busy")
}

// isDeadlock reports whether err is a driver's report of a deadlock or a
// serialization failure (SQLSTATE 40001 or 40P01, MySQL's error 1213),
// which the engine resolved by failing this statement.
func isDeadlock(err error) bool {
	var st interface{ SQLState() string }
	if errors.As(err, &st) && (st.SQLState() == "40001" || st.SQLState() == "40P01") {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "error 1213") || strings.Contains(msg, "deadlock")
}
