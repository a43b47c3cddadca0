package endpoint_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// TestMaterializationBoundsOnEngines: on SQLite, PostgreSQL and MariaDB
// (when their variables are set: scripts/engines env), a refresh builds
// and swaps its table, the row limit's count runs and refuses a table too
// large while the last good one serves, and RemoveOrphans lists the
// engine's tables (engine.Tables) and drops only the orphans.
func TestMaterializationBoundsOnEngines(t *testing.T) {
	for _, e := range hitsEngines() {
		t.Run(e.name, func(t *testing.T) {
			x := hitsExecutor(t, e, "('a', 1), ('a', 2), ('b', 3), ('c', 4), ('c', 5), ('d', 6)")
			ctx := context.Background()
			eps, vars := memstore.New(), variable.NewMemoryStore()
			svc, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Executor: x})
			require.NoError(t, err)
			v, err := svc.CreateVariable(ctx, "1", variable.Variable{Name: "Page", Type: variable.String})
			require.NoError(t, err)
			ep, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "pages", IsMaterialized: true, Query: &endpoint.Query{
				Kind: endpoint.KindSQL, SQL: "SELECT page, sum(n) AS total FROM hits WHERE page = {variables.page} GROUP BY page",
				Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "page"}},
			}})
			require.NoError(t, err)
			require.NoError(t, svc.Materialize(ctx, "1", "pages"))
			run := func(s *endpoint.Service) *endpoint.RunResult {
				t.Helper()
				res, err := s.Run(ctx, "1", "pages", endpoint.RunRequest{Variables: map[string]any{"page": "c"}})
				require.NoError(t, err)
				return res
			}
			res := run(svc)
			require.True(t, res.EndpointMaterialized, "after the refresh: %+v", res)
			require.Len(t, res.Results.([][]any), 1, "after the refresh: %+v", res)

			// Four pages are stored: a limit of three refuses the table.
			small, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Executor: x, MaxMaterializedRows: 3})
			require.NoError(t, err)
			err = small.Materialize(ctx, "1", "pages")
			wantLimit(t, err, endpoint.LimitMaxMaterializedRows, 3)
			require.True(t, run(svc).EndpointMaterialized, "the last good table stopped serving")
			enough, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Executor: x, MaxMaterializedRows: 4})
			require.NoError(t, err)
			require.NoError(t, enough.Materialize(ctx, "1", "pages"), "four rows within a limit of four")

			live := materialize.TableName(ep.ID, 1)
			orphan := materialize.TableName("0f0e0d0c-0000-4000-8000-000000000000", 2)
			require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(e.eng.CreateTable(orphan, []engine.Column{{Name: "x", Kind: engine.Int}}), nil)}, driver.Write{Tx: false}))
			stored := func() []string {
				res, err := x.Query(ctx, stmt.New(e.eng.Tables(), nil), driver.Bounds{})
				require.NoError(t, err)
				var out []string
				for _, r := range res.Rows {
					if s, _ := r[0].(string); strings.HasPrefix(s, "endpointkit_") {
						out = append(out, s)
					}
				}
				slices.Sort(out)
				return out
			}
			want := []string{live, orphan}
			slices.Sort(want)
			got := stored()
			require.True(t, slices.Equal(got, want), "tables before: %v", got)
			n, err := svc.RemoveOrphans(ctx)
			require.NoError(t, err, "RemoveOrphans = %d, %v", n, err)
			require.Equal(t, 1, n, "RemoveOrphans = %d, %v", n, err)
			if got := stored(); !slices.Equal(got, []string{live}) {
				t.Fatalf("tables after: %v", got)
			}
			require.NoError(t, svc.Delete(ctx, "1", "pages"))
			require.Empty(t, stored(), "tables after delete")
		})
	}
}

// hitsEngine is an engine the materialization tests run on: its name, the
// variable that gives its database (none for SQLite) and how to open it.
type hitsEngine struct {
	name, env string
	eng       engine.Engine
	open      func(testing.TB) *sql.DB
}

// hitsEngines are SQLite (a file of the test's) and, when their variables
// are set (scripts/engines env), PostgreSQL and MariaDB.
func hitsEngines() []hitsEngine {
	return []hitsEngine{
		{"sqlite", "", engine.SQLite, func(t testing.TB) *sql.DB {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db")+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })
			return db
		}},
		{"postgres", testdb.PostgresEnv, engine.PostgreSQL, testdb.Postgres},
		{"mysql", testdb.MySQLEnv, engine.MySQL, testdb.MySQL},
	}
}

// hitsExecutor opens e's database (skipping the test when its variable is
// unset), creates the table hits (page, n) holding rows, a VALUES list,
// and returns an executor on it.
func hitsExecutor(t *testing.T, e hitsEngine, rows string) *sqlexec.Executor {
	t.Helper()
	if e.env != "" {
		testdb.Require(t, e.env)
	}
	db := e.open(t)
	for _, q := range []string{"CREATE TABLE hits (page VARCHAR(20), n INTEGER)", "INSERT INTO hits VALUES " + rows} {
		_, err := db.ExecContext(context.Background(), q)
		require.NoError(t, err, "%s", q)
	}
	x := sqlexec.New(db, e.eng)
	t.Cleanup(func() { x.Close() })
	return x
}
