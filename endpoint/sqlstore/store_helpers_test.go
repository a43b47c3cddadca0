package sqlstore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
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
	db, err := sql.Open("sqlite", fileDSN(path))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return migrated(t, db), db
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
