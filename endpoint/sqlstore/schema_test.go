package sqlstore

import (
	"context"
	"database/sql"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func schemaVersions(t *testing.T, db *sql.DB) []int {
	t.Helper()
	rows, err := db.Query(`SELECT version FROM ` + schemaTable + ` ORDER BY version`)
	require.NoError(t, err)
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		out = append(out, v)
	}
	require.NoError(t, rows.Err())
	return out
}

// allVersions is the version rows of a migrated database: one per
// migration applied.
func allVersions() []int {
	out := make([]int, SchemaVersion)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestMigrateIsIdempotent(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	require.NoError(t, s.Variables().Create(ctx, "p", variableFixture("a")))
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Migrate(ctx))
	got, want := schemaVersions(t, s.db), allVersions()
	assert.Equal(t, want, got, "schemaVersions(t, s.db)")
	_, err := s.Variables().Get(ctx, "p", variableFixture("a").ID)
	assert.NoError(t, err, "a second Migrate keeps the data")
	v := migrations(engine.SQLite)
	assert.Len(t, v, SchemaVersion, "len")
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	s := openMemory(t)
	_, err := s.db.Exec(`INSERT INTO `+schemaTable+` (version) VALUES (?)`, SchemaVersion+1)
	require.NoError(t, err)
	err = s.Migrate(context.Background())
	assert.ErrorIs(t, err, ErrSchemaTooNew)
}

func TestMigrateConcurrently(t *testing.T) {
	path := tempFile(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := sql.Open("sqlite", fileDSN(path))
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			s, err := New(db, engine.SQLite)
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = s.Migrate(context.Background())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
	_, db := openFile(t, path)
	got, want := schemaVersions(t, db), allVersions()
	assert.Equal(t, want, got, "schemaVersions(t, db)")
}

func TestUseBeforeMigrateSaysSo(t *testing.T) {
	db := testdb.SQLite(t)
	s, err := New(db, engine.SQLite)
	require.NoError(t, err)
	err = s.Variables().Create(context.Background(), "p", variableFixture("a"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Migrate")
}

// TestMigrateGivesUpOnAnEndlessConflict stands a trigger in for a version
// row that can never be written: Migrate takes the duplicate-key error for
// a lost race a bounded number of times, then says what is wrong.
func TestMigrateGivesUpOnAnEndlessConflict(t *testing.T) {
	db := testdb.SQLite(t)
	for _, stmt := range []string{
		`CREATE TABLE ` + schemaTable + ` (version BIGINT NOT NULL PRIMARY KEY)`,
		`CREATE TRIGGER refuse BEFORE INSERT ON ` + schemaTable + ` BEGIN SELECT RAISE(ABORT, 'UNIQUE constraint failed: test trigger'); END`,
	} {
		_, err := db.Exec(stmt)
		require.NoError(t, err)
	}
	s, err := New(db, engine.SQLite)
	require.NoError(t, err)
	err = s.Migrate(context.Background())
	assert.ErrorContains(t, err, "did not settle")
}

// openV1 returns an in-memory database at schema version 1, as this package
// wrote it before materialization, holding one endpoint written with the
// version 1 columns. extra statements run after it, to stand in for a
// migration to version 2 that MySQL cut short.
func openV1(t *testing.T, extra ...string) (*sql.DB, driver.Endpoint) {
	t.Helper()
	db := testdb.SQLite(t)
	migrateTo(t, db, engine.SQLite, 1, extra...)
	e, v := endpointFixture("p", "daily")
	e.IsMaterialized = true
	row, err := endpointRow(e)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO `+endpointsTable+` (project, id, name, description, query_json, is_active, is_materialized,
		current_version, versions_count, created_at, updated_at, last_executed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		append([]any{"p"}, row[:11]...)...)
	require.NoError(t, err)
	ver, err := versionRow("p", e.ID, v)
	require.NoError(t, err)
	// The columns of version 1's table: columns_json came at version 8.
	_, err = db.Exec(`INSERT INTO `+versionsTable+` (project, endpoint_id, version, query_json, created_at) VALUES (?, ?, ?, ?, ?)`, ver[:5]...)
	require.NoError(t, err)
	return db, e
}

// TestMigrateFromVersion1: an endpoint written at version 1 reads back
// after the migration with no materialization settings or state, and takes
// both.
func TestMigrateFromVersion1(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"fresh", nil},
		{"cut short", []string{`ALTER TABLE ` + endpointsTable + ` ADD COLUMN materialization_settings TEXT NULL`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, e := openV1(t, tc.extra...)
			ctx := context.Background()
			s, err := New(db, engine.SQLite)
			require.NoError(t, err)
			require.NoError(t, s.Migrate(ctx))
			require.NoError(t, s.Migrate(ctx), "a second Migrate")
			if got, want := schemaVersions(t, db), allVersions(); !reflect.DeepEqual(got, want) {
				t.Errorf("schemaVersions(t, db) = %+v, want %+v", got, want)
			}

			got, err := s.Endpoints().Get(ctx, "p", "daily")
			require.NoError(t, err)
			assert.Equal(t, e.ID, got.ID)
			assert.True(t, got.IsMaterialized, "got.IsMaterialized is false")
			assert.Equal(t, time.Duration(0), got.MaterializationFreshness)
			assert.Nil(t, got.MaterializationBuckets)
			if v := got.MaterializationState; v != (driver.MaterializationState{}) {
				t.Errorf("got.MaterializationState = %+v, want the zero value", v)
			}

			at := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
			st := driver.MaterializationState{Status: driver.StatusCompleted, Attempt: "v1;", Table: "t", Built: "v1;", At: &at}
			require.NoError(t, s.Endpoints().SetMaterialization(ctx, "p", e.ID, st))
			got.MaterializationFreshness = time.Minute
			require.NoError(t, s.Endpoints().Update(ctx, got, nil))
			got, err = s.Endpoints().Get(ctx, "p", "daily")
			require.NoError(t, err)
			assert.Equal(t, st, got.MaterializationState)
			assert.Equal(t, time.Minute, got.MaterializationFreshness)
			list, err := s.Endpoints().ListMaterialized(ctx)
			require.NoError(t, err)
			require.Len(t, list, 1)
			assert.Equal(t, "p", list[0].ProjectID)
		})
	}
}

// TestMigrationDDLPerDialect: version 2 adds its columns idempotently in
// each dialect's way.
func TestMigrationDDLPerDialect(t *testing.T) {
	assert.Equal(t, "ALTER TABLE t ADD COLUMN IF NOT EXISTS c TEXT NULL", engine.PostgreSQL.AddColumn("t", "c", "TEXT NULL"))
	assert.Equal(t, "ALTER TABLE t ADD COLUMN c MEDIUMTEXT NULL", engine.MySQL.AddColumn("t", "c", "MEDIUMTEXT NULL"))
	assert.True(t, isDuplicateColumn(errString("Error 1060 (42S21): Duplicate column name 'c'")), "condition is false")
	assert.True(t, isDuplicateColumn(errString("SQL logic error: duplicate column name: c (1)")), "condition is false")
	assert.False(t, isDuplicateColumn(errString("no such table: t")), "isDuplicateColumn(errString(\"no such table: t\")) is true")
	assert.False(t, isDuplicateColumn(nil), "isDuplicateColumn(nil) is true")
}

type errString string

func (e errString) Error() string { return string(e) }
