// Package sqlstore keeps endpoints, their versions and variables in a SQL
// database through database/sql: one database serves both driver.Store
// (Store.Endpoints) and variable.Store (Store.Variables). Call Migrate
// before first use; it creates the tables (prefixed endpointkit_) or brings
// them up to date.
//
// The schema and statements are written to run on SQLite, PostgreSQL and
// MySQL alike; the dialect picks the bind markers and a few column types.
// The tests run on SQLite (modernc.org/sqlite), and the store conformance
// suites also on PostgreSQL (pgx) and MariaDB (go-sql-driver/mysql) when
// ENDPOINTKIT_TEST_POSTGRES and ENDPOINTKIT_TEST_MYSQL name servers
// (scripts/engines starts them). What each engine needs:
//
//   - SQLite: for a file database, a busy timeout and WAL in the DSN
//     (file:x.db?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)), so
//     that writers wait for each other instead of failing; _txlock=immediate
//     is not needed (each write transaction takes the write lock with its
//     first statement) but does no harm. For ":memory:", db.SetMaxOpenConns(1),
//     because every connection opens a database of its own.
//   - PostgreSQL: a driver (pgx's stdlib or lib/pq) and nothing else. Lists
//     are ordered with COLLATE "C", byte order as in Go, whatever the
//     database's locale.
//   - MySQL: InnoDB, the default. Key columns (project, ids, endpoint names,
//     code names) are VARBINARY(255) there, because the default collations
//     fold case and accents and would make "Daily" and "daily" one name;
//     long text is MEDIUMTEXT. Conflicts between concurrent writers surface
//     as duplicate-key errors, reported as ErrConflict; InnoDB deadlock
//     errors are returned as they are, for the caller to retry.
//
// Key values longer than 255 bytes are refused by PostgreSQL and MySQL (in
// strict mode); SQLite keeps them. Text must be valid UTF-8. Times are
// stored as UTC RFC 3339 text with nanoseconds and come back in UTC. Values
// held in `any` fields (default values, test values) and queries are stored
// as JSON text in a form that gives back exactly the Go values written.
//
// Keep these tables out of reach of endpoint queries: an executor on the
// same database and user could read every project's records.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// Store is the SQL storage of endpoints and variables. It is safe for
// concurrent use. Call Migrate once before the first use of a database,
// and Close when done with it.
type Store struct {
	db      *sql.DB
	dialect engine.Store
	q       statements
	prep    prepared
}

// ErrEngine is returned by New for an engine that cannot hold the store
// (one that is not an engine.Store).
var ErrEngine = errors.New("sqlstore: unsupported engine")

// New returns a Store over db, whose engine is d (engine.SQLite,
// engine.PostgreSQL or engine.MySQL). The Store does not own db:
// closing db is the caller's business.
func New(db *sql.DB, d engine.Engine) (*Store, error) {
	if db == nil {
		return nil, errors.New("sqlstore: nil *sql.DB")
	}
	se, err := storeEngine(d)
	if err != nil {
		return nil, err
	}
	return &Store{db: db, dialect: se, q: newStatements(se)}, nil
}

// Endpoints returns the driver.Store view of s.
func (s *Store) Endpoints() driver.Store { return (*endpoints)(s) }

// Variables returns the variable.Store view of s.
func (s *Store) Variables() variable.Store { return (*variables)(s) }

// inTx runs fn in a transaction, committed when fn returns nil and rolled
// back otherwise, so that a failed write leaves nothing behind.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.tx(ctx, true, fn)
}

// tx is inTx; writeFirst false leaves out SQLite's first write, for a fn
// whose first statement is a write itself.
func (s *Store) tx(ctx context.Context, writeFirst bool, fn func(tx *sql.Tx) error) error {
	if s.prep.isClosed() {
		return ErrClosed
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlstore: begin: %w", err)
	}
	if writeFirst && s.dialect.SingleWriter() {
		// SQLite starts a transaction as a reader. A transaction that reads
		// and then writes fails with SQLITE_BUSY, without waiting for the
		// busy timeout, when another writer committed in between. A write
		// as the first statement takes the write lock at once (waiting for
		// it if need be), so the checks that follow see the latest data and
		// no one can change it before the commit.
		if _, err := tx.ExecContext(ctx, s.q.lock); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("sqlstore: taking the write lock (has Migrate run?): %w", err)
		}
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: commit: %w", err)
	}
	return nil
}

// exists reports whether query, run in tx, returns a row.
func exists(ctx context.Context, tx *sql.Tx, query string, args ...any) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlstore: %w", err)
	}
	return true, nil
}

// boolInt is the stored form of a bool: 0 or 1 in a SMALLINT, which every
// engine and driver accepts alike.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
