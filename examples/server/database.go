package main

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/endpointkit/endpointkit/examples/server/setup"
)

// demoSeed fixes the demo events, so that the printed session's answers are
// the same on every machine.
const demoSeed = 1

// databases are the example's two SQLite files. The data file holds the
// events and the stored tables of materialized endpoints; the store file
// holds the library's endpoints and variables. They are apart because
// SQLite has one writer per file: a refresh writes its table for as long as
// the pre-compute query runs, and a store write (creating an endpoint,
// saving a refresh's status) must not wait for it.
//
// The data file is opened twice: data, read-write, loads the demo and
// builds materialized tables; runs, opened with query_only, is where
// endpoint queries run (sqlexec.WithReadOnly), so that no run can write,
// at no cost per run, on connections that keep their statements
// (setup.OpenRuns).
type databases struct {
	data, runs, store *sql.DB
	// dataPath and storePath are the files, for the banner.
	dataPath, storePath string
	close               func() error
}

// openDatabases opens the data file at dataPath and the store file at
// storePath. With dataPath "", both are fresh files in a temporary
// directory that close deletes; with storePath "", the store is beside the
// data file, named after it (events.db: events-store.db).
//
// Temporary databases are files rather than ":memory:" because every
// connection to ":memory:" is a database of its own, so an in-memory pool
// has one connection, and one long run stalls every other run and write.
// A file in WAL mode takes a pool: runs read side by side, and a write
// commits while they read. Its pages stay in the OS cache, so it is about
// as fast as memory for the demo's data.
func openDatabases(dataPath, storePath string) (*databases, error) {
	var cleanup []func() error
	closeAll := func() error {
		var errs []error
		for i := len(cleanup) - 1; i >= 0; i-- {
			errs = append(errs, cleanup[i]())
		}
		return errors.Join(errs...)
	}
	if dataPath == "" {
		dir, err := os.MkdirTemp("", "endpointkit-")
		if err != nil {
			return nil, fmt.Errorf("temporary database: %w", err)
		}
		cleanup = append(cleanup, func() error { return os.RemoveAll(dir) })
		dataPath = filepath.Join(dir, "events.db")
		if storePath == "" {
			storePath = filepath.Join(dir, "store.db")
		}
	}
	if storePath == "" {
		storePath = storeBeside(dataPath)
	}
	d := &databases{dataPath: dataPath, storePath: storePath, close: closeAll}
	for _, o := range []struct {
		dst      **sql.DB
		path     string
		readOnly bool
	}{
		{&d.data, dataPath, false},
		{&d.runs, dataPath, true},
		{&d.store, storePath, false},
	} {
		db, err := openFile(o.path, o.readOnly)
		if err != nil {
			closeAll()
			return nil, err
		}
		*o.dst = db
		cleanup = append(cleanup, db.Close)
	}
	return d, nil
}

// storeBeside is the default store file of the data file at dataPath:
// events.db has events-store.db.
func storeBeside(dataPath string) string {
	ext := filepath.Ext(dataPath)
	return strings.TrimSuffix(dataPath, ext) + "-store" + ext
}

// openFile opens the SQLite file at path for concurrent use; readOnly
// opens the pool runs read on (setup.OpenRuns): its connections refuse
// writes and keep their statements, which needs the file to exist: it is
// opened read-write first.
func openFile(path string, readOnly bool) (*sql.DB, error) {
	if readOnly {
		return setup.OpenRuns(path)
	}
	return setup.OpenFile(path)
}

// idleConns is how many idle connections a pool keeps (setup.IdleConns).
func idleConns() int { return setup.IdleConns() }
