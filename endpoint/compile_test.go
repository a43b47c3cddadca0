package endpoint_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkEngine is an engine the save's check is tested on: how to open a
// database of it, and the variable that names its server ("" for SQLite).
type checkEngine struct {
	name string
	env  string
	eng  engine.Engine
	open func(testing.TB) *sql.DB
}

var checkEngines = []checkEngine{
	{"sqlite", "", engine.SQLite, sqliteFile},
	{"postgres", testdb.PostgresEnv, engine.PostgreSQL, testdb.Postgres},
	{"mariadb", testdb.MySQLEnv, engine.MySQL, testdb.MySQL},
}

// checkService is a Service on e's demo events table, whose policy lists
// events (scoped by project_id) and lets queries name any other table.
func checkService(t testing.TB, e checkEngine, opts ...func(*endpoint.Config)) *endpoint.Service {
	t.Helper()
	return checkServiceOn(t, e, func(x driver.Executor) driver.Executor { return x }, opts...)
}

// checkServiceOn is checkService whose executor is wrap's of e's.
func checkServiceOn(t testing.TB, e checkEngine, wrap func(driver.Executor) driver.Executor, opts ...func(*endpoint.Config)) *endpoint.Service {
	t.Helper()
	svc, _, _ := checkServiceParts(t, e, wrap, opts...)
	return svc
}

// checkServiceParts is checkServiceOn that also returns the database and
// the executor (before wrap) the Service runs on.
func checkServiceParts(t testing.TB, e checkEngine, wrap func(driver.Executor) driver.Executor, opts ...func(*endpoint.Config)) (*endpoint.Service, *sql.DB, *sqlexec.Executor) {
	t.Helper()
	if e.env != "" {
		testdb.Require(t, e.env)
	}
	db := e.open(t)
	ctx := context.Background()
	for _, s := range demo.SchemaFor(e.eng) {
		_, err := db.ExecContext(ctx, s)
		require.NoError(t, err, s)
	}
	require.NoError(t, demo.Insert(ctx, db, e.eng, "1", 20, 1))
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}, AnyTable: true}, nil)
	require.NoError(t, err)
	x := sqlexec.New(db, e.eng)
	t.Cleanup(func() { x.Close() })
	cfg := memConfig(wrap(x))
	cfg.Access = policy
	for _, o := range opts {
		o(&cfg)
	}
	svc, err := endpoint.New(cfg)
	require.NoError(t, err)
	return svc, db, x
}

// badQueries are queries the engines refuse for their text, with what
// every engine's answer says: the words and the place.
var badQueries = []endpointtest.BadQuery{
	{Name: "unknown column", SQL: "SELECT evnt FROM events", Want: []string{"evnt", "(line 1, column 8)", "did you mean event?"}, Line: 1, Column: 8},
	{Name: "unknown column in GROUP BY", SQL: "SELECT count(*) AS n\nFROM events\nGROUP BY evnt", Want: []string{"evnt", "(line 3, column 10)", "did you mean event?"}, Line: 3, Column: 10},
	{Name: "unknown table", SQL: "SELECT event FROM evnts", Want: []string{"evnts", "(line 1, column 19)", "There is no table evnts; did you mean events?"}, Line: 1, Column: 19},
	{Name: "syntax error at the end", SQL: "SELECT event FROM events WHERE", Want: []string{"yntax error", "line 1, column 31", "found the end of the query"}, Line: 1, Column: 31},
}

// TestQueryCheckedAtSave: on every engine, a query that reads an unknown
// column or table, or does not parse, is refused at Create, at Update and
// by the editor's query route, a 400 query_error that says what and where
// (the nearest names for a name), attr query.query; nothing is saved, and
// an update refused leaves the last version running. They were saved
// (201) and failed only when run.
func TestQueryCheckedAtSave(t *testing.T) {
	for _, e := range checkEngines {
		t.Run(e.name, func(t *testing.T) {
			endpointtest.RefusedAtSave(t, checkService(t, e), "1", badQueries)
		})
	}
}

// TestRefusedTableListsTheReadable: a table the policy does not let the
// project read is refused naming it, where it is, that it does not exist
// or cannot be read, and the tables that can be; the nearest one when a
// name is near. It said that endpoints "may not read" it, behind a Go
// package's prefix.
func TestRefusedTableListsTheReadable(t *testing.T) {
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "orders"}, {Name: "customers"}}}, nil)
	require.NoError(t, err)
	e := newEnv(t, func(c *endpoint.Config) { c.Access = policy })
	ctx := context.Background()
	for _, c := range []struct{ sql, detail string }{
		{"SELECT * FROM ordrs", "Table 'ordrs' at line 1, column 15 does not exist or cannot be read by this project's endpoints. Did you mean orders?"},
		{"SELECT *\nFROM secrets", "Table 'secrets' at line 2, column 6 does not exist or cannot be read by this project's endpoints. Tables that can be read: customers, orders."},
	} {
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "t", Query: e.query(c.sql)})
		var ee *endpoint.Error
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, endpoint.CodeQueryNotAllowed, ee.Code)
		assert.Equal(t, c.detail, ee.Detail)
		assert.Equal(t, "query.query", ee.Attr)
	}
}

// TestAnalyzerSyntaxError: a query the analyzer cannot read says syntax
// error and where, in the user's words. It answered "Query not allowed:
// access: unexpected FROM: the analyzer does not know this syntax (line
// 1, column 16)".
func TestAnalyzerSyntaxError(t *testing.T) {
	e := newEnv(t)
	_, err := e.svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "t", Query: e.query("SELECT count(* FROM orders")})
	var ee *endpoint.Error
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, endpoint.CodeQueryError, ee.Code)
	assert.Equal(t, "query.query", ee.Attr)
	assert.Contains(t, ee.Detail, "Syntax error at line 1, column 16: unexpected FROM")
	assert.Equal(t, [2]int{1, 16}, [2]int{ee.Line, ee.Column})
}

// TestValueFaultsAreNotRefusedAtSave: a query the engine fails on a value
// it folded at the check (PostgreSQL divides the constant 1 by 0 while it
// plans) is saved, as before the check; its runs answer the fault. A
// variable's value at the check divides by nothing: a Number is bound to
// 1, not 0. The save is not silent: its answer carries a warning that
// names the fault, and the Observer is told (logged and counted), on a
// create and on an update alike.
func TestValueFaultsAreNotRefusedAtSave(t *testing.T) {
	obs := &recorder{}
	svc := checkServiceOn(t, checkEngines[1], func(x driver.Executor) driver.Executor { return x },
		func(c *endpoint.Config) { c.Observer = obs })
	ctx := context.Background()
	created, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "zero", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1/0 AS x FROM events"}})
	require.NoError(t, err)
	assert.Contains(t, created.CheckWarning, "division by zero")
	assert.Contains(t, created.CheckWarning, "it was saved")
	_, err = svc.Run(ctx, "1", "zero", endpoint.RunRequest{})
	var ee *endpoint.Error
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, endpoint.CodeQueryError, ee.Code)
	assert.Contains(t, ee.Detail, "division by zero")

	updated, err := svc.Update(ctx, "1", "zero", endpoint.UpdateRequest{Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 2/0 AS x FROM events"}})
	require.NoError(t, err)
	assert.Contains(t, updated.CheckWarning, "division by zero")
	checked, err := svc.Update(ctx, "1", "zero", endpoint.UpdateRequest{Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 2 AS x FROM events"}})
	require.NoError(t, err)
	assert.Empty(t, checked.CheckWarning, "a query the engine checked carries no warning")

	events := obs.saveCheckEvents()
	require.Len(t, events, 2, "one event per unchecked save")
	for _, ev := range events {
		assert.Equal(t, "1", ev.Project)
		assert.Equal(t, "zero", ev.Endpoint)
		assert.ErrorContains(t, ev.Err, "division by zero")
	}
}

// answersAtOnce wraps x in an executor that answers every query with no
// column at once, without the engine: a save over it does all a save does
// but the engine's work of the check.
func answersAtOnce(x driver.Executor) driver.Executor {
	return heldexec.NewFake(x, heldexec.Answer(&driver.Result{}), heldexec.Unrecorded())
}

// checkedSQL is a query of the size an editor saves: a filter, a group, a
// variable.
const checkedSQL = "SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users FROM events " +
	"WHERE timestamp >= '2025-01-01' AND event <> 'x' GROUP BY event ORDER BY n DESC"

// BenchmarkSave: Create of a SQL endpoint on each engine, with the check
// (the engine describes the scoped query with LIMIT 0) and without it (an
// executor that answers at once): the difference is what the check adds
// to a save. ClickHouse's is in package endpoint/chdb.
//
//	eval "$(scripts/engines env)"; go test ./endpoint -run '^$' -bench BenchmarkSave -benchtime 2s
func BenchmarkSave(b *testing.B) {
	for _, e := range checkEngines {
		for _, mode := range []struct {
			name string
			wrap func(driver.Executor) driver.Executor
		}{
			{"check", func(x driver.Executor) driver.Executor { return x }},
			{"nocheck", answersAtOnce},
		} {
			b.Run(e.name+"/"+mode.name, func(b *testing.B) {
				svc := checkServiceOn(b, e, mode.wrap)
				ctx := context.Background()
				q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: checkedSQL}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "e" + strconv.Itoa(i), Query: q})
					require.NoError(b, err)
				}
			})
		}
	}
}

// A placeholder inside quotes or a comment is text to the engine: it
// used to save (without even its variable defined), and the run compared
// with the literal text '{variables.country}'. It is refused at save,
// naming where it is and what works instead.
func TestCreateRefusesPlaceholderInLiteral(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, tc := range []struct {
		q      *endpoint.Query
		detail string
	}{
		{e.query("SELECT id FROM orders WHERE country = '{variables.country}'", "country"),
			"Placeholder {variables.country} at line 1, column 40 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: {variables.country}"},
		{e.query("SELECT id FROM orders WHERE plan LIKE '%{variables.country}%'"),
			"Placeholder {variables.country} at line 1, column 41 is inside a string literal, where the database reads it as text and binds no value; build the text with the placeholder outside the quotes: '%' || {variables.country} || '%'"},
		{e.query("SELECT id FROM orders WHERE country = {variables.country} -- and {variables.plan}", "country"),
			"Placeholder {variables.plan} at line 1, column 66 is inside a comment, where the database reads it as text and binds no value; write it outside the comment"},
	} {
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "quoted", Query: tc.q})
		wantError(t, err, 400, endpoint.CodeInvalidInput, tc.detail, "query")
	}
	// The working form saves and binds the value.
	ep := e.create(t, "like", e.query("SELECT id FROM orders WHERE plan LIKE '%' || {variables.country} || '%' ORDER BY id", "country"))
	res, err := e.svc.Run(ctx, "1", ep.Name, endpoint.RunRequest{Variables: map[string]any{"country": "ro"}})
	require.NoError(t, err)
	assert.Len(t, res.Results.([][]any), 2, "LIKE '%' || 'ro' || '%' gives")
}

// insightEvents is how many demo events the insight tests load.
const insightEvents = 5000

// trendsByBrowser is a daily trend of pageviews over May 2025 broken down
// by browser; the tests' clock is 2025-06-01.
const trendsByBrowser = `{"kind": "TrendsQuery",
	"series": [{"kind": "EventsNode", "event": "$pageview", "math": "total"}],
	"interval": "day",
	"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-31"},
	"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`

// newInsightEnv is newEnv with the demo events table.
func newInsightEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	require.NoError(t, demo.Load(context.Background(), e.db, insightEvents, 11))
	return e
}

// insightQuery reads an insight query as the HTTP API does.
func insightQuery(t *testing.T, js string) *endpoint.Query {
	t.Helper()
	var q endpoint.Query
	require.NoError(t, json.Unmarshal([]byte(js), &q), "Unmarshal(%s)", js)
	return &q
}

// runInsight runs the insight endpoint name and returns its result.
func (e *env) runInsight(t *testing.T, name string, vars map[string]any) *insight.Result {
	t.Helper()
	res, err := e.svc.Run(context.Background(), "1", name, endpoint.RunRequest{Variables: vars})
	require.NoError(t, err, "Run(%s, %v)", name, vars)
	r, ok := res.Results.(*insight.Result)
	require.True(t, ok, "Run(%s) results are %T, want *insight.Result", name, res.Results)
	if len(res.Columns) != 0 || len(res.Types) != 0 || res.Columns == nil || res.Types == nil || res.HasMore {
		t.Fatalf("insight run: columns %v, types %v, hasMore %v; want empty, empty, false", res.Columns, res.Types, res.HasMore)
	}
	return r
}

// TestInsightCreateKeepsQuery: the saved query reads back exactly as sent
// (compacted), from Create, Get and the version history.
func TestInsightCreateKeepsQuery(t *testing.T) {
	e := newEnv(t)
	ep := e.create(t, "trends", insightQuery(t, trendsByBrowser))
	var want bytes.Buffer
	require.NoError(t, json.Compact(&want, []byte(trendsByBrowser)))
	got, err := e.svc.Get(context.Background(), "1", "trends")
	require.NoError(t, err)
	versions, err := e.svc.Versions(context.Background(), "1", "trends")
	require.NoError(t, err)
	for what, q := range map[string]endpoint.Query{"create": endpoint.Query(ep.Query), "get": endpoint.Query(got.Query), "version": endpoint.Query(versions[0].Query)} {
		js, err := json.Marshal(q)
		require.NoError(t, err)
		if !bytes.Equal(js, want.Bytes()) {
			t.Errorf("%s: query JSON %s, want %s", what, js, want.Bytes())
		}
	}
}

// TestInsightDecodeErrors: a query outside the supported subset is refused
// at create, and at update without changing anything, with attr naming the
// field.
func TestInsightDecodeErrors(t *testing.T) {
	tests := []struct {
		name, query, attr, detail string
	}{
		{"math", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview","math":"median"}]}`,
			"query.series[0].math", `Invalid insight query: series[0].math: unsupported math "median" (supported: total, dau, sum, avg, min, max)`},
		{"operator", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"properties":[{"key":"country","value":"US","operator":"regex","type":"event"}]}`,
			"query.properties[0].operator", ""},
		{"interval", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"minute"}`,
			"query.interval", ""},
		{"cohort breakdown", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"breakdownFilter":{"breakdown":"1","breakdown_type":"cohort"}}`,
			"query.breakdownFilter.breakdown_type", ""},
		{"period", `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"signed_up","type":"events"},"returningEntity":{"id":"$pageview","type":"events"},"period":"Year","totalIntervals":4}}`,
			"query.retentionFilter.period", ""},
		{"range", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"dateRange":{"date_from":"2025-05-10","date_to":"2025-05-01"}}`,
			"query.dateRange", ""},
		{"lifecycle math", `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"$pageview","math":"dau"}]}`,
			"query.series[0].math", `Invalid insight query: series[0].math: unsupported math "dau": a lifecycle counts users (supported: total)`},
		{"lifecycle breakdown", `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"breakdownFilter":{"breakdown":"$browser"}}`,
			"query.breakdownFilter", `Invalid insight query: breakdownFilter: breakdowns are not part of a LifecycleQuery`},
		{"lifecycle two series", `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode"},{"kind":"EventsNode"}]}`,
			"query.series", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			q := insightQuery(t, tt.query)
			_, err := e.svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "bad", Query: q})
			checkInsightError(t, err, tt.attr, tt.detail)

			before := e.create(t, "good", insightQuery(t, trendsByBrowser))
			_, err = e.svc.Update(context.Background(), "1", "good", endpoint.UpdateRequest{Query: q})
			checkInsightError(t, err, tt.attr, tt.detail)
			after, _ := e.svc.Get(context.Background(), "1", "good")
			require.Equal(t, before, after, "a refused update changed the endpoint")
		})
	}
}

func checkInsightError(t *testing.T, err error, attr, detail string) {
	t.Helper()
	e := asError(t, err)
	if e.Status != 400 || e.Code != endpoint.CodeInvalidInput || e.Attr != attr {
		t.Fatalf("got {%d %s attr %q} %q, want {400 invalid_input attr %q}", e.Status, e.Code, e.Attr, e.Detail, attr)
	}
	if detail != "" && e.Detail != detail {
		t.Fatalf("detail %q, want %q", e.Detail, detail)
	}
}

// TestInsightKindMismatch: a Go caller's Kind must agree with the JSON.
func TestInsightKindMismatch(t *testing.T) {
	e := newEnv(t)
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, []byte(trendsByBrowser)))
	for _, q := range []endpoint.Query{
		{Kind: endpoint.KindRetention, Insight: buf.Bytes()},
		{Kind: endpoint.KindTrends},
		{Kind: endpoint.KindTrends, Insight: []byte(`{"kind":`)},
	} {
		_, err := e.svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "x", Query: &q})
		e := asError(t, err)
		require.Equal(t, 400, e.Status, "Create(%s %s): %+v, want a 400 invalid_input", q.Kind, q.Insight, e)
		require.Equal(t, endpoint.CodeInvalidInput, e.Code, "Create(%s %s): %+v, want a 400 invalid_input", q.Kind, q.Insight, e)
	}
}

// TestInsightVersion: an older version of an insight query runs as it was.
func TestInsightVersion(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	v1 := e.runInsight(t, "trends", nil)
	purchases := `{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "purchase", "math": "sum", "math_property": "amount"}],
		"interval": "week", "dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-31"}}`
	ep, err := e.svc.Update(context.Background(), "1", "trends", endpoint.UpdateRequest{Query: insightQuery(t, purchases)})
	require.NoError(t, err)
	require.Equal(t, 2, ep.CurrentVersion, "current version")
	v2 := e.runInsight(t, "trends", nil)
	if len(v2.Series) != 1 || v2.Series[0].Label != "purchase" || len(v2.Series[0].Days) != 5 {
		t.Fatalf("version 2 result: %+v", v2.Series)
	}
	one := 1
	res, err := e.svc.Run(context.Background(), "1", "trends", endpoint.RunRequest{Version: &one})
	require.NoError(t, err)
	require.Equal(t, 1, res.EndpointVersion, "version 1 ran as %d: %+v, want %+v", res.EndpointVersion, res.Results, v1)
	require.Equal(t, v1, res.Results, "version 1 ran as %d: %+v, want %+v", res.EndpointVersion, res.Results, v1)
	// A version not in the cache is decoded again from the store.
	e2, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: execOf(e), Now: e.clock.Now})
	require.NoError(t, err)
	res, err = e2.Run(context.Background(), "1", "trends", endpoint.RunRequest{Version: &one})
	require.NoError(t, err)
	require.Equal(t, v1, res.Results, "version 1 from the store")
}

// TestSQLBindMarkerRefused: a hand-written bind marker would run with no
// argument and fail as a 502; it is refused at save with its position.
// Texts that only look like markers are accepted. (SQL endpoints; this file
// sits with the insight work that brought the check.)
func TestSQLBindMarkerRefused(t *testing.T) {
	refused := []struct{ sql, detail string }{
		{"SELECT * FROM orders WHERE country = ?", "Query contains a bind marker '?' at line 1, column 38; use {variables.<code_name>} instead"},
		{"SELECT *\nFROM orders\nWHERE id = ?1", "Query contains a bind marker '?1' at line 3, column 12; use {variables.<code_name>} instead"},
		{"SELECT * FROM orders WHERE id = $1", "Query contains a bind marker '$1' at line 1, column 33; use {variables.<code_name>} instead"},
		{"SELECT * FROM orders WHERE plan = :plan", "Query contains a bind marker ':plan' at line 1, column 35; use {variables.<code_name>} instead"},
		{"SELECT * FROM orders WHERE plan = @plan AND id = ?", "Query contains a bind marker '@plan' at line 1, column 35; use {variables.<code_name>} instead"},
	}
	accepted := []string{
		"SELECT CAST(amount AS TEXT) || '?', \"a?\" FROM (SELECT amount, 1 AS \"a?\" FROM orders) -- is it ?\n",
		"SELECT json_extract('{\"a\": {\"b\": 1}}', '$.a.b') /* :x @y $1 */",
		"SELECT country FROM orders WHERE country = {variables.country}",
	}
	ctx := context.Background()
	for _, tt := range refused {
		e := newEnv(t)
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "m", Query: e.query(tt.sql)})
		wantError(t, err, 400, "invalid_input", tt.detail, "query")
		e.create(t, "ok", e.query("SELECT 1"))
		_, err = e.svc.Update(ctx, "1", "ok", endpoint.UpdateRequest{Query: e.query(tt.sql)})
		wantError(t, err, 400, "invalid_input", tt.detail, "query")
	}
	for _, sql := range accepted {
		e := newEnv(t)
		q := e.query(sql)
		if sql == accepted[2] {
			q = e.query(sql, "country")
		}
		e.create(t, "ok", q)
		vars := map[string]any{}
		if sql == accepted[2] {
			vars["country"] = "US"
		}
		_, err := e.svc.Run(ctx, "1", "ok", endpoint.RunRequest{Variables: vars})
		require.NoError(t, err, "Run(%q)", sql)
	}
}

// pageValues is how many values the "page" property takes in the events
// of loadPages: the 300, far past the default limit of 25.
const pageValues = 300

// pageEvents are the events of loadPages: page i has 1 + 7i mod 13
// $pageview events (so that totals tie often), every third one also a
// purchase by the same user, over ten days of May 2025; 40 more
// pageviews have no page.
func pageEvents() [][]any {
	start := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	var rows [][]any
	add := func(props map[string]any, n, i int) {
		for j := range n {
			for _, ev := range []string{"$pageview", "purchase"} {
				if ev == "purchase" && j%3 != 0 {
					continue
				}
				p, _ := json.Marshal(props)
				ts := start.Add(time.Duration((i*5+j*7)%240) * time.Hour).Format(demo.TimeLayout)
				rows = append(rows, []any{"1", fmt.Sprintf("e%d-%d-%s", i, j, ev), ev, fmt.Sprintf("u%d", (i+j)%17), ts, string(p)})
			}
		}
	}
	for i := range pageValues {
		add(map[string]any{"page": fmt.Sprintf("/p%03d", i), "amount": float64(i%9) * 0.5}, 1+(7*i)%13, i)
	}
	add(map[string]any{"amount": 1}, 40, pageValues)
	return rows
}

// loadPages creates the events table through x and inserts pageEvents,
// every value bound.
func loadPages(t *testing.T, x driver.Executor) {
	t.Helper()
	ctx := context.Background()
	e := x.Engine()
	for _, ddl := range demo.SchemaFor(e) {
		require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(ddl, nil)}, driver.Write{Tx: false}), "%s", ddl)
	}
	rows := pageEvents()
	for len(rows) > 0 {
		n := min(len(rows), 100)
		q := []byte("INSERT INTO events (project_id, uuid, event, distinct_id, timestamp, properties) VALUES ")
		var args []any
		for i, row := range rows[:n] {
			if i > 0 {
				q = append(q, ", "...)
			}
			q = append(q, '(')
			for j, v := range row {
				if j > 0 {
					q = append(q, ", "...)
				}
				arg, typ, err := e.Arg(v)
				require.NoError(t, err)
				args = append(args, arg)
				q = e.Marker(q, len(args), typ)
			}
			q = append(q, ')')
		}
		require.NoError(t, x.Exec(ctx, []driver.Statement{stmt.New(string(q), args)}, driver.Write{Tx: false}), "insert")
		rows = rows[n:]
	}
}

// pagesQuery is a daily trends query of pageviews and of purchasing users
// by page; filter is added to its breakdownFilter.
func pagesQuery(t *testing.T, filter string) *endpoint.Query {
	return insightQuery(t, `{"kind": "TrendsQuery",
		"series": [{"kind": "EventsNode", "event": "$pageview"}, {"kind": "EventsNode", "event": "purchase", "math": "dau"}],
		"interval": "day", "dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-10"},
		"breakdownFilter": {"breakdown": "page", "breakdown_type": "event"`+filter+`}}`)
}

// trendsOf runs an insight endpoint and returns its series.
func trendsOf(t *testing.T, svc *endpoint.Service, name string, vars map[string]any) ([]insight.TrendsSeries, *endpoint.RunResult) {
	t.Helper()
	res, err := svc.Run(context.Background(), "1", name, endpoint.RunRequest{Variables: vars})
	require.NoError(t, err, "Run(%s, %v)", name, vars)
	return res.Results.(*insight.Result).Series, res
}

// foldPages is the breakdown limit written plainly over the series of
// every value: per query series (by the event that prefixes its labels),
// the limit largest Counts, ties by value, then one Other series of the
// rest's sums unless hidden.
func foldPages(all []insight.TrendsSeries, limit int, hide bool) []insight.TrendsSeries {
	out := []insight.TrendsSeries{}
	for _, ev := range []string{"$pageview", "purchase"} {
		var mine []insight.TrendsSeries
		for _, s := range all {
			if strings.HasPrefix(s.Label, ev+" - ") {
				mine = append(mine, s)
			}
		}
		slices.SortStableFunc(mine, func(a, b insight.TrendsSeries) int {
			if a.Count != b.Count {
				if a.Count > b.Count {
					return -1
				}
				return 1
			}
			return strings.Compare(a.BreakdownValue.(string), b.BreakdownValue.(string))
		})
		if len(mine) <= limit {
			out = append(out, mine...)
			continue
		}
		out = append(out, mine[:limit]...)
		if hide {
			continue
		}
		other := insight.TrendsSeries{Label: ev + " - " + insight.OtherLabel, BreakdownValue: insight.OtherBreakdownValue,
			Days: mine[0].Days, Labels: mine[0].Labels, Data: make([]float64, len(mine[0].Data))}
		for _, s := range mine[limit:] {
			for i, v := range s.Data {
				other.Data[i] += v
				other.Count += v
			}
		}
		out = append(out, other)
	}
	return out
}

func requireSameSeries(t *testing.T, what string, want, got []insight.TrendsSeries) {
	t.Helper()
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	require.Equal(t, string(g), string(w), "%s:\ngot  %s\nwant %s", what, g, w)
}

// checkBreakdownLimit runs the breakdown limit's checks on a Service whose
// executor holds pageEvents, and returns the default-limited series for a
// comparison across engines:
//   - 300 values answer 25 per query series and an Other series summing
//     the rest, exactly the fold of the run of every value;
//   - breakdown_hide_other_aggregation drops Other, and a breakdown_limit
//     of its own replaces the default;
//   - a breakdown variable selects a value outside the 25;
//   - a materialized endpoint answers as the inline one, without a
//     variable (limit and Other included) and with one outside the 25.
func checkBreakdownLimit(t *testing.T, svc *endpoint.Service) []insight.TrendsSeries {
	t.Helper()
	ctx := context.Background()
	create := func(name string, q *endpoint.Query, mat bool) {
		t.Helper()
		req := endpoint.CreateRequest{Name: name, Query: q, IsMaterialized: mat}
		if mat {
			req.OptionalBreakdowns = []string{"page"}
		}
		_, err := svc.Create(ctx, "1", req)
		require.NoError(t, err, "Create(%s)", name)
	}
	create("every", pagesQuery(t, `, "breakdown_limit": 1000`), false)
	create("pages", pagesQuery(t, ``), false)
	create("hidden", pagesQuery(t, `, "breakdown_hide_other_aggregation": true`), false)
	create("seven", pagesQuery(t, `, "breakdown_limit": 7`), false)
	create("mat", pagesQuery(t, ``), true)

	all, res := trendsOf(t, svc, "every", nil)
	require.GreaterOrEqual(t, len(all), pageValues, "%d series of every value (hasMore %v), want at least %d", len(all), res.HasMore, pageValues)
	require.False(t, res.HasMore, "%d series of every value (hasMore %v), want at least %d", len(all), res.HasMore, pageValues)
	limited, res := trendsOf(t, svc, "pages", nil)
	require.Len(t, limited, 2*(insight.DefaultBreakdownLimit+1), "%d series (hasMore %v), want 25 and Other for each of the 2 query series", len(limited), res.HasMore)
	require.True(t, res.HasMore, "%d series (hasMore %v), want 25 and Other for each of the 2 query series", len(limited), res.HasMore)
	requireSameSeries(t, "default limit", foldPages(all, insight.DefaultBreakdownLimit, false), limited)
	hidden, res := trendsOf(t, svc, "hidden", nil)
	requireSameSeries(t, "hidden other", foldPages(all, insight.DefaultBreakdownLimit, true), hidden)
	require.True(t, res.HasMore, "hidden Other: hasMore false, want true as PostHog answers")
	seven, _ := trendsOf(t, svc, "seven", nil)
	requireSameSeries(t, "limit 7", foldPages(all, 7, false), seven)

	var outside string
	for _, s := range all {
		v := s.BreakdownValue.(string)
		if !slices.ContainsFunc(limited, func(l insight.TrendsSeries) bool { return l.BreakdownValue == v }) {
			outside = v
		}
	}
	require.NotEqual(t, "", outside, "every value is within the limit")
	one, _ := trendsOf(t, svc, "pages", map[string]any{"page": outside})
	var want []insight.TrendsSeries
	for _, s := range all {
		if s.BreakdownValue == outside {
			want = append(want, s)
		}
	}
	requireSameSeries(t, "a value outside the limit, by its variable", want, one)

	require.NoError(t, svc.Materialize(ctx, "1", "mat"), "Materialize")
	for _, vars := range []map[string]any{nil, {"page": outside}, {"page": ""}, {"page": "/p007"}} {
		got, res := trendsOf(t, svc, "mat", vars)
		require.True(t, res.EndpointMaterialized, "%v: not read from the table", vars)
		inline, inlineRes := trendsOf(t, svc, "pages", vars)
		requireSameSeries(t, fmt.Sprintf("materialized = inline with %v", vars), inline, got)
		require.Equal(t, inlineRes.HasMore, res.HasMore, "%v: hasMore materialized, %v inline", vars, inlineRes.HasMore)
		require.Equal(t, vars == nil, res.HasMore, "%v: hasMore materialized, %v inline", vars, inlineRes.HasMore)
	}
	return limited
}

// TestInsightBreakdownLimit: checkBreakdownLimit on SQLite, then the
// Service's settings: a breakdown_limit above MaxBreakdownLimit (or below
// 1) is a 400 naming breakdown_limit and the maximum, at create and at
// update; DefaultBreakdownLimit replaces 25; New refuses a default above
// the maximum.
func TestInsightBreakdownLimit(t *testing.T) {
	db := testdb.SQLite(t)
	x := sqlexec.New(db, engine.SQLite)
	loadPages(t, x)
	newSvc := func(cfg endpoint.Config) *endpoint.Service {
		t.Helper()
		cfg.Endpoints, cfg.Variables, cfg.Executor = memstore.New(), variable.NewMemoryStore(), x
		svc, err := endpoint.New(cfg)
		require.NoError(t, err)
		return svc
	}
	checkBreakdownLimit(t, newSvc(endpoint.Config{}))

	ctx := context.Background()
	svc := newSvc(endpoint.Config{})
	for _, limit := range []string{"1001", "0", "-1", "2.5"} {
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "too_many", Query: pagesQuery(t, `, "breakdown_limit": `+limit)})
		wantLimit(t, err, endpoint.LimitMaxBreakdownLimit, endpoint.DefaultMaxBreakdownLimit)
		e := asError(t, err)
		if e.Status != 400 || e.Attr != "query.breakdownFilter.breakdown_limit" ||
			!strings.Contains(e.Detail, "breakdown_limit") || !strings.Contains(e.Detail, "1000") {
			t.Fatalf("breakdown_limit %s: %d %s %q", limit, e.Status, e.Attr, e.Detail)
		}
	}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "most", Query: pagesQuery(t, `, "breakdown_limit": 1000`)}); err != nil {
		t.Fatalf("the maximum itself: %v", err)
	}
	q := pagesQuery(t, `, "breakdown_limit": 5000`)
	_, err := svc.Update(ctx, "1", "most", endpoint.UpdateRequest{Query: q})
	wantLimit(t, err, endpoint.LimitMaxBreakdownLimit, endpoint.DefaultMaxBreakdownLimit)
	wantError(t, err, 400, endpoint.CodeInvalidInput,
		"Invalid insight query: breakdownFilter.breakdown_limit: 5000 is more than the maximum; breakdown_limit may be 1 to 1000 (max_breakdown_limit).",
		"query.breakdownFilter.breakdown_limit")

	small := newSvc(endpoint.Config{DefaultBreakdownLimit: 3, MaxBreakdownLimit: 10})
	_, err = small.Create(ctx, "1", endpoint.CreateRequest{Name: "eleven", Query: pagesQuery(t, `, "breakdown_limit": 11`)})
	wantLimit(t, err, endpoint.LimitMaxBreakdownLimit, 10)
	if _, err := small.Create(ctx, "1", endpoint.CreateRequest{Name: "pages", Query: pagesQuery(t, ``)}); err != nil {
		t.Fatal(err)
	}
	got, _ := trendsOf(t, small, "pages", nil)
	if len(got) != 2*(3+1) || got[3].Label != "$pageview - "+insight.OtherLabel {
		t.Fatalf("a default of 3: %d series, the fourth %q", len(got), got[min(3, len(got)-1)].Label)
	}

	above, negative := memConfig(x), memConfig(x)
	above.MaxBreakdownLimit, negative.DefaultBreakdownLimit = 10, -1
	_, err = endpoint.New(above)
	require.ErrorContains(t, err, "DefaultBreakdownLimit 25 exceeds MaxBreakdownLimit 10", "a default above the maximum")
	_, err = endpoint.New(negative)
	require.Error(t, err, "a negative default breakdown limit was accepted")
}

// TestInsightBreakdownLimitOnEngines: checkBreakdownLimit on PostgreSQL and
// MariaDB (when their variables are set: scripts/engines env), each
// answering with the same series as SQLite.
func TestInsightBreakdownLimitOnEngines(t *testing.T) {
	reference := func() []insight.TrendsSeries {
		db := sqliteFile(t)
		x := sqlexec.New(db, engine.SQLite)
		loadPages(t, x)
		svc := memService(t, x, nil)
		if _, err := svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "pages", Query: pagesQuery(t, ``)}); err != nil {
			t.Fatal(err)
		}
		s, _ := trendsOf(t, svc, "pages", nil)
		return s
	}
	for _, e := range checkEngines[1:] { // the servers: SQLite is the reference
		t.Run(e.name, func(t *testing.T) {
			testdb.Require(t, e.env)
			x := sqlexec.New(e.open(t), e.eng)
			t.Cleanup(func() { x.Close() })
			loadPages(t, x)
			svc := memService(t, x, nil)
			got := checkBreakdownLimit(t, svc)
			requireSameSeries(t, e.name+" as SQLite", reference(), got)
		})
	}
}

// eventsOnly is the example server's policy: events, scoped by project_id.
func eventsOnly(t *testing.T) access.Policy {
	t.Helper()
	p, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	require.NoError(t, err)
	return p
}

func sqlQuery(sql string) *endpoint.Query {
	return &endpoint.Query{Kind: endpoint.KindSQL, SQL: sql}
}

// The library's own tables and the catalogs are never readable, even
// without a Policy: these queries returned every project's endpoints.
func TestSandboxRefusesStorageAndCatalogs(t *testing.T) {
	env := endpointtest.New(t)
	ctx := context.Background()
	for _, tc := range []struct{ sql, table string }{
		{"SELECT * FROM endpointkit_endpoints", "endpointkit_endpoints"},
		{"SELECT * FROM endpointkit_variables", "endpointkit_variables"},
		{`SELECT name FROM "ENDPOINTKIT_ENDPOINTS"`, "ENDPOINTKIT_ENDPOINTS"},
		{"SELECT * FROM (SELECT * FROM main.endpointkit_versions) AS v", "main.endpointkit_versions"},
		{"WITH x AS (SELECT sql FROM sqlite_master) SELECT * FROM x", "sqlite_master"},
		{"SELECT 1 UNION SELECT name FROM sqlite_schema", "sqlite_schema"},
	} {
		_, err := env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "leak", Query: sqlQuery(tc.sql)})
		var e *endpoint.Error
		require.ErrorAs(t, err, &e, "%v", tc.sql)
		got, want := e.Status, 400
		assert.Equal(t, want, got, "%v: e.Status", tc.sql)
		if got, want := e.Code, endpoint.CodeQueryNotAllowed; got != want {
			t.Errorf("%v: e.Code = %q, want %q", tc.sql, got, want)
		}
		if got, want := e.Table, tc.table; got != want {
			t.Errorf("%v: e.Table = %q, want %q", tc.sql, got, want)
		}
		assert.Contains(t, e.Detail, tc.table, "the detail names the table")
	}
	_, err := env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "ok", Query: sqlQuery("SELECT count(*) FROM events")})
	require.NoError(t, err, "other tables stay readable without a Policy")
}

// With a tenant column, every reference to the table is scoped to the
// project the endpoint runs for, however the query is written.
func TestSandboxScopesToTheProject(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithDemoEvents(600), endpointtest.WithConfig(func(c *endpoint.Config) {
		c.Access = eventsOnly(t)
	}))
	ctx := context.Background()
	require.NoError(t, demo.Insert(ctx, env.DB, engine.SQLite, "2", 250, 2))
	want := map[string]int64{}
	for _, p := range []string{"1", "2"} {
		var n int64
		require.NoError(t, env.DB.QueryRow("SELECT count(*) FROM events WHERE project_id = ?", p).Scan(&n))
		want[p] = n
	}
	require.Equal(t, int64(600), want["1"])
	for _, sql := range []string{
		"SELECT count(*) FROM events",
		"SELECT count(*) FROM Events AS e WHERE e.uuid IN (SELECT uuid FROM events)",
		"WITH all_events AS (SELECT * FROM events) SELECT count(*) FROM all_events",
		"SELECT count(*) FROM events a JOIN events b ON a.uuid = b.uuid",
		`SELECT count(*) FROM (SELECT uuid FROM "events" UNION ALL SELECT uuid FROM events WHERE 1 = 0) AS u`,
	} {
		for _, p := range []string{"1", "2"} {
			name := "q"
			_ = env.Service.Delete(ctx, p, name)
			_, err := env.Service.Create(ctx, p, endpoint.CreateRequest{Name: name, Query: sqlQuery(sql)})
			require.NoError(t, err, "%v", sql)
			res, err := env.Service.Run(ctx, p, name, endpoint.RunRequest{})
			require.NoError(t, err, "%v", sql)
			rows := res.Results.([][]any)
			got, ok := rows[0][0].(int64)
			if assert.True(t, ok, "project %s: %s: count = %#v, want %d", p, sql, rows[0][0], want[p]) {
				assert.Equal(t, want[p], got, "project %s: %s: count = %#v, want %d", p, sql, rows[0][0], want[p])
			}
		}
	}
	_, err := env.Service.Create(ctx, "1", endpoint.CreateRequest{Name: "other", Query: sqlQuery("SELECT * FROM orders")})
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	if got, want := e.Table, "orders"; got != want {
		t.Errorf("a table the policy does not list: e.Table = %q, want %q", got, want)
	}
}

func TestSandboxReservedName(t *testing.T) {
	env := endpointtest.New(t)
	_, err := env.Service.Create(context.Background(), env.Project, endpoint.CreateRequest{Name: "r",
		Query: sqlQuery("SELECT * FROM events WHERE project_id = {variables.__endpointkit_tenant}")})
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 400, e.Status)
	assert.Contains(t, e.Detail, "reserved")
}

type failingPolicy struct{}

func (failingPolicy) Rules(context.Context, string) (*access.Rules, error) {
	return nil, errors.New("policy store down")
}

func TestSandboxPolicyFailureIsTheHosts(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithConfig(func(c *endpoint.Config) { c.Access = failingPolicy{} }))
	_, err := env.Service.Create(context.Background(), env.Project, endpoint.CreateRequest{Name: "r", Query: sqlQuery("SELECT 1")})
	assert.Equal(t, 502, endpoint.StatusOf(err))
}

// Insight endpoints read events through the same rules: scoped to their
// project, and refused where the project may not read events.
func TestSandboxScopesInsights(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithDemoEvents(500), endpointtest.WithConfig(func(c *endpoint.Config) {
		c.Access = eventsOnly(t)
	}))
	ctx := context.Background()
	require.NoError(t, demo.Insert(ctx, env.DB, engine.SQLite, "2", 200, 3))
	trends := endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"kind": "TrendsQuery",
		"series": [{"kind": "EventsNode", "math": "total"}], "interval": "month",
		"dateRange": {"date_from": "2025-01-01", "date_to": "2025-06-30"}}`)}
	for p, want := range map[string]float64{"1": 500, "2": 200} {
		_, err := env.Service.Create(ctx, p, endpoint.CreateRequest{Name: "all", Query: &trends})
		require.NoError(t, err)
		res, err := env.Service.Run(ctx, p, "all", endpoint.RunRequest{})
		require.NoError(t, err)
		got := res.Results.(*insight.Result).Series[0].Count
		assert.Equal(t, want, got, "project %s counts only its own events", p)
	}

	none, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "orders"}}}, nil)
	require.NoError(t, err)
	env2 := endpointtest.New(t, endpointtest.WithConfig(func(c *endpoint.Config) { c.Access = none }))
	_, err = env2.Service.Create(ctx, env2.Project, endpoint.CreateRequest{Name: "all", Query: &trends})
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "events", e.Table)
}

// A materialized endpoint stores its project's rows only: its table answers
// as the scoped inline run does.
func TestSandboxScopesMaterialization(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithDemoEvents(800), endpointtest.WithConfig(func(c *endpoint.Config) {
		c.Access = eventsOnly(t)
	}))
	ctx := context.Background()
	require.NoError(t, demo.Insert(ctx, env.DB, engine.SQLite, "2", 300, 4))
	for _, p := range []string{"1", "2"} {
		v, err := env.Service.CreateVariable(ctx, p, variable.Variable{Name: "Event", Type: variable.String})
		require.NoError(t, err)
		q := endpoint.Query{Kind: endpoint.KindSQL,
			SQL:       "SELECT event, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY event",
			Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "event"}}}
		_, err = env.Service.Create(ctx, p, endpoint.CreateRequest{Name: "by_event", Query: &q, IsMaterialized: true})
		require.NoError(t, err)
		var want int64
		require.NoError(t, env.DB.QueryRow("SELECT count(*) FROM events WHERE project_id = ? AND event = 'purchase'", p).Scan(&want))
		req := endpoint.RunRequest{Variables: map[string]any{"event": "purchase"}}
		inline, err := env.Service.Run(ctx, p, "by_event", req)
		require.NoError(t, err)
		require.False(t, inline.EndpointMaterialized, "inline.EndpointMaterialized is true")
		require.NoError(t, env.Service.Materialize(ctx, p, "by_event"))
		stored, err := env.Service.Run(ctx, p, "by_event", req)
		require.NoError(t, err)
		require.True(t, stored.EndpointMaterialized, "project %s reads its table: stored.EndpointMaterialized is false", p)
		got, ok := inline.Results.([][]any)[0][1].(int64)
		if assert.True(t, ok, "project %s inline: count = %#v, want %d", p, inline.Results.([][]any)[0][1], want) {
			assert.Equal(t, want, got, "project %s inline: count = %#v, want %d", p, inline.Results.([][]any)[0][1], want)
		}
		if got, ok := stored.Results.([][]any)[0][1].(int64); !ok || got != want {
			t.Errorf("project %s materialized: count = %#v, want %d", p, stored.Results.([][]any)[0][1], want)
		}
	}
}

// A materialized read computes the partial buckets of an unaligned range,
// and a live tail's newer rows, from the source: those branches read the
// project's rows only, as the stored table does. They read every project's
// rows: from = 2025-05-31T12:00:00Z answered [["1",114],["2",111]].
func TestSandboxScopesMaterializedSourceReads(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithDemoEvents(800), endpointtest.WithConfig(func(c *endpoint.Config) {
		c.Access = eventsOnly(t)
	}))
	ctx := context.Background()
	require.NoError(t, demo.Insert(ctx, env.DB, engine.SQLite, "2", 800, 4))
	v, err := env.Service.CreateVariable(ctx, "1", variable.Variable{Name: "From", Type: variable.Date})
	require.NoError(t, err)
	refs := map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "from"}}
	for _, tc := range []struct {
		name, tail string
	}{{"edges", ""}, {"tail", "timestamp"}} {
		q := endpoint.Query{Kind: endpoint.KindSQL, Variables: refs,
			SQL: "SELECT project_id, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY project_id"}
		_, err = env.Service.Create(ctx, "1", endpoint.CreateRequest{Name: tc.name, Query: &q, IsMaterialized: true, MaterializationTail: tc.tail})
		require.NoError(t, err)
		require.NoError(t, env.Service.Materialize(ctx, "1", tc.name))
		for _, from := range []string{"2025-05-01", "2025-04-30T12:00:00Z", "2025-05-15 06:30:00"} {
			var want int64
			require.NoError(t, env.DB.QueryRow("SELECT count(*) FROM events WHERE project_id = '1' AND timestamp >= ?",
				strings.Replace(strings.TrimSuffix(from, "Z"), "T", " ", 1)).Scan(&want))
			for _, refresh := range []string{"force", "direct"} {
				res, err := env.Service.Run(ctx, "1", tc.name, endpoint.RunRequest{Variables: map[string]any{"from": from}, Refresh: refresh})
				require.NoError(t, err)
				assert.True(t, res.EndpointMaterialized, "%s from %s: reads the stored table: res.EndpointMaterialized is false", tc.name, from)
				got, want := res.Results, ([][]any{{"1", want}})
				assert.Equal(t, want, got, "%s from %s %s: project 1's rows only: res.Results", tc.name, from, refresh)
			}
		}
	}
}

// BenchmarkSave2K is Create of the 2 KB query sql/access's BenchmarkSave2K
// and sql/tree's BenchmarkParse2K read, on SQLite, without the engine's
// check (an executor that answers at once): the library's whole share of
// a save (read, check, confine, the paged wrapper, storing). Its
// placeholders are written as literals, so that the benchmark needs no
// variables and runs unchanged on older versions for a before and after:
//
//	go test ./endpoint -run '^$' -bench 'BenchmarkSave2K$' -benchmem -benchtime 2000x -count 3
func BenchmarkSave2K(b *testing.B) {
	data, err := os.ReadFile("../sql/sqltoken/testdata/bench2k.sql")
	require.NoError(b, err)
	src := strings.NewReplacer(
		"{variables.since}", "'2025-01-01'",
		"{variables.plans}", "('pro', 'team')",
		"{variables.min_amount}", "10",
		"{variables.browser}", "'Chrome'",
		"{variables.ignored}", "ignored",
		"{ variables.until }", "'2026-01-01'",
	).Replace(string(data))
	svc := checkServiceOn(b, checkEngines[0], answersAtOnce)
	ctx := context.Background()
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: src}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "e" + strconv.Itoa(i), Query: q})
		require.NoError(b, err)
	}
}

// TestSQLiteBackslashLiteral: SQLite reads no backslash escapes, so
// 'C:\' is a whole literal there. The Service refused it at save ("string
// literal starting with ' is never closed"); it saves and runs, with and
// without an access policy (which scopes the query to the project).
func TestSQLiteBackslashLiteral(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy bool
	}{{"no policy", false}, {"policy", true}} {
		t.Run(tc.name, func(t *testing.T) {
			env := endpointtest.New(t, endpointtest.WithDemoEvents(50), endpointtest.WithConfig(func(c *endpoint.Config) {
				if tc.policy {
					c.Access = eventsOnly(t)
				}
			}))
			ctx := context.Background()
			const sql = `SELECT 'C:\' || 'x' AS p, count(*) AS n FROM events WHERE event <> {variables.not_event}`
			v, err := env.Service.CreateVariable(ctx, env.Project, variable.Variable{Name: "Not event", Type: variable.String})
			require.NoError(t, err)
			q := sqlQuery(sql)
			q.Variables = map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: v.CodeName}}
			_, err = env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "paths", Query: q})
			require.NoError(t, err)
			res, err := env.Service.Run(ctx, env.Project, "paths", endpoint.RunRequest{Variables: map[string]any{"not_event": "nothing"}})
			require.NoError(t, err)
			rows := res.Results.([][]any)
			require.Len(t, rows, 1)
			assert.Equal(t, `C:\x`, rows[0][0])
			got, ok := rows[0][1].(int64)
			if assert.True(t, ok, "rows[0][1] = %#v, want int64 50", rows[0][1]) {
				assert.Equal(t, int64(50), got, "rows[0][1] = %#v, want int64 50", rows[0][1])
			}
		})
	}
}

// TestInsightColumnRefused: rules that list the events' columns without
// one an insight reads refuse the insight at save, naming the column, not
// saying the events table does not exist.
func TestInsightColumnRefused(t *testing.T) {
	db := sqliteFile(t)
	require.NoError(t, demo.Load(context.Background(), db, 10, 1))
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{
		{Name: "events", TenantColumn: "project_id", Columns: []string{"uuid", "event", "distinct_id", "timestamp"}},
	}}, nil)
	require.NoError(t, err)
	svc := memService(t, sqlexec.New(db, engine.SQLite), func(c *endpoint.Config) { c.Access = policy })
	_, err = svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "trends", Query: insightQuery(t, trendsByBrowser)})
	wantError(t, err, 400, endpoint.CodeQueryNotAllowed,
		"Query not allowed: insight queries read the column 'properties' of table 'events', which this project's endpoints cannot read.", "query")
}
