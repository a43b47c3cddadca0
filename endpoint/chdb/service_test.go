//go:build chdb

package chdb

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const events = 3000

// loadDemo creates the events table in chDB and loads the demo events of
// project 1, as demo.Load does on SQLite.
func loadDemo(t testing.TB, x *Executor) {
	t.Helper()
	ctx := context.Background()
	for _, stmt := range append([]string{"DROP TABLE IF EXISTS events"}, demo.SchemaFor(engine.ClickHouse)...) {
		require.NoError(t, x.Load(ctx, stmt, nil), "%v", stmt)
	}
	require.NoError(t, demo.InsertWith(ctx, x, engine.ClickHouse, "1", events, endpointtest.DemoSeed))
}

// bothServices returns a Service on chDB and one on SQLite (with its
// test environment), both loaded with the same demo events.
func bothServices(t *testing.T) (*endpoint.Service, *endpointtest.Env) {
	t.Helper()
	x := executor(t)
	loadDemo(t, x)
	ch, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x})
	require.NoError(t, err)
	return ch, endpointtest.New(t, endpointtest.WithDemoEvents(events))
}

// TestServiceOnClickHouse runs the same endpoints on chDB and on SQLite,
// loaded with the same demo events: inline runs answer alike, and a
// materialized run on ClickHouse answers as its inline run.
func TestServiceOnClickHouse(t *testing.T) {
	ch, lite := bothServices(t)
	ctx := context.Background()

	cases := []struct {
		name, sql   string
		materialize bool
		runs        []map[string]any
	}{
		{"by_event", "SELECT event, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY event", true,
			[]map[string]any{{"event": "purchase"}, {"event": "$pageview"}, {"event": "nothing"}}},
		{"daily", "SELECT substr(timestamp, 1, 10) AS day, count(*) AS n FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY day ORDER BY day", false,
			[]map[string]any{{"event": "purchase", "from": "2025-05-01", "to": "2025-05-08"}, {"event": "signed_up", "from": "2025-04-01", "to": "2025-04-03"}}},
		// An average of nothing but NULLs over a range: ClickHouse
		// cannot cast the NULL sum to a Float64 that is not Nullable, and
		// the stored read failed into an inline run.
		{"avg_of_nulls", "SELECT event, avg(CASE WHEN event = 'nothing' THEN 1 END) AS mean, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY event ORDER BY event", true,
			[]map[string]any{{"from": "2025-05-01"}, {"from": "2025-05-01T12:30:00Z"}}},
		{"users", "SELECT distinct_id FROM events WHERE distinct_id = {variables.user} ORDER BY uuid", false,
			[]map[string]any{{"user": "user-00007"}, {"user": "it's \\ nobody"}}},
	}
	types := map[string]variable.Type{"event": variable.String, "user": variable.String, "from": variable.Date, "to": variable.Date}
	for _, svc := range []*endpoint.Service{ch, lite.Service} {
		ids := map[string]string{}
		for name, typ := range types {
			v, err := svc.CreateVariable(ctx, "1", variable.Variable{Name: name, CodeName: name, Type: typ})
			require.NoError(t, err)
			ids[name] = v.ID
		}
		for _, c := range cases {
			refs := map[string]driver.VariableRef{}
			for name, id := range ids {
				if strings.Contains(c.sql, "{variables."+name+"}") {
					refs[id] = driver.VariableRef{VariableID: id, CodeName: name}
				}
			}
			q := endpoint.Query{Kind: driver.KindSQL, SQL: c.sql, Variables: refs}
			_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: c.name, Query: &q, IsMaterialized: c.materialize})
			require.NoError(t, err, "%v", c.name)
		}
	}
	for _, c := range cases {
		for _, vars := range c.runs {
			want, err := lite.Service.Run(ctx, "1", c.name, endpoint.RunRequest{Variables: vars})
			require.NoError(t, err)
			got, err := ch.Run(ctx, "1", c.name, endpoint.RunRequest{Variables: vars})
			require.NoError(t, err, "%s %v", c.name, vars)
			if got, want := norm(got.Results), norm(want.Results); got != want {
				t.Errorf("%s %v: norm(got.Results) = %q, want %q", c.name, vars, got, want)
			}
		}
		if !c.materialize {
			continue
		}
		require.NoError(t, ch.Materialize(ctx, "1", c.name))
		for _, vars := range c.runs {
			inline, err := lite.Service.Run(ctx, "1", c.name, endpoint.RunRequest{Variables: vars})
			require.NoError(t, err)
			stored, err := ch.Run(ctx, "1", c.name, endpoint.RunRequest{Variables: vars})
			require.NoError(t, err)
			require.True(t, stored.EndpointMaterialized, "%v: stored.EndpointMaterialized is false", c.name)
			got, want := norm(stored.Results), norm(inline.Results)
			assert.Equal(t, want, got, "materialized %s %v: norm(stored.Results)", c.name, vars)
		}
	}
}

// norm prints rows so that engines' number types compare alike.
func norm(results any) string { return fmt.Sprint(results) }

// TestInsightsOnClickHouse: Trends and Retention compile to ClickHouse SQL
// that answers as SQLite does on the same events, inline and materialized.
func TestInsightsOnClickHouse(t *testing.T) {
	ch, lite := bothServices(t)
	ctx := context.Background()
	queries := map[string]string{
		"trends_daily_by_browser": `{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview", "math": "total"},
			{"kind": "EventsNode", "event": "purchase", "math": "sum", "math_property": "amount"}], "interval": "week",
			"dateRange": {"date_from": "2025-04-01", "date_to": "2025-05-31"}, "breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`,
		"trends_dau_hourly": `{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "math": "dau"}], "interval": "hour",
			"dateRange": {"date_from": "2025-05-10", "date_to": "2025-05-11"}}`,
		"retention": `{"kind": "RetentionQuery", "retentionFilter": {"targetEntity": {"id": "signed_up", "type": "events"},
			"returningEntity": {"id": "purchase", "type": "events"}, "period": "Week", "totalIntervals": 4},
			"dateRange": {"date_from": "2025-04-01", "date_to": "2025-05-31"}}`,
	}
	for name, q := range queries {
		kind := driver.KindTrends
		if strings.Contains(q, "RetentionQuery") {
			kind = driver.KindRetention
		}
		query := endpoint.Query{Kind: kind, Insight: []byte(q)}
		for _, svc := range []*endpoint.Service{ch, lite.Service} {
			_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &query})
			require.NoError(t, err, "%v", name)
		}
		want, err := lite.Service.Run(ctx, "1", name, endpoint.RunRequest{})
		require.NoError(t, err, "%v", name)
		got, err := ch.Run(ctx, "1", name, endpoint.RunRequest{})
		require.NoError(t, err, "%v", name)
		wantJSON, _ := json.Marshal(want.Results)
		gotJSON, _ := json.Marshal(got.Results)
		assert.True(t, jsonEqual(string(gotJSON), string(wantJSON)), "%s: chDB results %s, want SQLite's %s", name, gotJSON, wantJSON)
	}
}
