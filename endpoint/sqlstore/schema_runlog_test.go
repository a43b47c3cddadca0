package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openV5 returns a SQLite file database at schema version 5, as this
// package wrote it before version 6, its run log holding n entries (in
// the stored form of version 5) of each of two endpoints; then extra
// statements run.
func openV5(t *testing.T, n int, extra ...string) (*sql.DB, []driver.RunLogEntry) {
	t.Helper()
	db := rawFile(t)
	migrateTo(t, db, engine.SQLite, 5)
	s := &Store{db: db, dialect: engine.SQLite}
	var entries []driver.RunLogEntry
	cases := entryCases()
	for i := range 2 * n {
		e := cases[[]int{1, 2, 4}[i%3]] // not the invalid UTF-8 of case 3, stored as U+FFFD
		e.ExecutionID = fmt.Sprintf("run-%04d", i)
		e.ProjectID, e.EndpointID = "1", []string{"a", "b"}[i%2]
		e.At = runLogNow.Add(-time.Duration(2*n-i) * time.Second)
		if i%4 == 1 {
			e.KeyID = "key-1"
		}
		insertOldRow(t, s, e, int64(i))
		e.Seq = uint64(i)
		entries = append(entries, e)
	}
	for _, stmt := range extra {
		_, err := db.Exec(stmt)
		require.NoError(t, err, "%s", stmt)
	}
	return db, entries
}

var runLogNow = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// runLogDDL is how SQLite holds the run log's table.
func runLogDDL(t *testing.T, db *sql.DB) string {
	t.Helper()
	var ddl string
	require.NoError(t, db.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, runLogTable).Scan(&ddl))
	return ddl
}

// checkLog fails t unless the log lists, for each endpoint, its entries
// of want, newest first, with every field.
func checkLog(t *testing.T, l driver.RunLog, want []driver.RunLogEntry) {
	t.Helper()
	for _, id := range []string{"a", "b"} {
		var w []driver.RunLogEntry
		for _, e := range want {
			if e.EndpointID == id {
				w = append([]driver.RunLogEntry{e}, w...)
			}
		}
		got, _, err := l.List(context.Background(), "1", id, driver.LogPage{Limit: 10000})
		require.NoError(t, err)
		require.Len(t, got, len(w), "List(%s)", id)
		for i := range got {
			g, e := got[i], w[i]
			require.True(t, g.At.Equal(e.At), "List(%s)[%d].At = %v, want %v", id, i, g.At, e.At)
			g.At, e.At, g.Seq, e.Seq = time.Time{}, time.Time{}, 0, 0
			require.Equal(t, e, g, "List(%s)[%d]", id, i)
		}
	}
}

// TestMigrateRunLogToVersion6: on SQLite, version 6 turns the run log into
// a WITHOUT ROWID table and keeps every row, each listing as before; the
// log takes new entries and prunes them after.
func TestMigrateRunLogToVersion6(t *testing.T) {
	db, entries := openV5(t, 300)
	require.NotContains(t, runLogDDL(t, db), "WITHOUT ROWID", "the version 5 table is already WITHOUT ROWID")
	s := migrated(t, db)
	got, want := schemaVersions(t, db), allVersions()
	require.Equal(t, want, got, "versions")
	ddl := runLogDDL(t, db)
	require.Contains(t, ddl, "WITHOUT ROWID", "the run log after version 6")
	require.Contains(t, ddl, "key_id", "the run log after version 6")
	l := s.RunLog(RunLogOptions{MaxPerEndpoint: 400, Now: func() time.Time { return runLogNow }})
	checkLog(t, l, entries)

	// New entries go after the copied ones; the count bound prunes both.
	batch := newBatch(func(i int) time.Time { return runLogNow.Add(time.Duration(i) * time.Millisecond) })
	require.NoError(t, l.(driver.BatchRunLog).AppendBatch(context.Background(), batch))
	all := append(append([]driver.RunLogEntry(nil), entries...), batch...)
	checkLog(t, l, all[len(all)-800:])
	require.Equal(t, 800, storedEntries(t, db))
}

// TestMigrateRunLogCutShort: a migration to version 6 that fails at its
// last statement (the schema holds a view of the run log, which SQLite
// will not let a renamed table break) leaves version 5 as it was, rows and
// all; once the obstacle is gone, Migrate completes and keeps every row.
func TestMigrateRunLogCutShort(t *testing.T) {
	const view = `endpointkit_test_run_log_view`
	db, entries := openV5(t, 50, `CREATE VIEW `+view+` AS SELECT entry FROM `+runLogTable)
	s, err := New(db, engine.SQLite)
	require.NoError(t, err)
	ctx := context.Background()
	err = s.Migrate(ctx)
	require.ErrorContains(t, err, "version 6", "Migrate with the view")
	got, want := schemaVersions(t, db), allVersions()[:5]
	require.Equal(t, want, got, "versions after a failed migration")
	require.NotContains(t, runLogDDL(t, db), "WITHOUT ROWID", "the failed migration left")
	var n int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = ?`, runLogTable+"_v6").Scan(&n), "the failed migration left its new table")
	require.Equal(t, 0, n, "the failed migration left its new table")
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM `+runLogTable).Scan(&n), "the failed migration left")
	require.Len(t, entries, n, "the failed migration left")

	_, err = db.Exec(`DROP VIEW ` + view)
	require.NoError(t, err)
	require.NoError(t, s.Migrate(ctx))
	if got, want := schemaVersions(t, db), allVersions(); !reflect.DeepEqual(got, want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	require.Contains(t, runLogDDL(t, db), "WITHOUT ROWID", "the run log after version 6")
	checkLog(t, s.RunLog(RunLogOptions{Now: func() time.Time { return runLogNow }}), entries)
}

// TestRunLogMigrationOnlyOnSQLite: version 6 changes nothing on the
// engines whose tables are already stored in key order or have no such
// storage.
func TestRunLogMigrationOnlyOnSQLite(t *testing.T) {
	for _, d := range []engine.Store{engine.PostgreSQL.(engine.Store), engine.MySQL.(engine.Store)} {
		assert.Empty(t, migrations(d)[5], "%s: version 6", d.Name())
	}
}

// storedEntries counts the entries the run log's rows hold (a row of
// schema version 6 holds one).
func storedEntries(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(`SELECT COALESCE(SUM(COALESCE(entries, 1)), 0) FROM `+runLogTable).Scan(&n))
	return n
}

// newBatch is 400 new entries of project 1, 200 of endpoint "a" and 200 of
// "b" (half the bound a migration test lists with, when a pruning is due),
// named new-0000 on, the i-th at at(i).
func newBatch(at func(i int) time.Time) []driver.RunLogEntry {
	var batch []driver.RunLogEntry
	for i := range 400 {
		e := entryCases()[1]
		e.ExecutionID = fmt.Sprintf("new-%04d", i)
		e.ProjectID, e.EndpointID = "1", []string{"a", "b"}[i%2]
		e.At = at(i)
		batch = append(batch, e)
	}
	return batch
}
