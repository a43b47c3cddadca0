//go:build chdb

package chdb

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/insight"
)

// TestInsightBreakdownLimitOnClickHouse: a trends insight broken down by
// browser, country and plan (about 200 combinations of the demo events)
// answers on chDB as on SQLite: 25 combinations per query series and an
// Other series by default, none with breakdown_hide_other_aggregation,
// every one under a large limit; materialized on chDB, it answers as its
// inline run, without variables and with the variables of a combination
// outside the 25.
func TestInsightBreakdownLimitOnClickHouse(t *testing.T) {
	ch, lite := bothServices(t)
	ctx := context.Background()
	query := func(filter string) *endpoint.Query {
		return &endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"kind": "TrendsQuery",
			"series": [{"kind": "EventsNode", "event": "$pageview"}, {"kind": "EventsNode", "event": "purchase", "math": "dau"}],
			"interval": "week", "dateRange": {"date_from": "2025-04-01", "date_to": "2025-05-31"},
			"breakdownFilter": {"breakdowns": [{"property": "$browser"}, {"property": "country"}, {"property": "plan"}]` + filter + `}}`)}
	}
	variants := map[string]string{
		"pages":  ``,
		"hidden": `, "breakdown_hide_other_aggregation": true`,
		"every":  `, "breakdown_limit": 1000`,
	}
	series := func(svc *endpoint.Service, name string, vars map[string]any) ([]insight.TrendsSeries, bool) {
		t.Helper()
		res, err := svc.Run(ctx, "1", name, endpoint.RunRequest{Variables: vars})
		require.NoError(t, err, "%s %v", name, vars)
		return res.Results.(*insight.Result).Series, res.EndpointMaterialized
	}
	asJSON := func(v any) string {
		out, err := json.Marshal(v)
		require.NoError(t, err)
		return string(out)
	}
	for name, filter := range variants {
		for _, svc := range []*endpoint.Service{ch, lite.Service} {
			_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: query(filter)})
			require.NoError(t, err, name)
		}
		want, _ := series(lite.Service, name, nil)
		got, _ := series(ch, name, nil)
		require.JSONEq(t, asJSON(want), asJSON(got), name)
	}
	limited, _ := series(ch, "pages", nil)
	require.Len(t, limited, 2*(insight.DefaultBreakdownLimit+1))
	require.Equal(t, []string{insight.OtherBreakdownValue, insight.OtherBreakdownValue, insight.OtherBreakdownValue}, limited[insight.DefaultBreakdownLimit].BreakdownValue)
	hidden, _ := series(ch, "hidden", nil)
	require.Len(t, hidden, 2*insight.DefaultBreakdownLimit)
	every, _ := series(ch, "every", nil)
	require.Greater(t, len(every), 4*insight.DefaultBreakdownLimit)

	_, err := ch.Create(ctx, "1", endpoint.CreateRequest{Name: "mat", Query: query(``), IsMaterialized: true,
		OptionalBreakdowns: []string{"$browser", "country", "plan"}})
	require.NoError(t, err)
	require.NoError(t, ch.Materialize(ctx, "1", "mat"))
	runs := []map[string]any{nil, {"$browser": "Chrome"}}
	var outside any
	for _, s := range every {
		kept := false
		for _, l := range limited {
			kept = kept || fmt.Sprint(l.BreakdownValue) == fmt.Sprint(s.BreakdownValue)
		}
		if !kept {
			v := s.BreakdownValue.([]string)
			runs = append(runs, map[string]any{"$browser": v[0], "country": v[1], "plan": v[2]})
			outside = s.BreakdownValue
			break
		}
	}
	require.Len(t, runs, 3, "a combination outside the 25")
	for _, vars := range runs {
		stored, materialized := series(ch, "mat", vars)
		require.True(t, materialized, "%v", vars)
		inline, _ := series(ch, "pages", vars)
		require.JSONEq(t, asJSON(inline), asJSON(stored), "materialized %v", vars)
		if len(vars) == 3 {
			require.NotEmpty(t, stored)
			for _, s := range stored {
				require.Equal(t, outside, s.BreakdownValue, "only the combination's own series")
			}
		}
	}
}
