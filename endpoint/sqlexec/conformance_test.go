package sqlexec_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/executortest"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// TestConformance runs the Executor suite on SQLite in memory (one
// connection, as each connection of :memory: is a database of its own) and
// on a file, where the pool opens several connections and concurrent
// queries really run at once.
func TestConformance(t *testing.T) {
	for _, c := range []struct {
		name string
		dsn  func(t *testing.T) string
		max  int
	}{
		{"memory", func(*testing.T) string { return ":memory:" }, 1},
		{"file", func(t *testing.T) string {
			return "file:" + filepath.Join(t.TempDir(), "executortest.db") + "?_pragma=busy_timeout(5000)"
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			executortest.Run(t, func(t *testing.T) driver.Executor {
				db, err := sql.Open("sqlite", c.dsn(t))
				require.NoError(t, err)
				db.SetMaxOpenConns(c.max)
				t.Cleanup(func() { db.Close() })
				return sqlexec.New(db, engine.SQLite)
			})
		})
	}
}
