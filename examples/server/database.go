package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/endpointkit/endpointkit/endpoint/access"
	"github.com/endpointkit/endpointkit/endpoint/engine"
	"github.com/endpointkit/endpointkit/examples/demo"
)

// demoSeed fixes the demo events, so that the printed session's answers are
// the same on every machine.
const demoSeed = 1

// openDB opens the SQLite database at path, or, when path is "", a fresh
// one in a temporary directory that closeDB deletes. One database holds the
// events and the stores: the example serves one project to one key, so
// there is nothing to keep apart.
//
// The temporary database is a file rather than ":memory:" because every
// connection to ":memory:" is a database of its own, so an in-memory pool
// has one connection, and one long run stalls every other run and write.
// A file in WAL mode takes a pool: runs read side by side, and a write
// commits while they read. Its pages stay in the OS cache, so it is about
// as fast as memory for the demo's data.
func openDB(path string) (db *sql.DB, closeDB func() error, err error) {
	if path != "" {
		db, err := openFile(path)
		if err != nil {
			return nil, nil, err
		}
		return db, db.Close, nil
	}
	dir, err := os.MkdirTemp("", "endpointkit-")
	if err != nil {
		return nil, nil, fmt.Errorf("temporary database: %w", err)
	}
	db, err = openFile(filepath.Join(dir, "endpointkit.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return db, func() error { return errors.Join(db.Close(), os.RemoveAll(dir)) }, nil
}

// openFile opens the SQLite file at path for concurrent use.
func openFile(path string) (*sql.DB, error) {
	// WAL lets runs read while a write commits; the busy timeout makes a
	// writer wait for another instead of failing; immediate transactions
	// take the write lock up front, so two read-then-write transactions
	// cannot deadlock.
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// policy lets endpoints read the events table only, each project its own
// rows (the tenant column project_id).
var policy = func() access.Policy {
	p, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	if err != nil {
		panic(err) // a fixed, valid rule set
	}
	return p
}()

// loadDemo loads n demo events for each project when the events table is
// missing or empty, and returns how many events the first project has. The
// first project's events are the same on every machine (demoSeed), so that
// the printed session's answers are; each other project gets events of its
// own.
func loadDemo(ctx context.Context, db *sql.DB, n int, projects []string) (count int, loaded bool, err error) {
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM events WHERE project_id = ?", projects[0]).Scan(&count); err == nil && count > 0 {
		return count, false, nil
	}
	// The table is created even for -demo-events 0, so that the session
	// works (with empty answers).
	for _, stmt := range strings.Split(demo.Schema, ";") {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return 0, false, fmt.Errorf("demo: create schema: %w", err)
		}
	}
	for i, p := range projects {
		if err := demo.Insert(ctx, db, engine.SQLite, p, n, demoSeed+uint64(i)); err != nil {
			return 0, false, err
		}
	}
	return n, true, nil
}
