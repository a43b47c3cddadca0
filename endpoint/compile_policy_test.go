package endpoint_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
