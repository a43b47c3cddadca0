package endpoint_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A mistake in the query's text answers 400 query_error with the engine's
// own message (it was a 502 "query execution failed", the cause only in
// the server's log); the demo's events are scoped by project, and neither
// the scope nor the library's tables show in the message.
func TestQueryErrorsAreTheAuthors(t *testing.T) {
	for _, e := range []struct {
		name string
		env  string
		eng  engine.Engine
		open func(testing.TB) *sql.DB
		read string // the README's property read on the engine, which answers
		// cases whose text the engine refuses (save) are refused at
		// Create; the others (their data is at fault) when they run.
		cases []struct {
			sql, message string
			save         bool
		}
	}{
		{"sqlite", "", engine.SQLite, func(t testing.TB) *sql.DB {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "q.db"))
			require.NoError(t, err)
			t.Cleanup(func() { db.Close() })
			return db
		}, "json_extract(properties, '$.country')", []struct {
			sql, message string
			save         bool
		}{
			{"SELECT nope FROM events", "no such column: nope", true},
			{"SELECT count(*) FROM events WHERE json_extract(event, '$.a') = 1", "malformed JSON", false},
			{"SELECT json_extract(properties, 'x') FROM events", "bad JSON path: 'x'", false},
		}},
		{"postgres", testdb.PostgresEnv, engine.PostgreSQL, testdb.Postgres, "properties::jsonb ->> 'country'", []struct {
			sql, message string
			save         bool
		}{
			// The README's property read, on the demo's TEXT column.
			{"SELECT properties->>'country' AS country, count(*) FROM events GROUP BY 1", "operator does not exist: text ->> unknown", true},
			{"SELECT count(*) / 0 FROM events", "division by zero", false},
			{"SELECT nope FROM events", `column "nope" does not exist`, true},
		}},
		{"mysql", testdb.MySQLEnv, engine.MySQL, testdb.MySQL, "JSON_VALUE(properties, '$.country')", []struct {
			sql, message string
			save         bool
		}{
			{"SELECT nope FROM events", "Unknown column 'nope'", true},
			{"SELECT (SELECT event FROM events) FROM events", "Subquery returns more than 1 row", false},
		}},
	} {
		t.Run(e.name, func(t *testing.T) {
			if e.env != "" {
				testdb.Require(t, e.env)
			}
			db := e.open(t)
			ctx := context.Background()
			for _, s := range demo.SchemaFor(e.eng) {
				_, err := db.ExecContext(ctx, s)
				require.NoError(t, err, "%s", s)
			}
			require.NoError(t, demo.Insert(ctx, db, e.eng, "1", 20, 1))
			policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
			require.NoError(t, err)
			x := sqlexec.New(db, e.eng)
			t.Cleanup(func() { x.Close() })
			svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x, Access: policy})
			require.NoError(t, err)
			for i, c := range e.cases {
				name := "q" + string(rune('a'+i))
				_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: c.sql}})
				if !c.save {
					require.NoError(t, err, "Create(%q)", c.sql)
					_, err = svc.Run(ctx, "1", name, endpoint.RunRequest{})
				}
				var ee *endpoint.Error
				require.ErrorAs(t, err, &ee, "Run(%q)", c.sql)
				if ee.Status != 400 || ee.Code != endpoint.CodeQueryError || !strings.Contains(ee.Detail, c.message) {
					t.Errorf("Run(%q): {%d %s %q}; want {400 query_error ...%q...}", c.sql, ee.Status, ee.Code, ee.Detail, c.message)
				}
				// The engine's words; the hint after them lists the
				// columns the query can read, the tenant's included.
				engineWords, _, _ := strings.Cut(ee.Detail, " There is no column")
				for _, internal := range []string{"endpointkit", "project_id", "SQLSTATE", "(1)"} {
					assert.NotContains(t, engineWords, internal, "Run(%q): detail %q shows", c.sql, ee.Detail)
				}
				var qe *driver.QueryError
				assert.ErrorAs(t, err, &qe, "Run(%q): the cause is not a *driver.QueryError", c.sql)
			}
			// The README's working property read answers.
			if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "country", Query: &endpoint.Query{Kind: endpoint.KindSQL,
				SQL: "SELECT " + e.read + " AS country, count(*) AS n FROM events GROUP BY 1 ORDER BY 1"}}); err != nil {
				t.Fatalf("Create(%s): %v", e.read, err)
			}
			res, err := svc.Run(ctx, "1", "country", endpoint.RunRequest{})
			require.NoError(t, err, "Run(%s)", e.read)
			rows := res.Results.([][]any)
			if assert.NotEmpty(t, rows, "%s: %v; want counts per country", e.read, rows) {
				assert.True(t, slices.Contains(demo.Countries, fmt.Sprint(rows[0][0])), "%s: %v; want counts per country", e.read, rows)
			}
			// A failure of the database itself stays a 502 without its words.
			x.Close()
			db.Close()
			_, err = svc.Run(ctx, "1", "country", endpoint.RunRequest{Refresh: "force"})
			var ee *endpoint.Error
			if !errors.As(err, &ee) || ee.Status != 502 || ee.Code != endpoint.CodeExecutionFailed || ee.Detail != "query execution failed" {
				t.Errorf("Run on a closed pool: %v; want 502 execution_failed", err)
			}
			// A save that cannot check its query is no error of its
			// author's: a 502 that says so, and nothing is saved.
			_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "later", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT event FROM events"}})
			if !errors.As(err, &ee) || ee.Status != 502 || ee.Code != endpoint.CodeExecutionFailed || !strings.Contains(ee.Detail, "could not be reached to check the query; nothing was saved") {
				t.Errorf("Create on a closed pool: %v; want 502 execution_failed", err)
			}
			if _, err := svc.Get(ctx, "1", "later"); !errors.Is(err, endpoint.ErrNotFound) {
				t.Errorf("Get after a Create that could not check its query: %v; want not found", err)
			}
		})
	}
}
