package materialize

import (
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// Every SQLite golden plan runs on SQLite: the pre-compute query creates
// the stored table, and the read query prepares against it.
func TestPlansRunOnSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	for _, ddl := range []string{
		"CREATE TABLE events (uuid TEXT, event TEXT, distinct_id TEXT, timestamp TEXT, properties TEXT, created_at TEXT)",
		"CREATE TABLE users (id TEXT, plan TEXT)",
	} {
		_, err := db.Exec(ddl)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	dirs, err := filepath.Glob("testdata/*/precompute.sql")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	ran := 0
	for _, pre := range dirs {
		dir := filepath.Dir(pre)
		if opts := goldenOptions(t, dir); opts.Engine != engine.SQLite {
			continue
		}
		name := filepath.Base(dir)
		query, err := os.ReadFile(pre)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		_, err = db.Exec(`CREATE TABLE "stored" AS ` + string(query))
		if err != nil {
			t.Fatalf("%v: unexpected error: %v", name, err)
		}
		read, err := os.ReadFile(filepath.Join(dir, "read.sql"))
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if !strings.HasPrefix(string(read), "--") {
			stmt, err := db.Prepare(string(read))
			if err != nil {
				t.Fatalf("%v: unexpected error: %v", name, err)
			}
			stmt.Close()
		}
		_, err = db.Exec(`DROP TABLE "stored"`)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		ran++
	}
	if a, b := ran, 15; !(a >= b) {
		t.Fatalf("ran = %v, want >= %v", a, b)
	}
}

func TestPlanAccessors(t *testing.T) {
	plan := mustPlan(t, "SELECT a AS x, count(*) AS n FROM t WHERE b = {variables.b} GROUP BY a", Options{Engine: engine.PostgreSQL})
	if got, want := plan.Engine(), engine.PostgreSQL; !reflect.DeepEqual(got, want) {
		t.Fatalf("plan.Engine() = %+v, want %+v", got, want)
	}
	cols := plan.Columns()
	if got, want := cols, ([]string{"x", "n"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("cols = %+v, want %+v", got, want)
	}
	cols[0] = "changed"
	if got, want := plan.Columns()[0], "x"; got != want {
		t.Fatalf("Columns returns a copy: plan.Columns()[0] = %q, want %q", got, want)
	}
	if got, want := plan.Precompute(), `SELECT "a" AS "_k0", count(*) AS "_a0", "b" AS "b" FROM "t" GROUP BY "a", "b"`; got != want {
		t.Fatalf("plan.Precompute() = %q, want %q", got, want)
	}
}
