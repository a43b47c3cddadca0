// Package setup builds what the example server (examples/server) runs on
// SQLite: its pools on a SQLite file, the executor of its runs with their
// length limit and interrupt, its access policy and its Service's
// configuration. It is a package of its own, not part of the server's main
// package, so that what measures the server (endpoint/httpapi's
// BenchmarkHTTPRun) builds the very configuration the server runs.
package setup

import (
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"runtime"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec/sqliteinterrupt"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// DSN is the data source name of the SQLite file at path for concurrent
// use: WAL lets runs read while a write commits; the busy timeout makes a
// writer wait for another instead of failing; immediate transactions take
// the write lock up front, so two read-then-write transactions cannot
// deadlock. readOnly makes every connection refuse writes (query_only).
func DSN(path string, readOnly bool) string {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	if readOnly {
		dsn += "&_pragma=query_only(1)"
	}
	return dsn
}

// OpenFile opens the SQLite file at path for concurrent use (DSN), its
// pool sized by SetPool.
func OpenFile(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", DSN(path, false))
	if err != nil {
		return nil, err
	}
	return pinged(db, path)
}

// OpenRuns opens the pool the runs of the SQLite file at path read on: its
// connections refuse writes (query_only), so that a run is read-only at no
// cost per run (sqlexec.WithReadOnly), and keep the statements their runs
// prepare (sqlexec.KeepStatements), so that a run parses its text once a
// connection. The file must exist: open it with OpenFile first.
func OpenRuns(path string) (*sql.DB, error) {
	db, err := sqlexec.Open("sqlite", DSN(path, true), engine.SQLite, sqlexec.KeepStatements(0))
	if err != nil {
		return nil, err
	}
	return pinged(db, path)
}

func pinged(db *sql.DB, path string) (*sql.DB, error) {
	SetPool(db)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// SetPool sizes the pool of an SQLite file. database/sql keeps 2 idle
// connections by default, so under more concurrent runs than that it
// closes a connection after each run and opens one for the next: an open
// file, its WAL index mapped and the pragmas run again, which cost a run
// on SQLite several times its query. Every pool keeps IdleConns idle
// connections, each for a minute at most, so that a burst's connections
// (and their page caches) go once it is over. No pool bounds how many it
// opens: a cap would make cheap runs wait behind long ones for a
// connection rather than share the processors with them.
func SetPool(db *sql.DB) {
	db.SetMaxIdleConns(IdleConns())
	db.SetConnMaxIdleTime(time.Minute)
}

// IdleConns is how many idle connections a pool keeps: 4 a processor the
// Go runtime uses, and at least 16.
func IdleConns() int { return max(4*runtime.GOMAXPROCS(0), 16) }

// Executor is the executor of the server's runs on SQLite: data is the
// file's read-write pool (OpenFile), which loads the demo and builds
// materialized tables, runs its read-only pool (OpenRuns). Every
// connection has SQLITE_LIMIT_LENGTH length (sqlexec.SQLiteLimits.Length:
// 0 is sqlexec.DefaultSQLiteLength, negative leaves SQLite's own), set
// once on each connection of runs (sqlexec.WithSQLiteConnLimits), and a
// run is interrupted when its time is up (sqlexec.WithInterrupt).
func Executor(data, runs *sql.DB, length int) *sqlexec.Executor {
	return sqlexec.New(data, engine.SQLite, sqlexec.WithReadOnly(runs),
		sqlexec.WithSQLiteConnLimits(sqliteinterrupt.Limit, sqlexec.SQLiteLimits{Length: length}),
		sqlexec.WithInterrupt(sqliteinterrupt.For))
}

// Policy lets endpoints read the events table only, each project its own
// rows (the tenant column project_id).
func Policy() access.Policy {
	p, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	if err != nil {
		panic(err) // a fixed, valid rule set
	}
	return p
}

// Options are the server's settings of its Service (its flags).
type Options struct {
	RunTimeout, RefreshTimeout time.Duration
	MaxRefreshes               int
	MaxMaterializedBytes       int64
	// ResultCache caches answers; nil caches none (-cache-bytes 0).
	ResultCache driver.ResultCache
	// MaxCachedAnswerBytes is the most one answer may weigh to be cached
	// (endpoint.Config.MaxCachedAnswerBytes; 0 its default, negative no
	// bound).
	MaxCachedAnswerBytes int64
	// Observer is told of every run; nil is a SlogObserver on
	// slog.Default().
	Observer endpoint.Observer
	// ScheduleInterval is how often the scheduler looks for due
	// materialized endpoints.
	ScheduleInterval time.Duration
}

// ServiceConfig is the server's Service configuration over store, with
// exec running the endpoints' queries: the Policy, and the run log kept in
// the store (so that it survives restarts) and written in the background.
func ServiceConfig(store *sqlstore.Store, exec driver.Executor, o Options) endpoint.Config {
	obs := o.Observer
	if obs == nil {
		obs = endpoint.SlogObserver{Logger: slog.Default()}
	}
	return endpoint.Config{
		Endpoints:            store.Endpoints(),
		Variables:            store.Variables(),
		Executor:             exec,
		Access:               Policy(),
		RunTimeout:           o.RunTimeout,
		RefreshTimeout:       o.RefreshTimeout,
		MaxRefreshes:         o.MaxRefreshes,
		MaxMaterializedBytes: o.MaxMaterializedBytes,
		RunLog:               store.RunLog(sqlstore.RunLogOptions{}),
		Observer:             obs,
		ResultCache:          o.ResultCache,
		MaxCachedAnswerBytes: o.MaxCachedAnswerBytes,
		ScheduleInterval:     o.ScheduleInterval,
	}
}
