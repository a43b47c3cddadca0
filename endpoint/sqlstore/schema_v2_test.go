package sqlstore

import (
	"context"
	"database/sql"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// openV1 returns an in-memory database at schema version 1, as this package
// wrote it before materialization, holding one endpoint written with the
// version 1 columns. extra statements run after it, to stand in for a
// migration to version 2 that MySQL cut short.
func openV1(t *testing.T, extra ...string) (*sql.DB, driver.Endpoint) {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	stmts := append([]string{`CREATE TABLE ` + schemaTable + ` (version BIGINT NOT NULL PRIMARY KEY)`},
		migrations(engine.SQLite)[0]...)
	stmts = append(stmts, `INSERT INTO `+schemaTable+` (version) VALUES (1)`)
	for _, stmt := range append(stmts, extra...) {
		_, err := db.Exec(stmt)
		if err != nil {
			t.Fatalf("%v: unexpected error: %v", stmt, err)
		}
	}
	e, v := endpointFixture("p", "daily")
	e.IsMaterialized = true
	row, err := endpointRow(e)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = db.Exec(`INSERT INTO `+endpointsTable+` (project, id, name, description, query_json, is_active, is_materialized,
		current_version, versions_count, created_at, updated_at, last_executed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		append([]any{"p"}, row[:11]...)...)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	ver, err := versionRow("p", e.ID, v)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	// The columns of version 1's table: columns_json came at version 8.
	_, err = db.Exec(`INSERT INTO `+versionsTable+` (project, endpoint_id, version, query_json, created_at) VALUES (?, ?, ?, ?, ?)`, ver[:5]...)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
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
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("a second Migrate: unexpected error: %v", err)
			}
			if got, want := schemaVersions(t, db), allVersions(); !reflect.DeepEqual(got, want) {
				t.Errorf("schemaVersions(t, db) = %+v, want %+v", got, want)
			}

			got, err := s.Endpoints().Get(ctx, "p", "daily")
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got, want := got.ID, e.ID; got != want {
				t.Errorf("got.ID = %q, want %q", got, want)
			}
			if !got.IsMaterialized {
				t.Errorf("got.IsMaterialized is false")
			}
			if v := got.MaterializationFreshness; v != 0 {
				t.Errorf("got.MaterializationFreshness = %v, want zero", v)
			}
			if v := got.MaterializationBuckets; v != nil {
				t.Errorf("got.MaterializationBuckets = %v, want nil", v)
			}
			if v := got.MaterializationState; v != (driver.MaterializationState{}) {
				t.Errorf("got.MaterializationState = %+v, want the zero value", v)
			}

			at := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
			st := driver.MaterializationState{Status: driver.StatusCompleted, Attempt: "v1;", Table: "t", Built: "v1;", At: &at}
			if err := s.Endpoints().SetMaterialization(ctx, "p", e.ID, st); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			got.MaterializationFreshness = time.Minute
			if err := s.Endpoints().Update(ctx, got, nil); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			got, err = s.Endpoints().Get(ctx, "p", "daily")
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got, want := got.MaterializationState, st; !reflect.DeepEqual(got, want) {
				t.Errorf("got.MaterializationState = %+v, want %+v", got, want)
			}
			if got, want := got.MaterializationFreshness, time.Minute; got != want {
				t.Errorf("got.MaterializationFreshness = %v, want %v", got, want)
			}
			list, err := s.Endpoints().ListMaterialized(ctx)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got := len(list); got != 1 {
				t.Fatalf("len(list) = %d, want %d: %v", got, 1, list)
			}
			if got, want := list[0].ProjectID, "p"; got != want {
				t.Errorf("list[0].ProjectID = %q, want %q", got, want)
			}
		})
	}
}

// TestMigrationDDLPerDialect: version 2 adds its columns idempotently in
// each dialect's way.
func TestMigrationDDLPerDialect(t *testing.T) {
	if got, want := engine.PostgreSQL.AddColumn("t", "c", "TEXT NULL"), "ALTER TABLE t ADD COLUMN IF NOT EXISTS c TEXT NULL"; got != want {
		t.Errorf("engine.PostgreSQL.AddColumn(\"t\", \"c\", \"TEXT NULL\") = %q, want %q", got, want)
	}
	if got, want := engine.MySQL.AddColumn("t", "c", "MEDIUMTEXT NULL"), "ALTER TABLE t ADD COLUMN c MEDIUMTEXT NULL"; got != want {
		t.Errorf("engine.MySQL.AddColumn(\"t\", \"c\", \"MEDIUMTEXT NULL\") = %q, want %q", got, want)
	}
	if !isDuplicateColumn(errString("Error 1060 (42S21): Duplicate column name 'c'")) {
		t.Errorf("condition is false")
	}
	if !isDuplicateColumn(errString("SQL logic error: duplicate column name: c (1)")) {
		t.Errorf("condition is false")
	}
	if isDuplicateColumn(errString("no such table: t")) {
		t.Errorf("isDuplicateColumn(errString(\"no such table: t\")) is true")
	}
	if isDuplicateColumn(nil) {
		t.Errorf("isDuplicateColumn(nil) is true")
	}
}

type errString string

func (e errString) Error() string { return string(e) }
