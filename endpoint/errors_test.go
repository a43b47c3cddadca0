package endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsListEveryErrorCode: every error code the API can answer, an
// exported constant Code... of a string in the packages that answer
// (endpoint and those under it, internal/apierror), is a row of the table
// of errors of docs/http-api.md. query_not_allowed, fixed_variable,
// token_refused, throttled and overloaded were missing.
func TestDocsListEveryErrorCode(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "http-api.md"))
	require.NoError(t, err)
	errors := string(doc)
	start := strings.Index(errors, "\n## Errors\n")
	require.GreaterOrEqual(t, start, 0, "docs/http-api.md has no Errors section")
	errors = errors[start:]
	if end := strings.Index(errors[1:], "\n## "); end >= 0 {
		errors = errors[:end+1]
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| [0-9/]+ \\| `([a-z_]+)` \\|").FindAllStringSubmatch(errors, -1) {
		listed[m[1]] = true
	}
	codes := declaredCodes(t, ".", filepath.Join("..", "internal", "apierror"))
	require.NotEmpty(t, codes)
	for code, where := range codes {
		assert.True(t, listed[code], "code %q (%s) is not in the table of errors of docs/http-api.md", code, where)
	}
}

// declaredCodes are the exported string constants named Code... of the
// Go files (tests aside) under dirs, by value, with where each is.
func declaredCodes(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
				strings.Contains(path, "testdata") || strings.Contains(path, "storetest") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !strings.HasPrefix(name.Name, "Code") || !name.IsExported() || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						v, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						out[v] = path + ": " + name.Name
					}
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	return out
}

// A mistake in the query's text answers 400 query_error with the engine's
// own message (it was a 502 "query execution failed", the cause only in
// the server's log); the demo's events are scoped by project, and neither
// the scope nor the library's tables show in the message.
func TestQueryErrorsAreTheAuthors(t *testing.T) {
	for _, e := range []struct {
		checkEngine
		read string // the README's property read on the engine, which answers
		// cases whose text the engine refuses (save) are refused at
		// Create; the others (their data is at fault) when they run.
		cases []struct {
			sql, message string
			save         bool
		}
	}{
		{checkEngines[0], "json_extract(properties, '$.country')", []struct {
			sql, message string
			save         bool
		}{
			{"SELECT nope FROM events", "no such column: nope", true},
			{"SELECT count(*) FROM events WHERE json_extract(event, '$.a') = 1", "malformed JSON", false},
			{"SELECT json_extract(properties, 'x') FROM events", "bad JSON path: 'x'", false},
		}},
		{checkEngines[1], "properties::jsonb ->> 'country'", []struct {
			sql, message string
			save         bool
		}{
			// The README's property read, on the demo's TEXT column.
			{"SELECT properties->>'country' AS country, count(*) FROM events GROUP BY 1", "operator does not exist: text ->> unknown", true},
			{"SELECT count(*) / 0 FROM events", "division by zero", false},
			{"SELECT nope FROM events", `column "nope" does not exist`, true},
		}},
		{checkEngines[2], "JSON_VALUE(properties, '$.country')", []struct {
			sql, message string
			save         bool
		}{
			{"SELECT nope FROM events", "Unknown column 'nope'", true},
			{"SELECT (SELECT event FROM events) FROM events", "Subquery returns more than 1 row", false},
		}},
	} {
		t.Run(e.name, func(t *testing.T) {
			// The demo's events, scoped by project; no other table.
			svc, db, x := checkServiceParts(t, e.checkEngine, func(x driver.Executor) driver.Executor { return x },
				func(c *endpoint.Config) { c.Access = eventsOnly(t) })
			ctx := context.Background()
			for i, c := range e.cases {
				name := "q" + string(rune('a'+i))
				_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: c.sql}})
				if !c.save {
					require.NoError(t, err, "Create(%q)", c.sql)
					_, err = svc.Run(ctx, "1", name, endpoint.RunRequest{})
				}
				// The engine's words; the hint after them lists the
				// columns the query can read, the tenant's included.
				endpointtest.RequireQueryError(t, err, c.sql, c.message, "endpointkit", "project_id", "SQLSTATE", "(1)")
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

// goWords match what a detail for a user must not show: a Go package's
// prefix (access: ..., engine.Day), a qualified or pointer type, a value
// Printf could not format, a Go literal of a map, a slice or nil.
var goWords = []*regexp.Regexp{
	regexp.MustCompile(`\b(access|engine|driver|insight|placeholder|variable|materialize|scope|sqlexec|apierror|endpoint|stmt|sqltoken): `),
	regexp.MustCompile(`\b(access|engine|driver|insight|placeholder|variable|materialize|scope|sqlexec|apierror|endpoint|stmt|sqltoken|errors|fmt|json|time|sql)\.[A-Z]`),
	regexp.MustCompile(`\*[a-z]+\.[A-Z]\w*`),
	regexp.MustCompile(`%!|<nil>|map\[|\[\]string|\[\]any|interface \{|struct \{`),
}

// TestDetailsAreInTheUsersWords: the details of a table of bad inputs, SQL
// and insight queries at create and update, the editor's query route and
// runs, show no Go identifier or package name. The analyzer's refusals
// read "Query not allowed: access: ...", and a RetentionQuery's period
// named engine.Day, engine.Week and engine.Month.
func TestDetailsAreInTheUsersWords(t *testing.T) {
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "orders"}}}, nil)
	require.NoError(t, err)
	e := newEnv(t, func(c *endpoint.Config) { c.Access = policy })
	ctx := context.Background()
	e.create(t, "good", e.query("SELECT id FROM orders WHERE country = {variables.country} AND amount > {variables.min_amount}", "country", "min_amount"))
	insight := func(js string) *endpoint.Query {
		var q endpoint.Query
		require.NoError(t, json.Unmarshal([]byte(js), &q))
		return &q
	}
	queries := map[string]*endpoint.Query{
		"analyzer syntax":      e.query("SELECT count(* FROM orders"),
		"analyzer FROM":        e.query("SELECT FROM orders"),
		"unknown column":       e.query("SELECT evnt FROM orders"),
		"refused table":        e.query("SELECT * FROM ordrs"),
		"catalog":              e.query("SELECT * FROM sqlite_master"),
		"function":             e.query("SELECT load_extension('x') FROM orders"),
		"two statements":       e.query("SELECT 1 FROM orders; SELECT 2 FROM orders"),
		"not a select":         e.query("DELETE FROM orders"),
		"syntax at the end":    e.query("SELECT id FROM orders WHERE"),
		"malformed":            e.query("SELECT {variables.} FROM orders"),
		"undefined":            e.query("SELECT {variables.nope} FROM orders"),
		"bind marker":          e.query("SELECT id FROM orders WHERE id = ?"),
		"reserved":             e.query("SELECT {variables.endpoint_tenant} FROM orders"),
		"inert":                e.query("SELECT id FROM orders WHERE country = '{variables.country}'", "country"),
		"no kind":              {SQL: "SELECT 1"},
		"unknown kind":         {Kind: "FunnelsQuery"},
		"retention period day": insight(`{"kind": "RetentionQuery", "retentionFilter": {"period": "day", "targetEntity": {"id": "signup", "type": "events"}, "returningEntity": {"id": "$pageview", "type": "events"}}}`),
		"trends math":          insight(`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview", "math": "median"}]}`),
		"trends interval":      insight(`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "interval": "fortnight"}`),
	}
	details := map[string]string{}
	for name, q := range queries {
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "bad", Query: q})
		details["create "+name] = detailOf(t, err)
		_, err = e.svc.Update(ctx, "1", "good", endpoint.UpdateRequest{Query: q})
		details["update "+name] = detailOf(t, err)
		_, err = e.svc.RunQuery(ctx, "1", endpoint.QueryRequest{Query: q})
		details["query "+name] = detailOf(t, err)
	}
	for name, vars := range map[string]map[string]any{
		"unknown":   {"contry": "US"},
		"missing":   {"country": "US"},
		"bad value": {"country": "US", "min_amount": "12abc"},
		"null":      {"country": nil, "min_amount": 1},
		"list":      {"country": []any{"US"}, "min_amount": 1},
	} {
		_, err := e.svc.Run(ctx, "1", "good", endpoint.RunRequest{Variables: vars})
		details["run "+name] = detailOf(t, err)
	}
	for name, d := range details {
		t.Logf("%s: %s", name, d)
		for _, re := range goWords {
			assert.NotRegexp(t, re, d, name)
		}
	}
	assert.Contains(t, details["create retention period day"], "period must be one of Day, Week, Month")
	assert.Contains(t, details["create analyzer syntax"], "Syntax error at line 1, column 16: unexpected FROM")
	assert.Contains(t, details["create analyzer FROM"], "syntax error at line 1, column 8")
}

// detailOf is the detail of err, an *endpoint.Error.
func detailOf(t *testing.T, err error) string {
	t.Helper()
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	return e.Detail
}
