package endpoint_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// eventsOnly is the example server's policy: events, scoped by project_id.
func eventsOnly(t *testing.T) access.Policy {
	t.Helper()
	p, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
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
		if err := err; !errors.As(err, &e) {
			t.Fatalf("%v: error %v is not a %T", tc.sql, err, &e)
		}
		if got, want := e.Status, 400; got != want {
			t.Errorf("%v: e.Status = %v, want %v", tc.sql, got, want)
		}
		if got, want := e.Code, endpoint.CodeQueryNotAllowed; got != want {
			t.Errorf("%v: e.Code = %q, want %q", tc.sql, got, want)
		}
		if got, want := e.Table, tc.table; got != want {
			t.Errorf("%v: e.Table = %q, want %q", tc.sql, got, want)
		}
		if s, sub := e.Detail, tc.table; !strings.Contains(s, sub) {
			t.Errorf("the detail names the table: %q does not contain %q", s, sub)
		}
	}
	_, err := env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "ok", Query: sqlQuery("SELECT count(*) FROM events")})
	if err != nil {
		t.Fatalf("other tables stay readable without a Policy: unexpected error: %v", err)
	}
}

// With a tenant column, every reference to the table is scoped to the
// project the endpoint runs for, however the query is written.
func TestSandboxScopesToTheProject(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithDemoEvents(600), endpointtest.WithConfig(func(c *endpoint.Config) {
		c.Access = eventsOnly(t)
	}))
	ctx := context.Background()
	if err := demo.Insert(ctx, env.DB, engine.SQLite, "2", 250, 2); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	want := map[string]int64{}
	for _, p := range []string{"1", "2"} {
		var n int64
		if err := env.DB.QueryRow("SELECT count(*) FROM events WHERE project_id = ?", p).Scan(&n); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		want[p] = n
	}
	if got, want := want["1"], int64(600); got != want {
		t.Fatalf("want[\"1\"] = %v, want %v", got, want)
	}
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
			if err != nil {
				t.Fatalf("%v: unexpected error: %v", sql, err)
			}
			res, err := env.Service.Run(ctx, p, name, endpoint.RunRequest{})
			if err != nil {
				t.Fatalf("%v: unexpected error: %v", sql, err)
			}
			rows := res.Results.([][]any)
			if got, ok := rows[0][0].(int64); !ok || got != want[p] {
				t.Errorf("project %s: %s: count = %#v, want %d", p, sql, rows[0][0], want[p])
			}
		}
	}
	_, err := env.Service.Create(ctx, "1", endpoint.CreateRequest{Name: "other", Query: sqlQuery("SELECT * FROM orders")})
	var e *endpoint.Error
	if err := err; !errors.As(err, &e) {
		t.Fatalf("error %v is not a %T", err, &e)
	}
	if got, want := e.Table, "orders"; got != want {
		t.Errorf("a table the policy does not list: e.Table = %q, want %q", got, want)
	}
}

func TestSandboxReservedName(t *testing.T) {
	env := endpointtest.New(t)
	_, err := env.Service.Create(context.Background(), env.Project, endpoint.CreateRequest{Name: "r",
		Query: sqlQuery("SELECT * FROM events WHERE project_id = {variables.__endpointkit_tenant}")})
	var e *endpoint.Error
	if err := err; !errors.As(err, &e) {
		t.Fatalf("error %v is not a %T", err, &e)
	}
	if got, want := e.Status, 400; got != want {
		t.Errorf("e.Status = %v, want %v", got, want)
	}
	if s, sub := e.Detail, "reserved"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}

type failingPolicy struct{}

func (failingPolicy) Rules(context.Context, string) (*access.Rules, error) {
	return nil, errors.New("policy store down")
}

func TestSandboxPolicyFailureIsTheHosts(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithConfig(func(c *endpoint.Config) { c.Access = failingPolicy{} }))
	_, err := env.Service.Create(context.Background(), env.Project, endpoint.CreateRequest{Name: "r", Query: sqlQuery("SELECT 1")})
	if got, want := endpoint.StatusOf(err), 502; got != want {
		t.Errorf("endpoint.StatusOf(err) = %v, want %v", got, want)
	}
}

// Insight endpoints read events through the same rules: scoped to their
// project, and refused where the project may not read events.
func TestSandboxScopesInsights(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithDemoEvents(500), endpointtest.WithConfig(func(c *endpoint.Config) {
		c.Access = eventsOnly(t)
	}))
	ctx := context.Background()
	if err := demo.Insert(ctx, env.DB, engine.SQLite, "2", 200, 3); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	trends := endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"kind": "TrendsQuery",
		"series": [{"kind": "EventsNode", "math": "total"}], "interval": "month",
		"dateRange": {"date_from": "2025-01-01", "date_to": "2025-06-30"}}`)}
	for p, want := range map[string]float64{"1": 500, "2": 200} {
		_, err := env.Service.Create(ctx, p, endpoint.CreateRequest{Name: "all", Query: &trends})
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		res, err := env.Service.Run(ctx, p, "all", endpoint.RunRequest{})
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		got := res.Results.(*insight.Result).Series[0].Count
		if got, want := got, want; got != want {
			t.Errorf("project %s counts only its own events: got = %v, want %v", p, got, want)
		}
	}

	none, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "orders"}}}, nil)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	env2 := endpointtest.New(t, endpointtest.WithConfig(func(c *endpoint.Config) { c.Access = none }))
	_, err = env2.Service.Create(ctx, env2.Project, endpoint.CreateRequest{Name: "all", Query: &trends})
	var e *endpoint.Error
	if err := err; !errors.As(err, &e) {
		t.Fatalf("error %v is not a %T", err, &e)
	}
	if got, want := e.Table, "events"; got != want {
		t.Errorf("e.Table = %q, want %q", got, want)
	}
}

// A materialized endpoint stores its project's rows only: its table answers
// as the scoped inline run does.
func TestSandboxScopesMaterialization(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithDemoEvents(800), endpointtest.WithConfig(func(c *endpoint.Config) {
		c.Access = eventsOnly(t)
	}))
	ctx := context.Background()
	if err := demo.Insert(ctx, env.DB, engine.SQLite, "2", 300, 4); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	for _, p := range []string{"1", "2"} {
		v, err := env.Service.CreateVariable(ctx, p, variable.Variable{Name: "Event", Type: variable.String})
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		q := endpoint.Query{Kind: endpoint.KindSQL,
			SQL:       "SELECT event, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY event",
			Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "event"}}}
		_, err = env.Service.Create(ctx, p, endpoint.CreateRequest{Name: "by_event", Query: &q, IsMaterialized: true})
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		var want int64
		if err := env.DB.QueryRow("SELECT count(*) FROM events WHERE project_id = ? AND event = 'purchase'", p).Scan(&want); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		req := endpoint.RunRequest{Variables: map[string]any{"event": "purchase"}}
		inline, err := env.Service.Run(ctx, p, "by_event", req)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if inline.EndpointMaterialized {
			t.Fatalf("inline.EndpointMaterialized is true")
		}
		if err := env.Service.Materialize(ctx, p, "by_event"); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		stored, err := env.Service.Run(ctx, p, "by_event", req)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if !stored.EndpointMaterialized {
			t.Fatalf("project %s reads its table: stored.EndpointMaterialized is false", p)
		}
		if got, ok := inline.Results.([][]any)[0][1].(int64); !ok || got != want {
			t.Errorf("project %s inline: count = %#v, want %d", p, inline.Results.([][]any)[0][1], want)
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
	if err := demo.Insert(ctx, env.DB, engine.SQLite, "2", 800, 4); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	v, err := env.Service.CreateVariable(ctx, "1", variable.Variable{Name: "From", Type: variable.Date})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	refs := map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "from"}}
	for _, tc := range []struct {
		name, tail string
	}{{"edges", ""}, {"tail", "timestamp"}} {
		q := endpoint.Query{Kind: endpoint.KindSQL, Variables: refs,
			SQL: "SELECT project_id, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY project_id"}
		_, err = env.Service.Create(ctx, "1", endpoint.CreateRequest{Name: tc.name, Query: &q, IsMaterialized: true, MaterializationTail: tc.tail})
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if err := env.Service.Materialize(ctx, "1", tc.name); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		for _, from := range []string{"2025-05-01", "2025-04-30T12:00:00Z", "2025-05-15 06:30:00"} {
			var want int64
			if err := env.DB.QueryRow("SELECT count(*) FROM events WHERE project_id = '1' AND timestamp >= ?",
				strings.Replace(strings.TrimSuffix(from, "Z"), "T", " ", 1)).Scan(&want); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			for _, refresh := range []string{"force", "direct"} {
				res, err := env.Service.Run(ctx, "1", tc.name, endpoint.RunRequest{Variables: map[string]any{"from": from}, Refresh: refresh})
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if !res.EndpointMaterialized {
					t.Errorf("%s from %s: reads the stored table: res.EndpointMaterialized is false", tc.name, from)
				}
				if got, want := res.Results, ([][]any{{"1", want}}); !reflect.DeepEqual(got, want) {
					t.Errorf("%s from %s %s: project 1's rows only: res.Results = %+v, want %+v", tc.name, from, refresh, got, want)
				}
			}
		}
	}
}
