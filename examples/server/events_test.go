package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		assert.Contains(t, out, want)
	}
	base := servedOn.FindStringSubmatch(out)[1]
	api := base + "/api/projects/1"

	// The banner's property read saves and runs; the last week holds
	// events.
	read := regexp.MustCompile(`a property:\s+(.+)\n`).FindStringSubmatch(out)[1]
	sql := "SELECT " + read + " AS country, count(*) AS n FROM events WHERE timestamp >= date('now', '-7 days') GROUP BY 1 ORDER BY 1"
	body, err := json.Marshal(map[string]any{"name": "by_country", "query": map[string]any{"kind": "HogQLQuery", "query": sql}})
	require.NoError(t, err)
	status, _, raw := opsCall(t, "POST", api+"/endpoints/", string(body))
	got, want := status, 201
	require.Equal(t, want, got, "%v: status", raw)
	status, res, raw := opsCall(t, "POST", api+"/endpoints/by_country/run", "{}")
	if got, want := status, 200; got != want {
		t.Fatalf("%v: status = %v, want %v", raw, got, want)
	}
	rows := res["results"].([]any)
	v := rows
	require.NotEmpty(t, v, "%v: rows is empty", raw)
	c, _ := rows[0].([]any)[0].(string)
	assert.True(t, slices.Contains(demo.Countries, c), "%s: country %#v, want one of %q", raw, rows[0].([]any)[0], demo.Countries)

	// The schema route lists the events table with its types.
	status, _, raw = opsCall(t, "GET", api+"/schema", "")
	if got, want := status, 200; got != want {
		t.Fatalf("%v: status = %v, want %v", raw, got, want)
	}
	assert.Contains(t, raw, `{"name":"events","columns":[{"name":"project_id","type":"TEXT"},{"name":"uuid","type":"TEXT"}`)

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
	assert.True(t, (strings.Contains(raw, `"count":`) && !regexp.MustCompile(`"count":\s*0[,}]`).MatchString(raw)), "no pageviews in the last 7 days: %s: condition is false", raw)
}
