package endpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withValues returns q with test values set on its variable references,
// by code name, as an editor sends them.
func (e *env) withValues(q *endpoint.Query, values map[string]any) *endpoint.Query {
	for code, val := range values {
		v := e.vars[code]
		ref := q.Variables[v.ID]
		text, err := json.Marshal(val)
		if err != nil {
			panic(err)
		}
		ref.Value = text
		q.Variables[v.ID] = ref
	}
	return q
}

// ordersByCountry lists orders of one country above an amount: country has
// the default "US", min_amount has none.
const ordersByCountry = "SELECT id, amount FROM orders WHERE country = {variables.country} AND amount >= {variables.min_amount} ORDER BY id"

func rowIDs(t *testing.T, res any) []int64 {
	t.Helper()
	rows, ok := res.([][]any)
	require.True(t, ok, "results are %T: ok is false", res)
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r[0].(int64)
	}
	return out
}

// TestQueryTestValuesAndDefaults: a variable given a test value runs with
// it; one given none runs with its default; the answer says which, with
// the placeholders found, the rows, columns and types.
func TestQueryTestValuesAndDefaults(t *testing.T) {
	e := newEnv(t)
	q := e.withValues(e.query(ordersByCountry, "country", "min_amount"), map[string]any{"min_amount": json.Number("10")})
	res, err := e.svc.RunQuery(context.Background(), "1", endpoint.QueryRequest{Query: q})
	require.NoError(t, err)
	got, want := rowIDs(t, res.Results), ([]int64{1, 5})
	assert.Equal(t, want, got, "US orders of at least 10: rowIDs(t, res.Results)")
	assert.Equal(t, endpoint.KindSQL, res.Kind)
	assert.Equal(t, []string{"country", "min_amount"}, res.Placeholders)
	assert.Equal(t, []string{"id", "amount"}, res.Columns)
	assert.Len(t, res.Types, 2)
	assert.False(t, res.HasMore, "res.HasMore is true")
	assert.Equal(t, endpoint.DefaultLimit, res.Limit)
	require.Len(t, res.Variables, 2)
	assert.Equal(t, endpoint.QueryVariable{ID: e.vars["country"].ID, Name: "Country", CodeName: "country", Type: "String", Value: "US", Source: endpoint.SourceDefault}, res.Variables[0])
	assert.Equal(t, endpoint.QueryVariable{ID: e.vars["min_amount"].ID, Name: "Min amount", CodeName: "min_amount", Type: "Number", Value: json.Number("10"), Source: endpoint.SourceTest}, res.Variables[1])

	// A test value wins over the default.
	q = e.withValues(e.query(ordersByCountry, "country", "min_amount"), map[string]any{"country": "DE", "min_amount": 0})
	res, err = e.svc.RunQuery(context.Background(), "1", endpoint.QueryRequest{Query: q})
	require.NoError(t, err)
	assert.Equal(t, []int64{2}, rowIDs(t, res.Results))
	assert.Equal(t, endpoint.SourceTest, res.Variables[0].Source)
}

// TestQueryRefusals: each refusal of an unsaved query, with the words a
// save or a run uses, and an attr that points at the value at fault.
func TestQueryRefusals(t *testing.T) {
	e := newEnv(t)
	minAmount := e.vars["min_amount"].ID
	for _, tc := range []struct {
		name                 string
		req                  endpoint.QueryRequest
		status               int
		code, detail, attr   string
		variable, typ, value string
	}{
		{"no query", endpoint.QueryRequest{}, 400, "invalid_input", "This field is required.", "query", "", "", ""},
		{"undefined placeholders", endpoint.QueryRequest{Query: e.query("SELECT * FROM orders WHERE plan = {variables.tier} AND country = {variables.area} AND amount > {variables.min_amount}", "min_amount")},
			400, "undefined_variable", "Query references undefined variable(s): area, tier", "query", "", "", ""},
		{"no value and no default", endpoint.QueryRequest{Query: e.query(ordersByCountry, "country", "min_amount")},
			400, "required_variable_missing", "Required variable(s) 'min_amount' not provided: give each a test value, or the variable a default value.",
			"query.variables." + minAmount + ".value", "", "", ""},
		{"bad value", endpoint.QueryRequest{Query: e.withValues(e.query(ordersByCountry, "country", "min_amount"), map[string]any{"min_amount": "ten"})},
			400, "invalid_variable_value", `Invalid value for variable 'min_amount': expected Number, got "ten": not a number`,
			"query.variables." + minAmount + ".value", "min_amount", "Number", `"ten"`},
		{"variables by name for SQL", endpoint.QueryRequest{Query: e.query("SELECT 1"), Variables: map[string]any{"x": 1}},
			400, "invalid_input", "A HogQLQuery carries its test values in query.variables.<id>.value; variables by name apply to insight queries only.", "variables", "", "", ""},
		{"limit too large", endpoint.QueryRequest{Query: e.query("SELECT 1"), Limit: ref(endpoint.DefaultMaxLimit + 1)},
			400, "invalid_input", fmt.Sprintf("Limit must be between 0 and %d, got %d.", endpoint.DefaultMaxLimit, endpoint.DefaultMaxLimit+1), "limit", "", "", ""},
		{"unknown variable id", endpoint.QueryRequest{Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1",
			Variables: map[string]endpoint.VariableRef{"0b7c7f38-1f8e-4c59-9e44-0c4d1b1bb001": {}}}},
			400, "variable_not_found", "Variable ID(s) not found: 0b7c7f38-1f8e-4c59-9e44-0c4d1b1bb001. A variable must first be created in data management.", "query.variables", "", "", ""},
		{"two statements", endpoint.QueryRequest{Query: e.query("SELECT 1; DELETE FROM orders")},
			400, "invalid_input", "Invalid query at line 1, column 9: an endpoint runs a single statement; remove the ';' and what follows it.", "query", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.RunQuery(context.Background(), "1", tc.req)
			wantError(t, err, tc.status, tc.code, tc.detail, tc.attr)
			ee := asError(t, err)
			assert.Equal(t, tc.variable, ee.Variable)
			assert.Equal(t, tc.typ, ee.Type)
			assert.Equal(t, tc.value, ee.Value)
		})
	}
	var n int64
	require.NoError(t, e.db.QueryRow("SELECT count(*) FROM orders").Scan(&n))
	assert.Equal(t, int64(6), n, "the second statement never ran: count(*)")
}

// ref returns a pointer to v; direct_run_test's ptr is of int only,
// and this file must not depend on another's helpers.
func ref[T any](v T) *T { return &v }

// TestQueryCoercesAsARun: the rows of an unsaved query with test values
// are the rows of the same query saved and run with those values, for
// values of every type and in every form a run accepts.
func TestQueryCoercesAsARun(t *testing.T) {
	e := newEnv(t)
	const sql = "SELECT id FROM orders WHERE amount >= {variables.min_amount} AND created >= {variables.from} AND created < {variables.to}" +
		" AND paid = {variables.paid} AND plan IN {variables.plans} ORDER BY id"
	codes := []string{"min_amount", "from", "to", "paid", "plans"}
	e.create(t, "saved", e.query(sql, codes...))
	for i, values := range []map[string]any{
		{"min_amount": json.Number("7"), "from": "2025-01-01", "to": "2025-01-06", "paid": true, "plans": []any{"free", "pro", "enterprise"}},
		{"min_amount": "7.5", "from": "2025-01-02 00:00:00", "to": "-1d", "paid": "false", "plans": []any{"pro"}},
		{"min_amount": json.Number("1e1"), "from": "-1y", "to": "mStart", "paid": "TRUE", "plans": []string{"enterprise"}},
	} {
		run, err := e.svc.Run(context.Background(), "1", "saved", endpoint.RunRequest{Variables: values})
		require.NoError(t, err, "case %d", i)
		if i == 0 {
			rows, ok := run.Results.([][]any)
			require.True(t, ok, "the comparison is of rows, not of two empty answers: run.Results = %v, want 3 rows", run.Results)
			require.Len(t, rows, 3, "the comparison is of rows, not of two empty answers: run.Results = %v, want 3 rows", run.Results)
		}
		q, err := e.svc.RunQuery(context.Background(), "1", endpoint.QueryRequest{Query: e.withValues(e.query(sql, codes...), values)})
		require.NoError(t, err, "case %d", i)
		got, want := q.Results, run.Results
		assert.Equal(t, want, got, "case %d: q.Results", i)
		if got, want := q.Columns, run.Columns; !reflect.DeepEqual(got, want) {
			t.Errorf("case %d: q.Columns = %+v, want %+v", i, got, want)
		}
	}
	// The test value of a number keeps every digit, as a run's does.
	q := e.withValues(e.query("SELECT {variables.min_amount} AS n", "min_amount"), map[string]any{"min_amount": json.Number("9007199254740993")})
	res, err := e.svc.RunQuery(context.Background(), "1", endpoint.QueryRequest{Query: q})
	require.NoError(t, err)
	assert.Equal(t, [][]any{{int64(9007199254740993)}}, res.Results)
}

// TestQueryReadsTestValuesFromJSON: the wire form, as the HTTP API decodes
// it, gives a number test value every digit.
func TestQueryReadsTestValuesFromJSON(t *testing.T) {
	e := newEnv(t)
	id := e.vars["min_amount"].ID
	var req endpoint.QueryRequest
	require.NoError(t, json.Unmarshal([]byte(`{"query": {"kind": "HogQLQuery", "query": "SELECT {variables.min_amount} AS n",
			"variables": {"`+id+`": {"variableId": "`+id+`", "code_name": "min_amount", "value": 9007199254740993}}}}`), &req))
	res, err := e.svc.RunQuery(context.Background(), "1", req)
	require.NoError(t, err)
	assert.Equal(t, [][]any{{int64(9007199254740993)}}, res.Results)
}

// TestQueryVerdict: the answer says whether the query could be
// materialized, with every reason, before anything is saved.
func TestQueryVerdict(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		sql     string
		codes   []string
		ok      bool
		reasons []endpoint.VerdictReason
	}{
		{"SELECT country, count(*) AS n FROM orders WHERE created >= {variables.from} AND created < {variables.to} GROUP BY country", []string{"from", "to"}, true, []endpoint.VerdictReason{}},
		{"SELECT id FROM orders WHERE country GLOB {variables.country} AND (amount > {variables.min_amount} OR paid = 1)", []string{"country", "min_amount"}, false, []endpoint.VerdictReason{
			{Code: "unsupported_operator", Variable: "country"}, {Code: "under_or", Variable: "min_amount"},
		}},
	} {
		vals := map[string]any{}
		for _, c := range tc.codes {
			vals[c] = map[string]any{"from": "2025-01-01", "to": "2025-02-01", "country": "US", "min_amount": 1}[c]
		}
		res, err := e.svc.RunQuery(context.Background(), "1", endpoint.QueryRequest{Query: e.withValues(e.query(tc.sql, tc.codes...), vals)})
		require.NoError(t, err, "%v", tc.sql)
		got, want := res.Materialization.CanMaterialize, tc.ok
		assert.Equal(t, want, got, "%v: res.Materialization.CanMaterialize", tc.sql)
		require.Len(t, res.Materialization.Reasons, len(tc.reasons), "%s", tc.sql)
		for i, want := range tc.reasons {
			got := res.Materialization.Reasons[i]
			if got, want := got.Code, want.Code; got != want {
				t.Errorf("%v: got.Code = %q, want %q", tc.sql, got, want)
			}
			if got, want := got.Variable, want.Variable; got != want {
				t.Errorf("%v: got.Variable = %q, want %q", tc.sql, got, want)
			}
			s, sub := got.Message, "variable '"+want.Variable+"'"
			assert.Contains(t, s, sub, "%v", tc.sql)
		}
		if !tc.ok {
			// The first reason is the one an endpoint's verdict shows.
			ep := e.create(t, fmt.Sprintf("v%d", len(tc.codes)), e.query(tc.sql, tc.codes...))
			assert.Equal(t, ep.Materialization.Reason, res.Materialization.Reason)
		}
	}
}

// TestQueryObeysTheSandbox: an unsaved query reads only what its project
// may read, scoped to the project's rows, as a saved one does.
func TestQueryObeysTheSandbox(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithDemoEvents(300), endpointtest.WithConfig(func(c *endpoint.Config) {
		c.Access = eventsOnly(t)
	}))
	ctx := context.Background()
	require.NoError(t, demo.Insert(ctx, env.DB, engine.SQLite, "2", 120, 2))
	for p, want := range map[string]int64{"1": 300, "2": 120} {
		res, err := env.Service.RunQuery(ctx, p, endpoint.QueryRequest{Query: sqlQuery("SELECT count(*) FROM events")})
		require.NoError(t, err)
		got, want := res.Results, ([][]any{{want}})
		assert.Equal(t, want, got, "project %s sees its own rows only: res.Results", p)
		if got, want := res.Placeholders, ([]string{}); !reflect.DeepEqual(got, want) {
			t.Errorf("the tenant placeholder is the library's, not the user's: res.Placeholders = %+v, want %+v", got, want)
		}
	}
	_, err := env.Service.RunQuery(ctx, "1", endpoint.QueryRequest{Query: sqlQuery("SELECT * FROM endpointkit_endpoints")})
	e := asError(t, err)
	assert.Equal(t, endpoint.CodeQueryNotAllowed, e.Code)
	assert.Equal(t, "endpointkit_endpoints", e.Table)
	list, err := env.Service.List(ctx, "1")
	require.NoError(t, err)
	v := list
	assert.True(t, (len(v) == 0), "a query saves nothing: list = %v, want it empty", v)
}

// TestQueryLimits: rows are paged and time is bounded as in a run.
func TestQueryLimits(t *testing.T) {
	e := newEnv(t)
	res, err := e.svc.RunQuery(context.Background(), "1", endpoint.QueryRequest{Query: e.query("SELECT id FROM orders ORDER BY id"), Limit: ref(2), Offset: ref(3)})
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 5}, rowIDs(t, res.Results))
	assert.True(t, res.HasMore, "res.HasMore is false")
	assert.Equal(t, 2, res.Limit)
	assert.Equal(t, 3, res.Offset)

	slow := newEnv(t, func(c *endpoint.Config) {
		c.Executor, c.RunTimeout = heldexec.NewFake(nil, heldexec.WaitForCancel()), 20*time.Millisecond
	})
	_, err = slow.svc.RunQuery(context.Background(), "1", endpoint.QueryRequest{Query: slow.query("SELECT 1")})
	wantError(t, err, http.StatusGatewayTimeout, "timeout", "query timed out: it ran longer than run_timeout (20ms)", "")
}

// TestQueryInsight: a TrendsQuery runs unsaved with its variables by name,
// giving the series a run of the saved endpoint gives, and the verdict.
func TestQueryInsight(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	vars := map[string]any{"$browser": "Chrome", "date_from": "2025-05-10"}
	want, err := e.svc.Run(context.Background(), "1", "trends", endpoint.RunRequest{Variables: vars})
	require.NoError(t, err)
	res, err := e.svc.RunQuery(context.Background(), "1", endpoint.QueryRequest{Query: insightQuery(t, trendsByBrowser), Variables: vars})
	require.NoError(t, err)
	assert.Equal(t, endpoint.KindTrends, res.Kind)
	series := res.Results.(*insight.Result).Series
	require.Len(t, series, 1)
	assert.Equal(t, "Chrome", series[0].Label)
	assert.Equal(t, want.Results, res.Results)
	assert.True(t, res.Materialization.CanMaterialize, "res.Materialization.CanMaterialize is false")
	assert.Equal(t, []endpoint.QueryVariable{
		{CodeName: "$browser", Value: "Chrome", Source: endpoint.SourceTest},
		{CodeName: "date_from", Value: "2025-05-10", Source: endpoint.SourceTest},
		{CodeName: "date_to", Source: endpoint.SourceNone},
	}, res.Variables)

	_, err = e.svc.RunQuery(context.Background(), "1", endpoint.QueryRequest{Query: insightQuery(t, trendsByBrowser), Variables: map[string]any{"$os": "Mac"}})
	wantError(t, err, 400, "unknown_variable", "Unknown variable(s): $os", "variables.$os")
	_, err = e.svc.RunQuery(context.Background(), "1", endpoint.QueryRequest{Query: insightQuery(t, trendsByBrowser), Limit: ref(3)})
	wantError(t, err, 400, "invalid_input", "limit and offset apply to SQL endpoints only; an insight endpoint returns its whole result.", "limit")

	res, err = e.svc.RunQuery(context.Background(), "1", endpoint.QueryRequest{Query: insightQuery(t, retentionByBrowser)})
	require.NoError(t, err)
	assert.Equal(t, endpoint.KindRetention, res.Kind)
	v := res.Results.(*insight.Result).Cohorts
	assert.NotEmpty(t, v, "res.Results.(*insight.Result).Cohorts is empty")
}

// TestRunAdHocVariablesByCodeName: an unsaved query runs with its
// variables by code name, a Date one typed as such, with no variable
// created; its values are bound, never in the SQL.
func TestRunAdHocVariablesByCodeName(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	before, err := e.svc.ListVariables(ctx, "1")
	require.NoError(t, err)
	res, err := e.svc.RunAdHoc(ctx, "1", endpoint.AdHocRequest{
		SQL: "SELECT id, country FROM orders WHERE created >= {variables.since} AND country = {variables.where} ORDER BY id",
		Variables: map[string]endpoint.AdHocVariable{
			"since": {Value: "2025-01-03", Type: variable.Date},
			"where": {Value: "US' OR '1'='1"},
		},
		Debug: true,
	})
	require.NoError(t, err)
	assert.Empty(t, res.Results, "the quote is a value, not SQL")
	require.NotNil(t, res.Debug)
	assert.NotContains(t, res.Debug.SQL, "OR '1'='1")

	res, err = e.svc.RunAdHoc(ctx, "1", endpoint.AdHocRequest{
		SQL: "SELECT id FROM orders WHERE created >= {variables.since} AND country = {variables.where} AND amount >= {variables.min} ORDER BY id",
		Variables: map[string]endpoint.AdHocVariable{
			"since": {Value: "2025-01-03", Type: variable.Date},
			"where": {Value: "US"},
			"min":   {Value: 8.0},
		},
	})
	require.NoError(t, err)
	assert.Equal(t, [][]any{{int64(5)}}, res.Results)
	var types []variable.Type
	for _, v := range res.Variables {
		assert.Empty(t, v.ID, "a variable of the run only has no id")
		types = append(types, v.Type)
	}
	assert.ElementsMatch(t, []variable.Type{variable.Date, variable.String, variable.Number}, types)

	after, err := e.svc.ListVariables(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, before, after, "no variable was created")

	// A project variable of the code name is used when no other type is
	// asked for: its default fills a placeholder given no value.
	res, err = e.svc.RunAdHoc(ctx, "1", endpoint.AdHocRequest{SQL: "SELECT count(*) AS n FROM orders WHERE country = {variables.country}"})
	require.NoError(t, err)
	assert.Equal(t, [][]any{{int64(3)}}, res.Results)
	require.Len(t, res.Variables, 1)
	assert.Equal(t, e.vars["country"].ID, res.Variables[0].ID)
	assert.Equal(t, endpoint.SourceDefault, res.Variables[0].Source)

	// Refusals name the variable.
	_, err = e.svc.RunAdHoc(ctx, "1", endpoint.AdHocRequest{SQL: "SELECT 1 WHERE 1 = {variables.x}",
		Variables: map[string]endpoint.AdHocVariable{"x": {Value: map[string]any{"a": 1}}}})
	wantError(t, err, 400, endpoint.CodeInvalidInput,
		`Variable 'x' needs a value: a string, number, boolean or list of strings, or {"value": ..., "type": "Date"}.`, "variables.x")
	_, err = e.svc.RunAdHoc(ctx, "1", endpoint.AdHocRequest{SQL: "SELECT 1 WHERE 1 = {variables.x}",
		Variables: map[string]endpoint.AdHocVariable{"x": {Value: "1", Type: "Weekday"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Variable 'x'")
	_, err = e.svc.RunAdHoc(ctx, "1", endpoint.AdHocRequest{SQL: "SELECT 1 WHERE 1 = {variables.nope}"})
	wantError(t, err, 400, endpoint.CodeUndefinedVariable, "Query references undefined variable(s): nope", "query")
}

// Schema lists what the policy lets a project read, with the engine's
// types: every column of a scoped table, only the allowed ones of a table
// with Columns, and a listed table the database lacks with its error.
func TestSchema(t *testing.T) {
	db := sqliteFile(t)
	ctx := context.Background()
	require.NoError(t, demo.Load(ctx, db, 10, 1))
	_, err := db.Exec("CREATE TABLE plans (name TEXT, price REAL, seats INTEGER, secret TEXT)")
	require.NoError(t, err)
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{
		{Name: "events", TenantColumn: "project_id"},
		{Name: "plans", Columns: []string{"name", "price", "seats"}},
		{Name: "missing"},
	}}, map[string]access.Rules{"2": {Tables: []access.Table{{Name: "plans", Columns: []string{"name"}}}}})
	require.NoError(t, err)
	svc := memService(t, sqlexec.New(db, engine.SQLite), func(c *endpoint.Config) { c.Access = policy })

	got, err := svc.Schema(ctx, "1")
	require.NoError(t, err)
	text := func(names ...string) []endpoint.SchemaColumn {
		var out []endpoint.SchemaColumn
		for _, n := range names {
			out = append(out, endpoint.SchemaColumn{Name: n, Type: "TEXT"})
		}
		return out
	}
	if got, want := got, ([]endpoint.SchemaTable{
		{Name: "events", Columns: text("project_id", "uuid", "event", "distinct_id", "timestamp", "properties")},
		{Name: "missing", Columns: []endpoint.SchemaColumn{}, Error: "The database refused the query: no such table: missing"},
		{Name: "plans", Columns: []endpoint.SchemaColumn{{Name: "name", Type: "TEXT"}, {Name: "price", Type: "REAL"}, {Name: "seats", Type: "INTEGER"}}},
	}); !reflect.DeepEqual(got, want) {
		t.Errorf("got = %+v, want %+v", got, want)
	}

	got, err = svc.Schema(ctx, "2")
	require.NoError(t, err)
	if got, want := got, ([]endpoint.SchemaTable{{Name: "plans", Columns: text("name")}}); !reflect.DeepEqual(got, want) {
		t.Errorf("project 2's own rules: got = %+v, want %+v", got, want)
	}

	// Without a policy the Service reads no catalog: nothing is listed.
	open := memService(t, sqlexec.New(db, engine.SQLite), nil)
	got, err = open.Schema(ctx, "1")
	require.NoError(t, err)
	assert.Equal(t, []endpoint.SchemaTable{}, got)
}
