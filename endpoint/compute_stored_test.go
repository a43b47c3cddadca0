package endpoint_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/stretchr/testify/require"
)

// TestMaterializedSQLEqualsInline: after a refresh, runs read the stored
// table and answer exactly what the same query inline answers, for many
// values drawn from the data (countries with and without purchases, empty
// and reversed ranges), dates off the day boundary included: their partial
// days come from the source.
func TestMaterializedSQLEqualsInline(t *testing.T) {
	e, _ := newMatEnv(t, 20_000)
	q := e.query(dailyPurchases, "country", "from", "to")
	ep := e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	m := ep.Materialization
	if !m.CanMaterialize || m.Reason != "" || m.Status != endpoint.StatusPending || m.LastMaterializedAt != nil {
		t.Fatalf("materialization after create = %+v, want can_materialize and pending", m)
	}
	require.Equal(t, endpoint.Seconds(endpoint.DefaultDataFreshness*time.Second), endpoint.Seconds(ep.MaterializationFreshness), "freshness = %v, data freshness %d, want the default data freshness", time.Duration(ep.MaterializationFreshness), ep.DataFreshnessSeconds)
	require.Equal(t, endpoint.DefaultDataFreshness, ep.DataFreshnessSeconds, "freshness = %v, data freshness %d, want the default data freshness", time.Duration(ep.MaterializationFreshness), ep.DataFreshnessSeconds)
	require.False(t, e.mustRun(t, "daily", runVars("US", "2025-05-01", "2025-05-08")).EndpointMaterialized, "a run before the first refresh read a table")
	e.materialize(t, "daily")
	m = e.get(t, "daily").Materialization
	if m.Status != endpoint.StatusCompleted || m.LastMaterializedAt == nil || !m.LastMaterializedAt.Equal(e.clock.Now()) || m.Error != "" {
		t.Fatalf("materialization after refresh = %+v", m)
	}

	countries := append([]string{"XX", ""}, demo.Countries...)
	days := []string{"2025-02-01", "2025-03-03", "2025-03-31", "2025-04-15", "2025-05-01", "2025-05-20", "2025-06-01", "2025-07-01"}
	offDay := []string{"2025-04-15T12:00:00Z", "2025-05-01T00:00:01Z", "2025-05-20T23:59:59Z"}
	n, materialized := 0, 0
	check := func(vars map[string]any, wantMaterialized bool) {
		t.Helper()
		got, want := e.mustRun(t, "daily", vars), e.mustRun(t, "inline", vars)
		require.Equal(t, wantMaterialized, got.EndpointMaterialized, "%v: endpoint_materialized", vars)
		if wantMaterialized && (got.EndpointMaterializedAt == nil || !got.EndpointMaterializedAt.Equal(*m.LastMaterializedAt)) {
			t.Fatalf("%v: endpoint_materialized_at = %v", vars, got.EndpointMaterializedAt)
		}
		if !reflect.DeepEqual(got.Results, want.Results) || !reflect.DeepEqual(got.Columns, want.Columns) || got.HasMore != want.HasMore {
			t.Fatalf("%v:\nmaterialized %v %v\ninline       %v %v", vars, got.Columns, got.Results, want.Columns, want.Results)
		}
		n++
		if got.EndpointMaterialized {
			materialized++
		}
	}
	for i, c := range countries {
		for j, from := range days {
			to := days[(j+1+i)%len(days)] // forward, and sometimes reversed (empty)
			check(runVars(c, from, to), true)
		}
		// Off a day's start: the partial days come from the source, merged
		// with the stored whole days, still materialized and exact.
		check(runVars(c, offDay[i%len(offDay)], "2025-06-01"), true)
		check(runVars(c, "2025-04-01", offDay[(i+1)%len(offDay)]), true)
	}
	require.GreaterOrEqual(t, n, 100, "runs, %d materialized", materialized)
	require.Equal(t, n, materialized, "runs, %d materialized", materialized)
	// The answer holds rows at all: the comparison is not of empty results.
	rows := e.mustRun(t, "daily", runVars("US", "2025-03-03", "2025-06-01")).Results.([][]any)
	require.GreaterOrEqual(t, len(rows), 80)
}

// TestMaterializedPaging: limit and offset page a materialized read as they
// page the inline query.
func TestMaterializedPaging(t *testing.T) {
	e, _ := newMatEnv(t, 5000)
	q := e.query(dailyPurchases, "country", "from", "to")
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	e.materialize(t, "daily")
	for _, p := range [][2]int{{5, 0}, {5, 3}, {1000, 0}, {3, 1000}, {0, 0}} {
		limit, offset := p[0], p[1]
		req := endpoint.RunRequest{Variables: runVars("US", "2025-03-03", "2025-06-01"), Limit: &limit, Offset: &offset}
		got, err := e.svc.Run(context.Background(), "1", "daily", req)
		require.NoError(t, err)
		want, err := e.svc.Run(context.Background(), "1", "inline", req)
		require.NoError(t, err)
		if !got.EndpointMaterialized || !reflect.DeepEqual(got.Results, want.Results) || got.HasMore != want.HasMore {
			t.Fatalf("limit %d offset %d: %v %v, want %v %v", limit, offset, got.Results, got.HasMore, want.Results, want.HasMore)
		}
	}
}

// TestMaterializedRequiresEveryVariable: every variable of a materialized
// SQL endpoint is required, whether the table or the inline query answers.
func TestMaterializedRequiresEveryVariable(t *testing.T) {
	e, _ := newMatEnv(t, 1000)
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})
	for _, refreshed := range []bool{false, true} {
		if refreshed {
			e.materialize(t, "daily")
		}
		_, err := e.svc.Run(context.Background(), "1", "daily", endpoint.RunRequest{Variables: map[string]any{"country": "US"}})
		wantError(t, err, 400, endpoint.CodeRequiredVariableMissing, "Required variable(s) 'from', 'to' not provided", "variables.from")
		_, err = e.svc.Run(context.Background(), "1", "daily", endpoint.RunRequest{Variables: map[string]any{"country": "US", "from": "2025-05-01", "to": "someday"}})
		require.Equal(t, endpoint.CodeInvalidVariableValue, asError(t, err).Code, "bad date: %v", err)
	}
}
