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
		if err != nil {
			t.Fatalf("%s %v: unexpected error: %v", name, vars, err)
		}
		return res.Results.(*insight.Result).Series, res.EndpointMaterialized
	}
	asJSON := func(v any) string {
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return string(out)
	}
	for name, filter := range variants {
		for _, svc := range []*endpoint.Service{ch, lite.Service} {
			_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: query(filter)})
			if err != nil {
				t.Fatalf("%v: unexpected error: %v", name, err)
			}
		}
		want, _ := series(lite.Service, name, nil)
		got, _ := series(ch, name, nil)
		if g, w := asJSON(got), asJSON(want); !jsonEqual(g, w) {
			t.Fatalf("%s: chDB series %s, want SQLite's %s", name, g, w)
		}
	}
	limited, _ := series(ch, "pages", nil)
	if got := len(limited); got != 2*(insight.DefaultBreakdownLimit+1) {
		t.Fatalf("len(limited) = %d, want %d: %v", got, 2*(insight.DefaultBreakdownLimit+1), limited)
	}
	if got, want := limited[insight.DefaultBreakdownLimit].BreakdownValue, ([]string{insight.OtherBreakdownValue, insight.OtherBreakdownValue, insight.OtherBreakdownValue}); !reflect.DeepEqual(got, want) {
		t.Fatalf("limited[insight.DefaultBreakdownLimit].BreakdownValue = %+v, want %+v", got, want)
	}
	hidden, _ := series(ch, "hidden", nil)
	if got := len(hidden); got != 2*insight.DefaultBreakdownLimit {
		t.Fatalf("len(hidden) = %d, want %d: %v", got, 2*insight.DefaultBreakdownLimit, hidden)
	}
	every, _ := series(ch, "every", nil)
	if a, b := len(every), 4*insight.DefaultBreakdownLimit; !(a > b) {
		t.Fatalf("len(every) = %v, want > %v", a, b)
	}

	_, err := ch.Create(ctx, "1", endpoint.CreateRequest{Name: "mat", Query: query(``), IsMaterialized: true,
		OptionalBreakdowns: []string{"$browser", "country", "plan"}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := ch.Materialize(ctx, "1", "mat"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
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
	if got := len(runs); got != 3 {
		t.Fatalf("a combination outside the 25: len(runs) = %d, want %d: %v", got, 3, runs)
	}
	for _, vars := range runs {
		stored, materialized := series(ch, "mat", vars)
		if !materialized {
			t.Fatalf("%v: materialized is false", vars)
		}
		inline, _ := series(ch, "pages", vars)
		if g, w := asJSON(stored), asJSON(inline); !jsonEqual(g, w) {
			t.Fatalf("materialized %v: series %s, want the inline run's %s", vars, g, w)
		}
		if len(vars) == 3 {
			if v := stored; len(v) == 0 {
				t.Fatalf("stored is empty")
			}
			for _, s := range stored {
				if got, want := s.BreakdownValue, outside; !reflect.DeepEqual(got, want) {
					t.Fatalf("only the combination's own series: s.BreakdownValue = %+v, want %+v", got, want)
				}
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
