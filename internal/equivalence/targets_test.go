package equivalence

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec/sqliteinterrupt"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/variable"
)

// now is the Services' clock: after the demo data, fixed, so that relative
// dates resolve alike everywhere and stored tables stay fresh.
var now = time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC)

// Session time zones of the servers' connections, other than UTC (and
// with a fraction of an hour on MySQL) as a host's server may default to;
// the library must answer in UTC all the same.
const (
	postgresZone = "America/Los_Angeles"
	mysqlZone    = "+05:30"
)

// target is one engine the test runs on.
type target struct {
	d *dialect
	// env is the variable naming its server, "" for SQLite (in memory).
	env string
	// open returns a pool on a fresh database of the server whose
	// connections are in UTC (for loading the fixture), and the DSN of
	// the same database for the Service, in a session zone of its own.
	open func(t *testing.T) (loader *sql.DB, driver, dsn string)
	// direct, for an engine not on database/sql (ClickHouse), returns an
	// executor on a fresh database for storage s, whose sessions a host
	// would start in a zone other than UTC: the fixture loads through it
	// and the Service runs on it.
	direct func(t *testing.T, s storage) loadingExecutor
	// kept runs SQLite (env "") on a file, its runs on a read-only pool
	// that keeps statements, rather than on one connection in memory.
	kept bool
}

// name names the target in subtests and verdicts: its engine's, marked
// for SQLite on kept statements.
// eachTarget runs run for every target in a parallel subtest named after
// it, i its index in targets, after skipping a target whose engine's
// variable is unset (testdb.Require names it).
func eachTarget(t *testing.T, run func(t *testing.T, i int, tg target)) {
	for i, tg := range targets {
		t.Run(tg.name(), func(t *testing.T) {
			t.Parallel()
			if tg.env != "" {
				testdb.Require(t, tg.env)
			}
			run(t, i, tg)
		})
	}
}

func (tg target) name() string {
	if tg.kept {
		return tg.d.name + "-kept"
	}
	return tg.d.name
}

// sqlite opens the SQLite target's database: loader writes (the fixture,
// Exec) and x is the executor the Service runs on.
func (tg target) sqlite(t *testing.T) (loader *sql.DB, x *sqlexec.Executor) {
	t.Helper()
	if !tg.kept {
		db := openPool(t, "sqlite", ":memory:")
		db.SetMaxOpenConns(1) // each connection of :memory: is a database of its own
		return db, sqlexec.New(db, tg.d.e, sqlexec.WithInterrupt(sqliteinterrupt.For))
	}
	// Not synced: the fixture loads in many commits, and a test's file
	// needs no durability.
	dsn := "file:" + filepath.Join(t.TempDir(), "kept.db") + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)"
	db := openPool(t, "sqlite", dsn)
	ro, err := sqlexec.Open("sqlite", dsn+"&_pragma=query_only(1)", tg.d.e, sqlexec.KeepStatements(0))
	require.NoError(t, err)
	t.Cleanup(func() { ro.Close() })
	return db, sqlexec.New(db, tg.d.e, sqlexec.WithReadOnly(ro), sqlexec.WithInterrupt(sqliteinterrupt.For))
}

var targets = []target{
	{d: sqliteDialect},
	// SQLite as a host that sets no SQLite limits runs it: a file, the
	// runs on a read-only pool whose connections keep their statements
	// (sqlexec.KeepStatements), which a plain run reads through the
	// driver directly.
	{d: sqliteDialect, kept: true},
	{d: postgresDialect, env: testdb.PostgresEnv, open: func(t *testing.T) (*sql.DB, string, string) {
		dsn := testdb.PostgresDSN(t)
		return openPool(t, "pgx", pgParam(t, dsn, "timezone", "UTC")), "pgx", pgParam(t, dsn, "timezone", postgresZone)
	}},
	{d: mysqlDialect, env: testdb.MySQLEnv, open: func(t *testing.T) (*sql.DB, string, string) {
		dsn := testdb.MySQLDSN(t)
		return openPool(t, "mysql", myParam(t, dsn, "time_zone", "'+00:00'")), "mysql", myParam(t, dsn, "time_zone", "'"+mysqlZone+"'")
	}},
}

// pgParam sets a run-time parameter of every connection of a pgx DSN.
func pgParam(t *testing.T, dsn, key, value string) string {
	t.Helper()
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " " + key + "=" + value
	}
	u, err := url.Parse(dsn)
	require.NoError(t, err, "%s", testdb.PostgresEnv)
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// myParam sets a system variable of every connection of a go-sql-driver
// DSN.
func myParam(t *testing.T, dsn, key, value string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err, "%s", testdb.MySQLEnv)
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params[key] = value
	return cfg.FormatDSN()
}

// openPool opens a pool closed when t ends (before testdb drops its
// database).
func openPool(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// services opens the target's databases, loads the fixture, and returns a
// Service per storage (SQLite: one for all).
func (tg target) services(t *testing.T, storages []storage, demoEvents int) map[storage]*endpoint.Service {
	t.Helper()
	svcs, _ := tg.servicesOf(t, storages, fixture{demoEvents: demoEvents, cache: true})
	return svcs
}

// fixture is what servicesOf loads and how its Services are configured:
// demoEvents demo events of project "1" (with the edge events and the
// items), more rows of events (project_id, uuid, event, distinct_id,
// timestamp, properties), an access policy and a result cache.
type fixture struct {
	demoEvents int
	events     [][]any
	access     access.Policy
	cache      bool
}

// loadingExecutor is an executor that also loads the fixture (its Load,
// for the host's own statements).
type loadingExecutor interface {
	driver.Executor
	demo.Loader
}

// servicesOf is services with fx, also returning, per storage, what loads
// more rows into its database.
func (tg target) servicesOf(t *testing.T, storages []storage, fx fixture) (map[storage]*endpoint.Service, map[storage]demo.Loader) {
	t.Helper()
	ctx := context.Background()
	out, loaders := map[storage]*endpoint.Service{}, map[storage]demo.Loader{}
	fill := func(x demo.Loader, s storage) {
		require.NoError(t, loadVia(ctx, x, tg.d, s, fx.demoEvents), "%s: load %s", tg.d.name, s)
		require.NoError(t, insertEvents(ctx, x, tg.d.e, fx.events), "%s: load %s", tg.d.name, s)
	}
	if tg.direct != nil {
		for _, s := range storages {
			x := tg.direct(t, s)
			fill(x, s)
			out[s], loaders[s] = serviceFor(t, x, func() time.Time { return now }, fx), x
		}
		return out, loaders
	}
	if tg.env == "" {
		db, x := tg.sqlite(t)
		fill(sqlExec{db}, asText)
		svc := serviceFor(t, x, func() time.Time { return now }, fx)
		for _, s := range storages {
			out[s], loaders[s] = svc, sqlExec{db}
		}
		return out, loaders
	}
	for _, s := range storages {
		loader, driver, dsn := tg.open(t)
		fill(sqlExec{loader}, s)
		out[s], loaders[s] = serviceFor(t, sqlexec.New(openSession(t, driver, dsn, tg.d), tg.d.e), func() time.Time { return now }, fx), sqlExec{loader}
	}
	return out, loaders
}

// openSession opens the Service's pool as a host should: with
// sqlexec.Open, which puts each connection in the session the engine's SQL
// assumes (UTC), whatever zone the DSN starts it in.
func openSession(t *testing.T, driver, dsn string, d *dialect) *sql.DB {
	t.Helper()
	db, err := sqlexec.Open(driver, dsn, d.e)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// newService is a Service over db with memory stores and the corpus's
// variables.
func newService(t *testing.T, db *sql.DB, d *dialect) *endpoint.Service {
	t.Helper()
	return serviceWith(t, sqlexec.New(db, d.e))
}

// serviceWith is newService over an executor.
func serviceWith(t *testing.T, x driver.Executor) *endpoint.Service {
	t.Helper()
	return serviceAt(t, x, func() time.Time { return now })
}

// serviceAt is serviceWith on the clock clock.
func serviceAt(t *testing.T, x driver.Executor, clock func() time.Time) *endpoint.Service {
	t.Helper()
	return serviceFor(t, x, clock, fixture{})
}

// runTimeout is the Services' run timeout: a guard against a run that
// hangs, not a measure of speed. The longest lifecycle (the most hourly
// intervals, lifecycle_4 of TestLifecycleOracle) takes 30 to 40 s on chDB
// alone, and ran out of a minute beside the other matrices on a loaded
// machine.
const runTimeout = 5 * time.Minute

// serviceFor is serviceAt with the access policy and result cache of fx.
func serviceFor(t *testing.T, x driver.Executor, clock func() time.Time, fx fixture) *endpoint.Service {
	t.Helper()
	cfg := endpoint.Config{
		Endpoints:  memstore.New(),
		Variables:  variable.NewMemoryStore(),
		Executor:   x,
		Now:        clock,
		RunTimeout: runTimeout,
		Access:     fx.access,
	}
	if fx.cache {
		cfg.ResultCache = memstore.NewResultCache(64 << 20)
	}
	svc, err := endpoint.New(cfg)
	require.NoError(t, err)
	for _, v := range variables {
		_, err := svc.CreateVariable(context.Background(), "1", v)
		require.NoError(t, err, "CreateVariable(%s)", v.CodeName)
	}
	if fx.cache {
		uncachedTwin(t, svc, cfg) // formats_test.go: the streamed ways
	}
	return svc
}
