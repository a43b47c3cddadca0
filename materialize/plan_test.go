package materialize

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// Every SQLite golden plan runs on SQLite: the pre-compute query creates
// the stored table, and the read query prepares against it.
func TestPlansRunOnSQLite(t *testing.T) {
	db := testdb.SQLite(t)
	for _, ddl := range []string{
		"CREATE TABLE events (uuid TEXT, event TEXT, distinct_id TEXT, timestamp TEXT, properties TEXT, created_at TEXT)",
		"CREATE TABLE users (id TEXT, plan TEXT)",
	} {
		_, err := db.Exec(ddl)
		require.NoError(t, err)
	}
	dirs, err := filepath.Glob("testdata/*/precompute.sql")
	require.NoError(t, err)
	ran := 0
	for _, pre := range dirs {
		dir := filepath.Dir(pre)
		if opts := goldenOptions(t, dir); opts.Engine != engine.SQLite {
			continue
		}
		name := filepath.Base(dir)
		query, err := os.ReadFile(pre)
		require.NoError(t, err)
		_, err = db.Exec(`CREATE TABLE "stored" AS ` + string(query))
		require.NoError(t, err, "%v", name)
		read, err := os.ReadFile(filepath.Join(dir, "read.sql"))
		require.NoError(t, err)
		if !strings.HasPrefix(string(read), "--") {
			stmt, err := db.Prepare(string(read))
			require.NoError(t, err, "%v", name)
			stmt.Close()
		}
		_, err = db.Exec(`DROP TABLE "stored"`)
		require.NoError(t, err)
		ran++
	}
	a, b := ran, 15
	require.True(t, (a >= b), "ran = %v, want >= %v", a, b)
}

func TestPlanAccessors(t *testing.T) {
	plan := mustPlan(t, "SELECT a AS x, count(*) AS n FROM t WHERE b = {variables.b} GROUP BY a", Options{Engine: engine.PostgreSQL})
	got, want := plan.Engine(), engine.PostgreSQL
	require.Equal(t, want, got, "plan.Engine()")
	cols := plan.Columns()
	require.Equal(t, []string{"x", "n"}, cols)
	cols[0] = "changed"
	if got, want := plan.Columns()[0], "x"; got != want {
		t.Fatalf("Columns returns a copy: plan.Columns()[0] = %q, want %q", got, want)
	}
	require.Equal(t, `SELECT "a" AS "_k0", count(*) AS "_a0", "b" AS "b" FROM "t" GROUP BY "a", "b"`, plan.Precompute())
}
