package endpoint_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

func insightResult(t *testing.T, res *endpoint.RunResult) *insight.Result {
	t.Helper()
	r, ok := res.Results.(*insight.Result)
	require.True(t, ok, "results %T, want *insight.Result", res.Results)
	return r
}

// sameInsight compares results by their JSON, as clients read them.
func sameInsight(t *testing.T, what string, got, want *insight.Result) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	require.Equal(t, string(w), string(g), "%s:\nmaterialized %s\ninline       %s", what, g, w)
}

// TestMaterializedInsight: a materialized trends endpoint broken down by
// browser and country answers each breakdown-filtered run from its table
// with exactly the inline run's series; date variables are refused, and so
// is an omitted breakdown unless it is optional.
func TestMaterializedInsight(t *testing.T) {
	e, _ := newMatEnv(t, insightEvents)
	ctx := context.Background()
	q := insightQuery(t, trendsByBrowserCountry)
	ep := e.createMat(t, "trends", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	require.True(t, ep.Materialization.CanMaterialize, "after create: %+v", ep.Materialization)
	require.Equal(t, endpoint.StatusPending, ep.Materialization.Status, "after create: %+v", ep.Materialization)
	e.materialize(t, "trends")
	m := e.get(t, "trends").Materialization
	require.Equal(t, endpoint.StatusCompleted, m.Status, "after refresh: %+v", m)
	require.NotNil(t, m.LastMaterializedAt, "after refresh: %+v", m)
	runs := 0
	for _, b := range append([]string{"", "Netscape"}, demo.Browsers...) {
		for _, c := range []string{"US", "DE", "", "XX"} {
			vars := map[string]any{"$browser": b, "country": c}
			got := e.mustRun(t, "trends", vars)
			require.True(t, got.EndpointMaterialized, "%v: not read from the table", vars)
			require.NotNil(t, got.EndpointMaterializedAt, "%v: not read from the table", vars)
			sameInsight(t, b+"/"+c, insightResult(t, got), insightResult(t, e.mustRun(t, "inline", vars)))
			runs++
		}
	}
	// At least one comparison is of a series with data.
	us := insightResult(t, e.mustRun(t, "trends", map[string]any{"$browser": "Chrome", "country": "US"}))
	require.Len(t, us.Series, 1, "Chrome in the US: %+v", us.Series)
	require.NotEqual(t, float64(0), us.Series[0].Count, "Chrome in the US: %+v", us.Series)

	_, err := e.svc.Run(ctx, "1", "trends", endpoint.RunRequest{Variables: map[string]any{"$browser": "Chrome", "country": "US", "date_from": "2025-05-10"}})
	wantError(t, err, 400, endpoint.CodeUnknownVariable, "Unknown variable(s): date_from", "variables.date_from")
	_, err = e.svc.Run(ctx, "1", "trends", endpoint.RunRequest{Variables: map[string]any{"country": "US"}})
	wantError(t, err, 400, endpoint.CodeRequiredVariableMissing, "Required variable(s) '$browser' not provided", "variables.$browser")
	_, err = e.svc.Run(ctx, "1", "trends", endpoint.RunRequest{Variables: map[string]any{}})
	wantError(t, err, 400, endpoint.CodeRequiredVariableMissing, "Required variable(s) '$browser', 'country' not provided", "variables.$browser")

	// Listed as optional, an omitted breakdown returns all its series.
	opt := []string{"country"}
	if _, err := e.svc.Update(ctx, "1", "trends", endpoint.UpdateRequest{OptionalBreakdowns: &opt}); err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"$browser": "Safari"}
	got := e.mustRun(t, "trends", vars)
	require.True(t, got.EndpointMaterialized, "an optional breakdown sent the run inline")
	sameInsight(t, "Safari, every country", insightResult(t, got), insightResult(t, e.mustRun(t, "inline", vars)))
	require.GreaterOrEqual(t, len(insightResult(t, got).Series), len(demo.Countries))

	// Stale: the same checks, answered inline.
	e.clock.Advance(endpoint.DefaultDataFreshness*time.Second + time.Second)
	got = e.mustRun(t, "trends", vars)
	require.False(t, got.EndpointMaterialized, "a stale insight table served")
	_, err = e.svc.Run(ctx, "1", "trends", endpoint.RunRequest{Variables: map[string]any{"$browser": "Chrome", "date_to": "2025-05-10"}})
	wantError(t, err, 400, endpoint.CodeUnknownVariable, "Unknown variable(s): date_to", "variables.date_to")
	require.GreaterOrEqual(t, runs, 28)
}

// TestMaterializedInsightSettings: optional breakdowns must be breakdown
// properties of the query, and buckets do not apply to insights.
func TestMaterializedInsightSettings(t *testing.T) {
	e, _ := newMatEnv(t, 100)
	ctx := context.Background()
	_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "t", Query: insightQuery(t, trendsByBrowser), IsMaterialized: true, OptionalBreakdowns: []string{"country"}})
	wantError(t, err, 400, endpoint.CodeInvalidInput, "optional_breakdown_properties: 'country' is not a breakdown property of this query.", "optional_breakdown_properties")
	_, err = e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "t", Query: insightQuery(t, trendsByBrowser), MaterializationBuckets: map[string]engine.Bucket{"date_from": "day"}})
	wantError(t, err, 400, endpoint.CodeInvalidInput, "materialization_buckets apply to SQL endpoints only.", "materialization_buckets")
	if _, err := e.svc.Get(ctx, "1", "t"); asError(t, err).Status != 404 {
		t.Fatalf("a refused create stored the endpoint: %v", err)
	}
	// A materialized retention endpoint refreshes and serves too.
	e.createMat(t, "retention", insightQuery(t, retentionByBrowser), endpoint.CreateRequest{})
	e.create(t, "retention_inline", insightQuery(t, retentionByBrowser))
	e.materialize(t, "retention")
	vars := map[string]any{"$browser": "Chrome"}
	got := e.mustRun(t, "retention", vars)
	require.True(t, got.EndpointMaterialized, "retention not read from the table")
	sameInsight(t, "retention", insightResult(t, got), insightResult(t, e.mustRun(t, "retention_inline", vars)))
	require.Len(t, e.tables(t), 1, "tables")
}
