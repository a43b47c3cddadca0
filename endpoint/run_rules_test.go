package endpoint_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// verdictOf is what a run answered, as the rules decide it: the status and
// the code and detail of a refusal; the data itself is not compared.
func verdictOf(err error) string {
	if err == nil {
		return "200"
	}
	var e *endpoint.Error
	if !errors.As(err, &e) {
		return "error " + err.Error()
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Detail)
}

// TestRulesByState is the rules-by-state matrix: for SQL, Trends and
// Retention endpoints, inline and then materialized (and inline again),
// each request is answered alike with refresh cache (after the same request
// filled the cache, or not), force and direct: a request the rules of the
// endpoint's state refuse is refused whatever is cached. A cached answer of
// an insight run made inline was given to the same request once the
// endpoint was materialized, while force refused it ("Unknown variable(s):
// date_from").
func TestRulesByState(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithDemoEvents(400), endpointtest.WithConfig(func(c *endpoint.Config) {
		c.ResultCache = memstore.NewResultCache(1 << 20)
	}))
	ctx := context.Background()
	svc, p := env.Service, env.Project
	v, err := svc.CreateVariable(ctx, p, variable.Variable{Name: "Event", Type: variable.String})
	require.NoError(t, err)
	d, err := svc.CreateVariable(ctx, p, variable.Variable{Name: "From", Type: variable.Date})
	require.NoError(t, err)
	limit := 5
	type request struct {
		name string
		req  endpoint.RunRequest
	}
	vars := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	kinds := []struct {
		name     string
		query    endpoint.Query
		requests []request
	}{
		{"sql", endpoint.Query{Kind: endpoint.KindSQL,
			SQL:       "SELECT event, count(*) AS n FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} GROUP BY event",
			Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID}, d.ID: {VariableID: d.ID}}},
			[]request{
				{"valid", endpoint.RunRequest{Variables: vars("event", "purchase", "from", "2025-04-01")}},
				{"missing", endpoint.RunRequest{Variables: vars("event", "purchase")}},
				{"unknown", endpoint.RunRequest{Variables: vars("event", "purchase", "from", "2025-04-01", "nope", 1)}},
				{"wrong type", endpoint.RunRequest{Variables: vars("event", "purchase", "from", "yesterday-ish")}},
				{"limit", endpoint.RunRequest{Variables: vars("event", "purchase", "from", "2025-04-01"), Limit: &limit}},
			}},
		{"trends", endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"kind": "TrendsQuery",
			"series": [{"kind": "EventsNode", "event": "$pageview"}], "interval": "day",
			"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-10"},
			"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`)},
			[]request{
				{"empty", endpoint.RunRequest{Variables: vars()}},
				{"breakdown", endpoint.RunRequest{Variables: vars("$browser", "Chrome")}},
				{"dates", endpoint.RunRequest{Variables: vars("date_from", "2025-05-03")}},
				{"breakdown and dates", endpoint.RunRequest{Variables: vars("$browser", "Chrome", "date_from", "2025-05-03")}},
				{"unknown", endpoint.RunRequest{Variables: vars("$browser", "Chrome", "nope", "x")}},
				{"wrong type", endpoint.RunRequest{Variables: vars("$browser", "Chrome", "date_from", "not a date")}},
				{"limit", endpoint.RunRequest{Variables: vars("$browser", "Chrome"), Limit: &limit}},
			}},
		{"retention", endpoint.Query{Kind: endpoint.KindRetention, Insight: []byte(`{"kind": "RetentionQuery",
			"retentionFilter": {"period": "Day", "totalIntervals": 5,
				"targetEntity": {"id": "$pageview", "type": "events"}, "returningEntity": {"id": "$pageview", "type": "events"}},
			"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-10"},
			"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`)},
			[]request{
				{"empty", endpoint.RunRequest{Variables: vars()}},
				{"breakdown", endpoint.RunRequest{Variables: vars("$browser", "Chrome")}},
				{"dates", endpoint.RunRequest{Variables: vars("$browser", "Chrome", "date_to", "2025-05-08")}},
				{"unknown", endpoint.RunRequest{Variables: vars("$browser", "Chrome", "nope", "x")}},
			}},
	}
	cases, stored := 0, 0
	for _, k := range kinds {
		q := k.query
		_, err := svc.Create(ctx, p, endpoint.CreateRequest{Name: k.name, Query: &q})
		require.NoError(t, err)
		for _, state := range []string{"inline", "materialized", "inline again"} {
			if state != "inline" {
				on := state == "materialized"
				_, err := svc.Update(ctx, p, k.name, endpoint.UpdateRequest{IsMaterialized: &on})
				require.NoError(t, err, "%v", k.name)
				if on {
					require.NoError(t, svc.Materialize(ctx, p, k.name), "%v", k.name)
				}
			}
			for _, r := range k.requests {
				run := func(refresh string) string {
					req := r.req
					req.Refresh = refresh
					adm, admErr := svc.Admit(ctx, endpoint.Budgets{}, endpoint.Caller{Project: p}, endpoint.Ask{Act: endpoint.ActRun, Endpoint: k.name, Run: &req})
					res, err := svc.Run(ctx, p, k.name, req)
					chargedAsAnswered(t, fmt.Sprintf("%s %s, %s, refresh %q", k.name, state, r.name, refresh), adm, admErr, res, err)
					if err == nil && res.EndpointMaterialized {
						stored++
					}
					return verdictOf(err)
				}
				// Cached first (the cache may hold this request's answer
				// of an earlier state), then computed, then cached again.
				cached := run("")
				forced := run(endpoint.RefreshForce)
				again := run(endpoint.RefreshCache)
				what := fmt.Sprintf("%s %s, %s", k.name, state, r.name)
				got, want := cached, forced
				require.Equal(t, want, got, "%s: from the cache (before force): cached", what)
				if got, want := again, forced; got != want {
					t.Fatalf("%s: from the cache (after force): again = %q, want %q", what, got, want)
				}
				if state == "materialized" {
					got, want := run(endpoint.RefreshDirect), forced
					require.Equal(t, want, got, "%s: direct: run(endpoint.RefreshDirect)", what)
				}
				cases++
			}
		}
	}
	got, want := cases, 3*(5+7+4)
	require.Equal(t, want, got, "cases")
	require.NotEqual(t, 0, stored, "no run read a stored table: the budget dimension checked nothing")
}

// chargedAsAnswered is the budget dimension of the rules matrix: the
// budget admission charges a run to (Service.Admit's Stored: the
// materialized budget or the inline one) is the one of what answered it
// (EndpointMaterialized), and admission refuses what the run refuses (the
// rules of the endpoint's state), alike, before any budget is charged.
func chargedAsAnswered(t *testing.T, what string, adm endpoint.Admission, admErr error, res *endpoint.RunResult, err error) {
	t.Helper()
	if admErr != nil {
		got, want := verdictOf(err), verdictOf(admErr)
		assert.Equal(t, want, got, "%s: admission refused", what)
		return
	}
	if err != nil {
		t.Errorf("%s: admitted, and the run refused %q", what, verdictOf(err))
		return
	}
	assert.Equal(t, res.EndpointMaterialized, adm.Stored, "%s: charged as stored", what)
}
