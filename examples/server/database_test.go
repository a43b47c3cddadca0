package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
)

func TestLoadDemoOnlyIntoAnEmptyTable(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "x.db")} {
		ctx := context.Background()
		dbs, err := openDatabases(path, "")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		db, closeDB := dbs.data, dbs.close

		n, loaded, err := loadEvents(ctx, sqliteBackend(db), 0, []string{"1"}, demo.End)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := n, 0; got != want {
			t.Errorf("n = %v, want %v", got, want)
		}
		if !loaded {
			t.Errorf("an empty table is created: loaded is false")
		}

		n, loaded, err = loadEvents(ctx, sqliteBackend(db), 500, []string{"1"}, demo.End)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := n, 500; got != want {
			t.Errorf("n = %v, want %v", got, want)
		}
		if !loaded {
			t.Errorf("an empty table is filled: loaded is false")
		}

		n, loaded, err = loadEvents(ctx, sqliteBackend(db), 800, []string{"1"}, demo.End)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := n, 500; got != want {
			t.Errorf("a filled table is left as it is: n = %v, want %v", got, want)
		}
		if loaded {
			t.Errorf("loaded is true")
		}

		var count int
		if err := db.QueryRow("SELECT count(*) FROM events").Scan(&count); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := count, 500; got != want {
			t.Errorf("count = %v, want %v", got, want)
		}
		if err := closeDB(); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
}

// TestShortRunPassesLongOne: while one query is in the middle of its rows
// (a long run), a short query and a write both complete, in the temporary
// database as in a file. With a single connection they would wait for the
// long one to end.
func TestShortRunPassesLongOne(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "x.db")} {
		dbs, err := openDatabases(path, "")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		db, closeDB := dbs.data, dbs.close
		ctx := context.Background()
		_, _, err = loadEvents(ctx, sqliteBackend(db), 100, []string{"1"}, demo.End)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}

		// An endless query, held open after its first row.
		long, err := db.QueryContext(ctx, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if !long.Next() {
			t.Fatalf("long.Next() is false")
		}

		short, cancel := context.WithTimeout(ctx, 10*time.Second)
		var n int
		if err := db.QueryRowContext(short, "SELECT count(*) FROM events").Scan(&n); err != nil {
			t.Fatalf("path %q: unexpected error: %v", path, err)
		}
		if got, want := n, 100; got != want {
			t.Errorf("n = %v, want %v", got, want)
		}
		_, err = db.ExecContext(short, "CREATE TABLE written (x INTEGER)")
		if err != nil {
			t.Fatalf("a write commits during the long read: unexpected error: %v", err)
		}
		cancel()

		if !long.Next() {
			t.Fatalf("the long query was still running: long.Next() is false")
		}
		if err := long.Close(); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if err := closeDB(); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
}

// TestTemporaryDatabaseIsDeleted: closing the temporary database removes
// its directory.
func TestTemporaryDatabaseIsDeleted(t *testing.T) {
	dbs, err := openDatabases("", "")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	db, closeDB := dbs.data, dbs.close
	var file string
	if err := db.QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the database is a file: os.Stat(%q) = %v, %v", file, fi, err)
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := mode, "wal"; got != want {
		t.Errorf("mode = %q, want %q", got, want)
	}
	if err := closeDB(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if fi, err := os.Stat(filepath.Dir(file)); err == nil && fi.IsDir() {
		t.Errorf("the directory %s is still there after close", filepath.Dir(file))
	}
}

// TestDatabasesApart: the store is a file of its own, beside the data
// file, and the run pool on the data file refuses writes while the data
// pool takes them.
func TestDatabasesApart(t *testing.T) {
	data := filepath.Join(t.TempDir(), "events.db")
	dbs, err := openDatabases(data, "")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	defer dbs.close()
	var file string
	if err := dbs.store.QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := file, filepath.Join(filepath.Dir(data), "events-store.db"); got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	_, err = dbs.data.Exec("CREATE TABLE t (x INTEGER)")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = dbs.runs.Exec("INSERT INTO t VALUES (1)")
	if err := err; err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Fatalf("the run pool writes: error %v does not contain %q", err, "readonly")
	}
	var n int
	if err := dbs.runs.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = dbs.data.Exec("INSERT INTO t VALUES (1)")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// TestStoreWritesDuringRefresh: while a refresh holds the data file's one
// write lock (its CREATE TABLE ... AS runs for as long as the pre-compute
// query), store writes and runs complete at once. In one file they waited
// for the busy timeout and failed.
func TestStoreWritesDuringRefresh(t *testing.T) {
	dbs, err := openDatabases("", "")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	defer dbs.close()
	ctx := context.Background()
	_, _, err = loadEvents(ctx, sqliteBackend(dbs.data), 100, []string{"1"}, demo.End)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	refresh, err := dbs.data.BeginTx(ctx, nil) // _txlock=immediate: takes the write lock
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = refresh.Exec("CREATE TABLE endpointkit_mat_x_v1_next AS SELECT * FROM events")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	defer refresh.Rollback()

	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = dbs.store.ExecContext(wctx, "CREATE TABLE written (x INTEGER)")
	if err != nil {
		t.Fatalf("a store write waited for the refresh: unexpected error: %v", err)
	}
	var n int
	if err := dbs.runs.QueryRowContext(wctx, "SELECT count(*) FROM events").Scan(&n); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := n, 100; got != want {
		t.Errorf("n = %v, want %v", got, want)
	}
}

// sqliteBackend is a backend on db, for loadEvents.
func sqliteBackend(db *sql.DB) *backend {
	return &backend{engine: engine.SQLite, exec: sqlexec.New(db, engine.SQLite)}
}

// TestPoolsKeepTheirConnections: under as many readers at once as a pool
// keeps idle, no pool closes a connection for want of idle room (which
// database/sql does past 2 by default, opening a new SQLite connection for
// the next run), and none bounds the connections it opens (a run never
// waits for another to end).
func TestPoolsKeepTheirConnections(t *testing.T) {
	dbs, err := openDatabases("", "")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	t.Cleanup(func() { dbs.close() })
	n := idleConns()
	for _, p := range []struct {
		name string
		db   *sql.DB
	}{{"runs", dbs.runs}, {"data", dbs.data}, {"store", dbs.store}} {
		// n readers at once, each holding its rows open until every one
		// has started, for several rounds.
		for range 3 {
			var started, done sync.WaitGroup
			started.Add(n)
			errs := make(chan error, n)
			for range n {
				done.Add(1)
				go func() {
					defer done.Done()
					rows, err := p.db.Query("SELECT 1")
					started.Done()
					if err != nil {
						errs <- err
						return
					}
					started.Wait()
					errs <- rows.Close()
				}()
			}
			done.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("%s: %v", p.name, err)
				}
			}
		}
		st := p.db.Stats()
		if st.MaxIdleClosed != 0 {
			t.Errorf("%s pool closed %d connections for want of idle room", p.name, st.MaxIdleClosed)
		}
		if st.MaxOpenConnections != 0 {
			t.Errorf("%s pool opens at most %d connections, want no bound", p.name, st.MaxOpenConnections)
		}
	}
}
