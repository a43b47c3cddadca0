//go:build chdb

package chdb

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/stretchr/testify/require"
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
			require.NoError(t, err, "%v", name)
		}
		want, _ := series(lite.Service, name, nil)
		got, _ := series(ch, name, nil)
		g, w := asJSON(got), asJSON(want)
		require.True(t, jsonEqual(g, w), "%s: chDB series %s, want SQLite's %s", name, g, w)
	}
	limited, _ := series(ch, "pages", nil)
	require.Len(t, limited, 2*(insight.DefaultBreakdownLimit+1))
	require.Equal(t, []string{insight.OtherBreakdownValue, insight.OtherBreakdownValue, insight.OtherBreakdownValue}, limited[insight.DefaultBreakdownLimit].BreakdownValue)
	hidden, _ := series(ch, "hidden", nil)
	require.Len(t, hidden, 2*insight.DefaultBreakdownLimit)
	every, _ := series(ch, "every", nil)
	a, b := len(every), 4*insight.DefaultBreakdownLimit
	require.True(t, (a > b), "len(every) = %v, want > %v", a, b)

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
	got := len(runs)
	require.Equal(t, 3, got, "a combination outside the 25: len(runs) = %d, want %d: %v", got, 3, runs)
	for _, vars := range runs {
		stored, materialized := series(ch, "mat", vars)
		require.True(t, materialized, "%v: materialized is false", vars)
		inline, _ := series(ch, "pages", vars)
		g, w := asJSON(stored), asJSON(inline)
		require.True(t, jsonEqual(g, w), "materialized %v: series %s, want the inline run's %s", vars, g, w)
		if len(vars) == 3 {
			v := stored
			require.NotEmpty(t, v, "stored is empty")
			for _, s := range stored {
				got, want := s.BreakdownValue, outside
				require.Equal(t, want, got, "only the combination's own series: s.BreakdownValue")
			}
		}
	}
}

// jsonEqual reports whether a and b hold the same JSON value: both decode
// and the decoded values are deeply equal (key order and spacing aside).
func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
