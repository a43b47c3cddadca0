package endpoint_test

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/stretchr/testify/require"
)

// lifecycleWeekly follows the users who view pages, week by week, over
// the demo data's last two months.
const lifecycleWeekly = `{"kind": "LifecycleQuery",
	"series": [{"kind": "EventsNode", "event": "$pageview"}],
	"interval": "week",
	"dateRange": {"date_from": "2025-04-01", "date_to": "2025-05-31"},
	"properties": [{"key": "$browser", "value": "Chrome", "operator": "exact", "type": "event"}]}`

// TestLifecycleEndpoint: a lifecycle endpoint runs inline, its dates moved
// by date_from and date_to; once materialized it reads its table and
// answers exactly what the inline run answers, and refuses the dates.
func TestLifecycleEndpoint(t *testing.T) {
	e, _ := newMatEnv(t, insightEvents)
	ctx := context.Background()
	q := insightQuery(t, lifecycleWeekly)
	require.Equal(t, endpoint.KindLifecycle, q.Kind, "kind")
	e.create(t, "inline", q)
	ep := e.createMat(t, "lifecycle", q, endpoint.CreateRequest{})
	require.True(t, ep.Materialization.CanMaterialize, "a lifecycle cannot be materialized: %+v", ep.Materialization)
	inline := e.runInsight(t, "inline", nil)
	require.Equal(t, insight.Lifecycle, inline.Kind, "inline: %+v", inline)
	require.Len(t, inline.Lifecycle, 4, "inline: %+v", inline)
	users := 0.0
	for i, s := range inline.Lifecycle {
		require.Equal(t, insight.Statuses()[i], s.Status, "series %d: %s with %d points", i, s.Status, len(s.Data))
		require.Len(t, s.Data, 9, "series %d: %s with %d points", i, s.Status, len(s.Data))
		for _, v := range s.Data {
			if (s.Status == insight.Dormant) != (v < 0) && v != 0 {
				t.Fatalf("%s counts %v", s.Status, v)
			}
			users += v * v
		}
	}
	require.NotEqual(t, float64(0), users, "no users in the range")
	moved := e.runInsight(t, "inline", map[string]any{"date_from": "2025-05-12", "date_to": "2025-05-25"})
	if d := moved.Lifecycle[0].Days; len(d) != 2 || d[0] != "2025-05-12" || d[1] != "2025-05-19" {
		t.Fatalf("date variables: days %v", d)
	}
	// Two weeks of the range: the same counts as in the whole range's run.
	if got, want := moved.Lifecycle[1].Data, inline.Lifecycle[1].Data[6:8]; got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("returning users of 2025-05-12 and -19: %v, want %v", got, want)
	}

	// Inline (before the refresh), then from the table.
	before := e.mustRun(t, "lifecycle", nil)
	require.False(t, before.EndpointMaterialized, "read a table before any refresh")
	sameInsight(t, "pending", insightResult(t, before), inline)
	e.materialize(t, "lifecycle")
	got := e.mustRun(t, "lifecycle", nil)
	require.True(t, got.EndpointMaterialized, "not read from the table: %s", got.InlineReason)
	require.NotNil(t, got.EndpointMaterializedAt, "not read from the table: %s", got.InlineReason)
	sameInsight(t, "materialized", insightResult(t, got), inline)

	_, err := e.svc.Run(ctx, "1", "lifecycle", endpoint.RunRequest{Variables: map[string]any{"date_from": "2025-05-10"}})
	wantError(t, err, 400, endpoint.CodeUnknownVariable, "Unknown variable(s): date_from", "variables.date_from")
	_, err = e.svc.Run(ctx, "1", "inline", endpoint.RunRequest{Variables: map[string]any{"$browser": "Chrome"}})
	wantError(t, err, 400, endpoint.CodeUnknownVariable, "Unknown variable(s): $browser", "variables.$browser")
}
