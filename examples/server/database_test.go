package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadDemoOnlyIntoAnEmptyTable(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "x.db")} {
		ctx := context.Background()
		dbs, err := openDatabases(path, "")
		require.NoError(t, err)
		db, closeDB := dbs.data, dbs.close

		n, loaded, err := loadEvents(ctx, sqliteBackend(db), 0, []string{"1"}, demo.End)
		require.NoError(t, err)
		assert.Equal(t, 0, n)
		assert.True(t, loaded, "an empty table is created: loaded is false")

		n, loaded, err = loadEvents(ctx, sqliteBackend(db), 500, []string{"1"}, demo.End)
		require.NoError(t, err)
		assert.Equal(t, 500, n)
		assert.True(t, loaded, "an empty table is filled: loaded is false")

		n, loaded, err = loadEvents(ctx, sqliteBackend(db), 800, []string{"1"}, demo.End)
		require.NoError(t, err)
		got, want := n, 500
		assert.Equal(t, want, got, "a filled table is left as it is: n")
		assert.False(t, loaded, "loaded is true")

		var count int
		require.NoError(t, db.QueryRow("SELECT count(*) FROM events").Scan(&count))
		assert.Equal(t, 500, count)
		require.NoError(t, closeDB())
	}
}

// TestShortRunPassesLongOne: while one query is in the middle of its rows
// (a long run), a short query and a write both complete, in the temporary
// database as in a file. With a single connection they would wait for the
// long one to end.
func TestShortRunPassesLongOne(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "x.db")} {
		dbs, err := openDatabases(path, "")
		require.NoError(t, err)
		db, closeDB := dbs.data, dbs.close
		ctx := context.Background()
		_, _, err = loadEvents(ctx, sqliteBackend(db), 100, []string{"1"}, demo.End)
		require.NoError(t, err)

		// An endless query, held open after its first row.
		long, err := db.QueryContext(ctx, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c")
		require.NoError(t, err)
		require.True(t, long.Next(), "long.Next() is false")

		short, cancel := context.WithTimeout(ctx, 10*time.Second)
		var n int
		require.NoError(t, db.QueryRowContext(short, "SELECT count(*) FROM events").Scan(&n), "path %q", path)
		assert.Equal(t, 100, n)
		_, err = db.ExecContext(short, "CREATE TABLE written (x INTEGER)")
		require.NoError(t, err, "a write commits during the long read")
		cancel()

		require.True(t, long.Next(), "the long query was still running: long.Next() is false")
		require.NoError(t, long.Close())
		require.NoError(t, closeDB())
	}
}

// TestTemporaryDatabaseIsDeleted: closing the temporary database removes
// its directory.
func TestTemporaryDatabaseIsDeleted(t *testing.T) {
	dbs, err := openDatabases("", "")
	require.NoError(t, err)
	db, closeDB := dbs.data, dbs.close
	var file string
	require.NoError(t, db.QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file))
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the database is a file: os.Stat(%q) = %v, %v", file, fi, err)
	}
	var mode string
	require.NoError(t, db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
	require.NoError(t, closeDB())
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
	require.NoError(t, err)
	defer dbs.close()
	var file string
	require.NoError(t, dbs.store.QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file))
	got, want := file, filepath.Join(filepath.Dir(data), "events-store.db")
	assert.Equal(t, want, got, "file")
	_, err = dbs.data.Exec("CREATE TABLE t (x INTEGER)")
	require.NoError(t, err)
	_, err = dbs.runs.Exec("INSERT INTO t VALUES (1)")
	require.ErrorContains(t, err, "readonly", "the run pool writes")
	var n int
	require.NoError(t, dbs.runs.QueryRow("SELECT count(*) FROM t").Scan(&n))
	_, err = dbs.data.Exec("INSERT INTO t VALUES (1)")
	require.NoError(t, err)
}

// TestStoreWritesDuringRefresh: while a refresh holds the data file's one
// write lock (its CREATE TABLE ... AS runs for as long as the pre-compute
// query), store writes and runs complete at once. In one file they waited
// for the busy timeout and failed.
func TestStoreWritesDuringRefresh(t *testing.T) {
	dbs, err := openDatabases("", "")
	require.NoError(t, err)
	defer dbs.close()
	ctx := context.Background()
	_, _, err = loadEvents(ctx, sqliteBackend(dbs.data), 100, []string{"1"}, demo.End)
	require.NoError(t, err)
	refresh, err := dbs.data.BeginTx(ctx, nil) // _txlock=immediate: takes the write lock
	require.NoError(t, err)
	_, err = refresh.Exec("CREATE TABLE endpointkit_mat_x_v1_next AS SELECT * FROM events")
	require.NoError(t, err)
	defer refresh.Rollback()

	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = dbs.store.ExecContext(wctx, "CREATE TABLE written (x INTEGER)")
	require.NoError(t, err, "a store write waited for the refresh")
	var n int
	require.NoError(t, dbs.runs.QueryRowContext(wctx, "SELECT count(*) FROM events").Scan(&n))
	assert.Equal(t, 100, n)
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
	require.NoError(t, err)
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
				require.NoError(t, err, "%s", p.name)
			}
		}
		st := p.db.Stats()
		assert.Equal(t, int64(0), st.MaxIdleClosed, "%s pool closed", p.name)
		assert.Equal(t, 0, st.MaxOpenConnections, "%s pool opens at most", p.name)
	}
}
