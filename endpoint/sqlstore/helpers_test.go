package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fileDSN is the DSN of a SQLite file database set up as the package doc
// recommends for concurrent use.
func fileDSN(path string) string {
	return "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
}

// openMemory returns a migrated Store over a private in-memory SQLite
// database.
func openMemory(t testing.TB) *Store {
	t.Helper()
	return migrated(t, testdb.SQLite(t))
}

// openFile returns a migrated Store over the SQLite file at path, and its
// *sql.DB so that a test can close it.
func openFile(t testing.TB, path string) (*Store, *sql.DB) {
	t.Helper()
	db := testdb.SQLitePool(t, fileDSN(path), 0)
	return migrated(t, db), db
}

// rawFile returns an SQLite file of its own, not migrated, on a pool of
// database/sql's default size: for a test that writes an older schema.
func rawFile(t testing.TB) *sql.DB {
	t.Helper()
	return testdb.SQLitePool(t, fileDSN(tempFile(t)), 0)
}

// migrateTo leaves db's store tables at version n of d's migrations, as
// an older package wrote them: the schema table, each migration's
// statements and its version's row; then the extra statements run (a
// migration cut short, rows in an old form).
func migrateTo(t testing.TB, db *sql.DB, d engine.Store, n int, extra ...string) {
	t.Helper()
	stmts := []string{`CREATE TABLE ` + schemaTable + ` (version BIGINT NOT NULL PRIMARY KEY)`}
	for v, step := range migrations(d)[:n] {
		stmts = append(stmts, step...)
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO %s (version) VALUES (%d)`, schemaTable, v+1))
	}
	for _, stmt := range append(stmts, extra...) {
		_, err := db.Exec(stmt)
		require.NoError(t, err, "%s", stmt)
	}
}

// tempFile returns the path of a database file in a fresh directory.
func tempFile(t testing.TB) string {
	return filepath.Join(t.TempDir(), "endpointkit.db")
}

func migrated(t testing.TB, db *sql.DB) *Store {
	t.Helper()
	s, err := New(db, engine.SQLite)
	require.NoError(t, err)
	require.NoError(t, s.Migrate(context.Background()))
	return s
}

// backends are the databases every behaviour test runs against.
var backends = []struct {
	name string
	open func(t testing.TB) *Store
}{
	{"memory", openMemory},
	{"file", func(t testing.TB) *Store { s, _ := openFile(t, tempFile(t)); return s }},
}

// forEachBackend runs fn as a subtest against each backend.
func forEachBackend(t *testing.T, fn func(t *testing.T, s *Store)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { fn(t, b.open(t)) })
	}
}

// idOf is a stable UUID per name, so that fixtures are reproducible.
func idOf(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(name)).String()
}

// variableFixture is a normalized List variable with every field set.
func variableFixture(codeName string) variable.Variable {
	return variable.Variable{
		ID:           idOf("variable " + codeName),
		Name:         "Variable " + codeName,
		CodeName:     codeName,
		Type:         variable.List,
		DefaultValue: []string{"a"},
		Values:       []string{"a", "b"},
		IsMulti:      true,
	}
}

var t0 = time.Date(2025, 6, 1, 9, 30, 0, 123456789, time.UTC)

// sqlQuery is a SQL query with one variable and a test value.
func sqlQuery(sql string) driver.Query {
	return driver.Query{
		Kind: driver.KindSQL,
		SQL:  sql,
		Variables: map[string]driver.VariableRef{
			idOf("variable event"): {VariableID: idOf("variable event"), CodeName: "event", Value: json.RawMessage(`"$pageview"`)},
		},
	}
}

// endpointFixture returns an endpoint with every field set, and its first
// version.
func endpointFixture(project, name string) (driver.Endpoint, driver.Version) {
	q := sqlQuery("SELECT count() FROM events WHERE event = {variables.event}")
	executed := t0.Add(time.Minute)
	e := driver.Endpoint{
		ID:             idOf("endpoint " + project + " " + name),
		ProjectID:      project,
		Name:           name,
		Description:    "Counts " + name,
		Query:          q,
		IsActive:       true,
		IsMaterialized: false,
		CurrentVersion: 1,
		VersionsCount:  1,
		CreatedAt:      t0,
		UpdatedAt:      t0,
		LastExecutedAt: &executed,
	}
	return e, driver.Version{EndpointID: e.ID, Number: 1, Query: sqlQuery(q.SQL), CreatedAt: t0}
}

// nextVersion returns e moved to a new query, and the version to write
// with it.
func nextVersion(e driver.Endpoint, sql string) (driver.Endpoint, *driver.Version) {
	e.Query = sqlQuery(sql)
	e.CurrentVersion++
	e.VersionsCount++
	e.UpdatedAt = e.UpdatedAt.Add(time.Hour)
	return e, &driver.Version{EndpointID: e.ID, Number: e.CurrentVersion, Query: sqlQuery(sql), CreatedAt: e.UpdatedAt}
}

// assertRoundTrip checks that unmarshal reads back in from the text
// marshal writes of it.
func assertRoundTrip[T any](t *testing.T, in T, marshal func(T) (string, error), unmarshal func(string) (T, error)) {
	t.Helper()
	text, err := marshal(in)
	require.NoError(t, err)
	got, err := unmarshal(text)
	require.NoError(t, err)
	assert.Equal(t, in, got)
}
