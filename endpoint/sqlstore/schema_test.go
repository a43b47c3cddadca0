package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"testing"

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
