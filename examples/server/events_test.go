package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
)

// TestBannerDescribesTheEvents: the banner names the events table's
// columns and types, its event names and a property read that works on
// the server's engine, and the demo events end at the day the server
// starts, so that relative dates (-7d) answer.
func TestBannerDescribesTheEvents(t *testing.T) {
	s := start(t, []string{"-api-key", "k", "-demo-events", "2000"}, nil)
	out := s.out.String()
	today := demo.Day(time.Now())
	for _, want := range []string{
		"events(project_id TEXT, uuid TEXT, event TEXT, distinct_id TEXT, timestamp TEXT, properties TEXT)",
		"$pageview, $autocapture, signed_up, purchase",
		"the 90 days before " + today.Format(time.DateOnly),
		today.AddDate(0, 0, -90).Format(time.DateOnly) + " to " + today.AddDate(0, 0, -1).Format(time.DateOnly),
		"json_extract(properties, '$.country')",
	} {
		if s, sub := out, want; !strings.Contains(s, sub) {
			t.Errorf("%q does not contain %q", s, sub)
		}
	}
	base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(out)[1]
	api := base + "/api/projects/1"

	// The banner's property read saves and runs; the last week holds
	// events.
	read := regexp.MustCompile(`a property:\s+(.+)\n`).FindStringSubmatch(out)[1]
	sql := "SELECT " + read + " AS country, count(*) AS n FROM events WHERE timestamp >= date('now', '-7 days') GROUP BY 1 ORDER BY 1"
	body, err := json.Marshal(map[string]any{"name": "by_country", "query": map[string]any{"kind": "HogQLQuery", "query": sql}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	status, _, raw := opsCall(t, "POST", api+"/endpoints/", string(body))
	if got, want := status, 201; got != want {
		t.Fatalf("%v: status = %v, want %v", raw, got, want)
	}
	status, res, raw := opsCall(t, "POST", api+"/endpoints/by_country/run", "{}")
	if got, want := status, 200; got != want {
		t.Fatalf("%v: status = %v, want %v", raw, got, want)
	}
	rows := res["results"].([]any)
	if v := rows; len(v) == 0 {
		t.Fatalf("%v: rows is empty", raw)
	}
	if c, _ := rows[0].([]any)[0].(string); !slices.Contains(demo.Countries, c) {
		t.Errorf("%s: country %#v, want one of %q", raw, rows[0].([]any)[0], demo.Countries)
	}

	// The schema route lists the events table with its types.
	status, _, raw = opsCall(t, "GET", api+"/schema", "")
	if got, want := status, 200; got != want {
		t.Fatalf("%v: status = %v, want %v", raw, got, want)
	}
	if s, sub := raw, (`{"name":"events","columns":[{"name":"project_id","type":"TEXT"},{"name":"uuid","type":"TEXT"}`); !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}

	// A trends insight over the README's relative range answers events.
	trends := `{"name": "week", "query": {"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "dateRange": {"date_from": "-7d"}}}`
	status, _, raw = opsCall(t, "POST", api+"/endpoints/", trends)
	if got, want := status, 201; got != want {
		t.Fatalf("%v: status = %v, want %v", raw, got, want)
	}
	status, _, raw = opsCall(t, "POST", api+"/endpoints/week/run", "{}")
	if got, want := status, 200; got != want {
		t.Fatalf("%v: status = %v, want %v", raw, got, want)
	}
	if !(strings.Contains(raw, `"count":`) && !regexp.MustCompile(`"count":\s*0[,}]`).MatchString(raw)) {
		t.Errorf("no pageviews in the last 7 days: %s: condition is false", raw)
	}
}
