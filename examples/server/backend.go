package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	_ "github.com/go-sql-driver/mysql" // the "mysql" driver
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver

	"github.com/endpointkit/endpointkit/endpoint/chexec"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/examples/server/setup"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// backend is where the server's data lives: the executor of the analytics
// data and the store of endpoints and variables.
type backend struct {
	engine engine.Engine
	exec   executor
	store  *sqlstore.Store
	close  func()
}

// executor is the Service's driver.Executor with the two methods the
// server calls itself, to load the demo events and count them: the
// executors of packages sqlexec, chexec and chdb have both, for the host's
// own statements. The Service never calls them.
type executor interface {
	driver.Executor
	demo.Loader
	Read(ctx context.Context, query string, args []any) (*driver.Result, error)
}

// openers open the -driver engines other than sqlite; chdb registers itself
// when the server is built with -tags chdb.
var openers = map[string]func(dsn string) (engine.Engine, executor, func(), error){
	"postgres":   openSQL("pgx", engine.PostgreSQL),
	"mysql":      openSQL("mysql", engine.MySQL),
	"clickhouse": openClickHouse,
}

func openSQL(driverName string, e engine.Engine) func(string) (engine.Engine, executor, func(), error) {
	return func(dsn string) (engine.Engine, executor, func(), error) {
		db, err := sqlexec.Open(driverName, dsn, e)
		if err != nil {
			return nil, nil, nil, err
		}
		if err := db.Ping(); err != nil {
			db.Close()
			return nil, nil, nil, fmt.Errorf("-dsn: %w", err)
		}
		x := sqlexec.New(db, e)
		return e, x, func() { x.Close(); db.Close() }, nil
	}
}

func openClickHouse(dsn string) (engine.Engine, executor, func(), error) {
	return openClickHouseOn(engine.ClickHouse)(dsn)
}

// openClickHouseOn opens ClickHouse with engine e: engine.ClickHouse, or
// a cluster's (-clickhouse-cluster).
func openClickHouseOn(e engine.Engine) func(string) (engine.Engine, executor, func(), error) {
	return func(dsn string) (engine.Engine, executor, func(), error) {
		opts, err := clickhouse.ParseDSN(dsn)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("-dsn: %w", err)
		}
		x, err := chexec.Open(opts, nil, chexec.WithEngine(e))
		if err != nil {
			return nil, nil, nil, err
		}
		return e, x, func() { x.Close() }, nil
	}
}

// openBackend opens the data of cfg.driver and the store: on SQLite the
// files of -db and -store; elsewhere the -dsn database, and the store in
// -store-dsn (a database of the same engine), or else in the -dsn
// database for PostgreSQL and MySQL, or a SQLite file (-store, or a
// temporary one) for ClickHouse.
func openBackend(cfg config) (*backend, error) {
	if cfg.driver == "sqlite" {
		dbs, err := openDatabases(cfg.dbPath, cfg.storePath)
		if err != nil {
			return nil, err
		}
		store, err := sqlstore.New(dbs.store, engine.SQLite)
		if err != nil {
			dbs.close()
			return nil, err
		}
		x := setup.Executor(dbs.data, dbs.runs, cfg.sqliteLength)
		return &backend{engine: engine.SQLite, exec: x, store: store, close: func() { x.Close(); dbs.close() }}, nil
	}
	open, ok := openers[cfg.driver]
	if !ok {
		return nil, fmt.Errorf("-driver %q: this server knows sqlite, postgres, mysql, clickhouse%s", cfg.driver, chdbHint)
	}
	if cfg.cluster != "" {
		cluster, err := engine.ClickHouseCluster(cfg.cluster)
		if err != nil {
			return nil, fmt.Errorf("-clickhouse-cluster: %w", err)
		}
		open = openClickHouseOn(cluster)
	}
	e, x, closeData, err := open(cfg.dsn)
	if err != nil {
		return nil, err
	}
	storeDB, storeEngine, closeStore, err := openStoreDB(cfg, e)
	if err != nil {
		closeData()
		return nil, err
	}
	store, err := sqlstore.New(storeDB, storeEngine)
	if err != nil {
		closeStore()
		closeData()
		return nil, err
	}
	return &backend{engine: e, exec: x, store: store, close: func() { closeStore(); closeData() }}, nil
}

// openStoreDB opens the store's database (see openBackend).
func openStoreDB(cfg config, data engine.Engine) (*sql.DB, engine.Engine, func(), error) {
	driver := map[string]string{"postgresql": "pgx", "mysql": "mysql"}[data.Name()]
	dsn := cfg.storeDSN
	if dsn == "" && driver != "" {
		dsn = cfg.dsn
	}
	if driver != "" {
		e, _ := engine.ByName(data.Name())
		db, err := sqlexec.Open(driver, dsn, e)
		if err != nil {
			return nil, nil, nil, err
		}
		return db, e, func() { db.Close() }, nil
	}
	path, cleanup := cfg.storePath, func() {}
	if path == "" {
		dir, err := os.MkdirTemp("", "endpointkit-store-")
		if err != nil {
			return nil, nil, nil, err
		}
		path, cleanup = filepath.Join(dir, "store.db"), func() { os.RemoveAll(dir) }
	}
	db, err := openFile(path, false)
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	return db, engine.SQLite, func() { db.Close(); cleanup() }, nil
}

// loadEvents loads n demo events ending at end for each project into the
// backend's events table when the first project has none, creating the
// table if it is missing, and returns how many events the first project
// has.
func loadEvents(ctx context.Context, b *backend, n int, projects []string, end time.Time) (count int, loaded bool, err error) {
	if c, ok := countEvents(ctx, b, projects[0]); ok && c > 0 {
		return c, false, nil
	}
	if _, ok := countEvents(ctx, b, projects[0]); !ok {
		for _, stmt := range demo.SchemaFor(b.engine) {
			if err := b.exec.Load(ctx, stmt, nil); err != nil {
				return 0, false, fmt.Errorf("demo: create schema: %w", err)
			}
		}
	}
	for i, p := range projects {
		if err := demo.InsertUntil(ctx, b.exec, b.engine, p, n, demoSeed+uint64(i), end); err != nil {
			return 0, false, err
		}
	}
	return n, true, nil
}

// countEvents counts the events of project; false when there is no events
// table to count.
func countEvents(ctx context.Context, b *backend, project string) (int, bool) {
	q := placeholder.NewBuilder(b.engine)
	q.WriteString("SELECT count(*) FROM events WHERE project_id = ")
	q.Bind(project)
	res, err := b.exec.Read(ctx, q.SQL(), q.Args())
	if err != nil || len(res.Rows) != 1 {
		return 0, false
	}
	switch v := res.Rows[0][0].(type) {
	case int64:
		return int(v), true
	case string:
		var n int
		_, err := fmt.Sscan(v, &n)
		return n, err == nil
	}
	return 0, false
}
