// Package testdb gives tests a private database on a real PostgreSQL or
// MySQL/MariaDB server, named by an environment variable:
//
//	ENDPOINTKIT_TEST_POSTGRES  a pgx URL, postgres://postgres@127.0.0.1:55432/endpointkit?sslmode=disable
//	ENDPOINTKIT_TEST_MYSQL     a go-sql-driver DSN, root@tcp(127.0.0.1:33306)/endpointkit
//
// scripts/engines up starts such servers and scripts/engines env prints
// the variables. Without the variable a test is skipped with a message
// naming it, so `go test ./...` works anywhere; with it, a server that does
// not answer fails the test within seconds instead of hanging.
//
// Each call makes a fresh database of its own, named ektest_<random hex>,
// and drops it when the test ends, so tests in parallel, and two runs on
// one server, never see each other's tables. On PostgreSQL it is a schema
// in the variable's database, made the connections' search_path, so
// unqualified names resolve there and nowhere else; on MySQL it is a
// database (MySQL's schema), made the DSN's default database.
//
// MySQL connections get parseTime=true unless the variable's DSN says
// otherwise: DATETIME, DATE and TIMESTAMP columns then come back as
// time.Time, as they do from pgx and from modernc.org/sqlite, which is what
// a Go program reading timestamps passes and what lets one test compare
// rows across engines. Nothing else is added: no clientFoundRows (the
// library must not rely on affected-row counts that MySQL reports as rows
// changed), no interpolateParams (values travel as bound arguments of
// server-side prepared statements, as a user's default DSN does), no
// multiStatements.
//
// SQLite, SQLiteAt and SQLitePool open SQLite databases (in memory, or a
// file, on one connection or a pool) for the tests that need no server:
// the one SQLite opener the tests share.
//
// The package imports the database drivers and is imported only by tests:
// the library itself stays on database/sql.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/stretchr/testify/require"
)

// Environment variables naming the test servers.
const (
	// PostgresEnv names a PostgreSQL server as a pgx connection URL (or
	// keyword/value string) whose user may create schemas.
	PostgresEnv = "ENDPOINTKIT_TEST_POSTGRES"
	// MySQLEnv names a MySQL or MariaDB server as a go-sql-driver DSN whose
	// user may create databases.
	MySQLEnv = "ENDPOINTKIT_TEST_MYSQL"
)

// setupTimeout bounds every statement testdb runs itself (connecting,
// creating and dropping), so that an unreachable server fails a test
// rather than hanging it.
const setupTimeout = 20 * time.Second

// Require returns the value of the environment variable env, and skips t
// with a message naming the variable when it is unset or empty.
func Require(t testing.TB, env string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		t.Skipf("%s is not set: no server to test on (scripts/engines up; eval \"$(scripts/engines env)\")", env)
	}
	return v
}

// Postgres returns a pool on a fresh schema of the PostgreSQL server named
// by ENDPOINTKIT_TEST_POSTGRES (driver "pgx"). The pool is closed and the
// schema dropped with everything in it when t ends.
func Postgres(t testing.TB) *sql.DB {
	t.Helper()
	return open(t, "pgx", PostgresDSN(t))
}

// MySQL returns a pool on a fresh database of the MySQL or MariaDB server
// named by ENDPOINTKIT_TEST_MYSQL (driver "mysql"). The pool is closed and
// the database dropped when t ends.
func MySQL(t testing.TB) *sql.DB {
	t.Helper()
	return open(t, "mysql", MySQLDSN(t))
}

// PostgresDSN creates a fresh schema on the server named by
// ENDPOINTKIT_TEST_POSTGRES and returns a DSN whose connections use it
// (search_path), for a test that opens its own pools or hands the DSN to a
// program. The schema is dropped when t ends, after the cleanups that t
// registers later, so close pools on it in such a cleanup.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := Require(t, PostgresEnv)
	admin := adminPool(t, PostgresEnv, "pgx", base)
	name := uniqueName(t)
	create(t, admin, PostgresEnv, "CREATE SCHEMA "+name, "DROP SCHEMA IF EXISTS "+name+" CASCADE")
	dsn, err := withSearchPath(base, name)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	return dsn
}

// MySQLDSN creates a fresh database on the server named by
// ENDPOINTKIT_TEST_MYSQL and returns a DSN whose default database it is,
// with parseTime=true unless the variable sets parseTime. The database is
// dropped when t ends, after the cleanups that t registers later.
func MySQLDSN(t testing.TB) string {
	t.Helper()
	base := Require(t, MySQLEnv)
	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		t.Fatalf("%s: not a go-sql-driver/mysql DSN: %v", MySQLEnv, err)
	}
	admin := adminPool(t, MySQLEnv, "mysql", base)
	name := uniqueName(t)
	create(t, admin, MySQLEnv, "CREATE DATABASE "+name, "DROP DATABASE IF EXISTS "+name)
	cfg.DBName = name
	if !hasParam(base, "parseTime") {
		cfg.ParseTime = true
	}
	return cfg.FormatDSN()
}

// open opens a pool on dsn, closed when t ends (before the drop that the
// DSN's creator registered earlier).
func open(t testing.TB, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("testdb: sql.Open(%q): %v", driver, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// admins are the pools testdb creates and drops databases through, one
// per server, kept for the life of the test binary.
var admins sync.Map // env + "\x00" + dsn -> *sql.DB

// adminPool returns the pool on the server named by env, checking once
// that the server answers.
func adminPool(t testing.TB, env, driver, dsn string) *sql.DB {
	t.Helper()
	key := env + "\x00" + dsn
	if db, ok := admins.Load(key); ok {
		return db.(*sql.DB)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		t.Fatalf("%s is set but its server does not answer: %v", env, err)
	}
	if prev, loaded := admins.LoadOrStore(key, db); loaded {
		db.Close()
		return prev.(*sql.DB)
	}
	return db
}

// create runs the DDL that makes a test's database, and registers drop for
// when t ends.
func create(t testing.TB, admin *sql.DB, env, ddl, drop string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if _, err := admin.ExecContext(ctx, ddl); err != nil {
		t.Fatalf("%s: %s: %v", env, ddl, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		if _, err := admin.ExecContext(ctx, drop); err != nil {
			t.Errorf("%s: %s (is a connection still using it?): %v", env, drop, err)
		}
	})
}

// uniqueName returns a database or schema name that no other test or run
// uses: lower case, so that MySQL's case handling of database names (per
// file system) cannot matter, and short of both engines' 63-byte limits.
func uniqueName(t testing.TB) string {
	t.Helper()
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("testdb: a random name: %v", err)
	}
	return "ektest_" + hex.EncodeToString(b[:])
}

// withSearchPath returns the pgx DSN dsn with its connections' search_path
// set to schema, in either form pgx reads: a URL or keyword/value pairs.
// pgx sends settings it does not know itself, such as search_path, to the
// server as run-time parameters of every connection.
func withSearchPath(dsn, schema string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("not a PostgreSQL URL: %w", err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return dsn + " search_path=" + schema, nil
}

// hasParam reports whether the go-sql-driver DSN dsn sets the parameter
// name, whatever its value. As for the driver, the parameters follow the
// first '?' after the last '/' (a password may hold either).
func hasParam(dsn, name string) bool {
	_, params, ok := strings.Cut(dsn[strings.LastIndex(dsn, "/")+1:], "?")
	if !ok {
		return false
	}
	for _, p := range strings.Split(params, "&") {
		if k, _, _ := strings.Cut(p, "="); k == name {
			return true
		}
	}
	return false
}

// Strings runs query on db with args and returns its rows' single text
// column, in order; a failure to run or read it fails t.
func Strings(t testing.TB, db *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(query, args...)
	require.NoError(t, err, "%s", query)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err(), "%s", query)
	return out
}
