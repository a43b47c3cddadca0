package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
)

func schemaVersions(t *testing.T, db *sql.DB) []int {
	t.Helper()
	rows, err := db.Query(`SELECT version FROM ` + schemaTable + ` ORDER BY version`)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
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
	if err := s.Variables().Create(ctx, "p", variableFixture("a")); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := schemaVersions(t, s.db), allVersions(); !reflect.DeepEqual(got, want) {
		t.Errorf("schemaVersions(t, s.db) = %+v, want %+v", got, want)
	}
	_, err := s.Variables().Get(ctx, "p", variableFixture("a").ID)
	if err != nil {
		t.Errorf("a second Migrate keeps the data: unexpected error: %v", err)
	}
	if v := migrations(engine.SQLite); len(v) != SchemaVersion {
		t.Errorf("len = %d, want %d: %v", len(v), SchemaVersion, v)
	}
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	s := openMemory(t)
	_, err := s.db.Exec(`INSERT INTO `+schemaTable+` (version) VALUES (?)`, SchemaVersion+1)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	err = s.Migrate(context.Background())
	if err := err; !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("error %v is not %v", err, ErrSchemaTooNew)
	}
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
		if err != nil {
			t.Errorf("unexpected error: %v", err)
		}
	}
	_, db := openFile(t, path)
	if got, want := schemaVersions(t, db), allVersions(); !reflect.DeepEqual(got, want) {
		t.Errorf("schemaVersions(t, db) = %+v, want %+v", got, want)
	}
}

func TestUseBeforeMigrateSaysSo(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	s, err := New(db, engine.SQLite)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	err = s.Variables().Create(context.Background(), "p", variableFixture("a"))
	if err == nil {
		t.Fatalf("got no error, want one")
	}
	if s, sub := err.Error(), "Migrate"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}

// TestMigrateGivesUpOnAnEndlessConflict stands a trigger in for a version
// row that can never be written: Migrate takes the duplicate-key error for
// a lost race a bounded number of times, then says what is wrong.
func TestMigrateGivesUpOnAnEndlessConflict(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	for _, stmt := range []string{
		`CREATE TABLE ` + schemaTable + ` (version BIGINT NOT NULL PRIMARY KEY)`,
		`CREATE TRIGGER refuse BEFORE INSERT ON ` + schemaTable + ` BEGIN SELECT RAISE(ABORT, 'UNIQUE constraint failed: test trigger'); END`,
	} {
		_, err := db.Exec(stmt)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	s, err := New(db, engine.SQLite)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	err = s.Migrate(context.Background())
	if err := err; err == nil || !strings.Contains(err.Error(), "did not settle") {
		t.Errorf("error %v does not contain %q", err, "did not settle")
	}
}
