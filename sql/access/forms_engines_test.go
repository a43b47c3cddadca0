package access

import (
	"context"
	"database/sql"
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A form of SQL an engine runs that the analyzer once refused (issue 24
// item 5, measured on public SELECT statements): each is accepted by
// ConfineFor on the engines that run it, and the scoped statement runs there
// and reads only the tenant's rows.
type form struct {
	name  string
	query string
	// engines run the form; ConfineFor must accept it for each of them.
	engines []string
	// rows is the number of rows the scoped query answers for tenant "1",
	// which has 2 rows in events (tenant "2" has 3).
	rows int
}

var forms = []form{
	{"union of parenthesised queries", `(SELECT n FROM events) UNION ALL (SELECT n FROM events)`, []string{"postgresql", "mysql", "clickhouse"}, 4},
	{"union distinct with order and limit", `(SELECT n FROM events) UNION DISTINCT (SELECT n + 100 FROM events) ORDER BY 1 LIMIT 3`, []string{"postgresql", "mysql"}, 3},
	{"union distinct", `(SELECT n FROM events) UNION DISTINCT (SELECT n + 100 FROM events)`, []string{"postgresql", "mysql", "clickhouse"}, 4},
	{"query in two parentheses", `((SELECT n FROM events))`, []string{"postgresql", "mysql", "clickhouse"}, 2},
	{"except of parenthesised queries", `(SELECT n FROM events) EXCEPT (SELECT n FROM events WHERE n > 10)`, []string{"postgresql", "mysql", "clickhouse"}, 1},
	{"parenthesised arm after a plain one", `SELECT n FROM events UNION ALL (SELECT n FROM events)`, []string{"postgresql", "mysql", "clickhouse"}, 4},
	{"star except", `SELECT * EXCEPT (props, tags) FROM events`, []string{"clickhouse"}, 2},
	{"qualified star except strict", `SELECT e.* EXCEPT STRICT (props) FROM events AS e`, []string{"clickhouse"}, 2},
	{"star replace", `SELECT * REPLACE (n * 2 AS n, upper(event) AS event) FROM events`, []string{"clickhouse"}, 2},
	{"star except and replace", `SELECT * EXCEPT (tags) REPLACE (n + 1 AS n) FROM events`, []string{"clickhouse"}, 2},
	{"array subscript", `SELECT tags[1] FROM events WHERE tags[1] > 0`, []string{"postgresql", "clickhouse"}, 2},
	{"map or JSON subscript", `SELECT props['k'] FROM events WHERE props['k'] IS NOT NULL`, []string{"postgresql", "clickhouse"}, 2},
	{"subscript on a subscript's value", `SELECT tags[n - n + 1] FROM events`, []string{"postgresql", "clickhouse"}, 2},
	{"hyperbolic functions", `SELECT sinh(n), cosh(n), tanh(n), asinh(n), acosh(n + 1), atanh(0.5) FROM events`, []string{"sqlite", "postgresql", "clickhouse"}, 2},
	{"cotangent", `SELECT cot(n + 1) FROM events`, []string{"postgresql", "mysql"}, 2},
	{"extract", `SELECT extract(minute FROM ts) AS m FROM events`, []string{"postgresql", "mysql", "clickhouse"}, 2},
}

// formEngine runs the forms on one engine.
type formEngine struct {
	e engine.Engine
	// count runs a statement and returns the number of rows it answers.
	count func(q string, args []any) (int, error)
}

// formEngines opens each engine that is up with the events table of the
// forms: tenant "1" has the rows n = 7 and 13, tenant "2" n = 1, 2, 3.
var formEngines = map[string]func(t *testing.T) *formEngine{
	"sqlite": func(t *testing.T) *formEngine {
		db := testdb.SQLite(t)
		sqlSetup(t, db, `CREATE TABLE events (project_id TEXT, event TEXT, n INTEGER, ts TEXT)`,
			`INSERT INTO events VALUES ('1', 'a', 7, '2025-05-01 10:07:00'), ('1', 'b', 13, '2025-05-01 10:13:00'),
			('2', 'x', 1, '2025-05-01'), ('2', 'y', 2, '2025-05-01'), ('2', 'z', 3, '2025-05-01')`)
		return &formEngine{engine.SQLite, sqlCount(db)}
	},
	"postgresql": func(t *testing.T) *formEngine {
		db := testdb.Postgres(t)
		sqlSetup(t, db, `CREATE TABLE events (project_id TEXT, event TEXT, n INTEGER, ts TIMESTAMP, tags INTEGER[], props JSONB)`,
			`INSERT INTO events VALUES ('1', 'a', 7, '2025-05-01 10:07:00', '{7,1}', '{"k": 1}'), ('1', 'b', 13, '2025-05-01 10:13:00', '{13}', '{"k": 2}'),
			('2', 'x', 1, '2025-05-01', '{1}', '{"k": 3}'), ('2', 'y', 2, '2025-05-01', '{2}', '{"k": 4}'), ('2', 'z', 3, '2025-05-01', '{3}', '{"k": 5}')`)
		return &formEngine{engine.PostgreSQL, sqlCount(db)}
	},
	"mysql": func(t *testing.T) *formEngine {
		db := testdb.MySQL(t)
		sqlSetup(t, db, `CREATE TABLE events (project_id VARCHAR(10), event VARCHAR(10), n INTEGER, ts DATETIME)`,
			`INSERT INTO events VALUES ('1', 'a', 7, '2025-05-01 10:07:00'), ('1', 'b', 13, '2025-05-01 10:13:00'),
			('2', 'x', 1, '2025-05-01'), ('2', 'y', 2, '2025-05-01'), ('2', 'z', 3, '2025-05-01')`)
		return &formEngine{engine.MySQL, sqlCount(db)}
	},
}

func sqlSetup(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(t, err, "%s", s)
	}
}

func sqlCount(db *sql.DB) func(string, []any) (int, error) {
	return func(q string, args []any) (int, error) {
		rows, err := db.QueryContext(context.Background(), q, args...)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			n++
		}
		return n, rows.Err()
	}
}

// TestFormsRunOnTheirEngines scopes each form for each engine that runs it
// and runs the result there, for tenant "1": it must be accepted, run, and
// answer the tenant's rows only. On the engines that do not run a form,
// whatever the analyzer answers, the engine refuses the scoped statement
// or it reads no other tenant's rows (the count is the same).
func TestFormsRunOnTheirEngines(t *testing.T) {
	rules := &Rules{Tables: []Table{{Name: "events", TenantColumn: "project_id"}}}
	for name, open := range formEngines {
		t.Run(name, func(t *testing.T) {
			x := open(t)
			for _, f := range forms {
				runs := false
				for _, e := range f.engines {
					runs = runs || e == name
				}
				scoped, err := ConfineFor(x.e.Lexical(), f.query, rules, tenantVar)
				if err != nil {
					assert.False(t, runs, "%s: ConfineFor(%s, %q) = %v", f.name, name, f.query, err)
					continue
				}
				tmpl, err := placeholder.CompileFor(x.e.Lexical(), scoped)
				require.NoError(t, err, "%s", f.name)
				q, args, err := tmpl.Render(x.e, map[string]any{tenantVar: "1"})
				require.NoError(t, err, "%s", f.name)
				n, err := x.count(q, args)
				switch {
				case err != nil && runs:
					t.Errorf("%s: %s does not run %q: %v", f.name, name, q, err)
				case err == nil && n != f.rows:
					t.Errorf("%s: %s answers %d rows for %q, want %d (tenant 1's)", f.name, name, n, q, f.rows)
				case err == nil && !runs:
					t.Errorf("%s: %s runs %q: list it among the form's engines", f.name, name, q)
				}
			}
		})
	}
}
