package httpapi_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// insightTrends is a daily pageview trend over May 2025 by browser.
const insightTrends = `{"kind": "TrendsQuery",
	"series": [{"kind": "EventsNode", "event": "$pageview", "math": "total"}],
	"interval": "day",
	"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-31"},
	"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`

// insightRetention is a weekly recurring retention of pageviews by browser.
const insightRetention = `{"kind": "RetentionQuery",
	"retentionFilter": {"targetEntity": {"id": "$pageview", "type": "events"}, "returningEntity": {"id": "$pageview", "type": "events"},
		"period": "Week", "totalIntervals": 4, "retentionType": "retention_recurring"},
	"dateRange": {"date_from": "2025-05-05", "date_to": "2025-06-01"},
	"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`

// rawJSON decodes a JSON text for a request body or a comparison, with
// numbers as the harness decodes answers.
func rawJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&v))
	return v
}

func TestInsightEndpointRoutes(t *testing.T) {
	h := newHarness(t, nil)
	base := "/api/projects/1/endpoints/"
	query := rawJSON(t, insightTrends)

	r := h.do("POST", base, keyP1, map[string]any{"name": "pageviews", "query": query})
	mustStatus(t, http.StatusCreated, r)
	got, want := r.Body["query"], query
	assert.Equal(t, want, got, "the query reads back as saved: r.Body[\"query\"]")
	r = h.do("GET", base+"pageviews/", keyP1, nil)
	mustStatus(t, http.StatusOK, r)
	if got, want := r.Body["query"], query; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"query\"] = %+v, want %+v", got, want)
	}

	run := base + "pageviews/run"
	r = h.do("POST", run, keyP1, map[string]any{"variables": map[string]any{}})
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, "pageviews", r.Body["name"])
	assert.Equal(t, json.Number("1"), r.Body["endpoint_version"])
	assert.Equal(t, []any{}, r.Body["columns"])
	assert.Equal(t, []any{}, r.Body["types"])
	assert.Equal(t, false, r.Body["hasMore"])
	all := r.Body["results"].([]any)
	require.Len(t, all, len(demo.Browsers))
	for _, s := range all {
		series := s.(map[string]any)
		b := series["breakdown_value"].(string)
		got, ok := series["days"].([]any)
		if assert.True(t, ok, "len(series[\"days\"]) = %d, want %d: %v", len(got), 31, series["days"]) {
			assert.Len(t, got, 31, "len(series[\"days\"]) = %d, want %d: %v", len(got), 31, series["days"])
		}
		if got, ok := series["data"].([]any); !ok || len(got) != 31 {
			t.Errorf("len(series[\"data\"]) = %d, want %d: %v", len(got), 31, series["data"])
		}
		r := h.do("POST", run, keyP1, map[string]any{"variables": map[string]any{"$browser": b}})
		mustStatus(t, http.StatusOK, r)
		assert.Equal(t, []any{series}, r.Body["results"], "$browser=%s selects exactly its series: r.Body[\"results\"]", b)
	}

	// A number is the text of a numeric property; no browser is "5".
	r = h.do("POST", run, keyP1, `{"variables": {"$browser": 5, "date_from": "2025-05-30", "date_to": "2025-05-31"}}`)
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, []any{}, r.Body["results"], "no series is an empty array, never null: r.Body[\"results\"]")

	r = h.do("POST", run, keyP1, map[string]any{"variables": map[string]any{"$browser": "Chrome"}, "debug": true})
	mustStatus(t, http.StatusOK, r)
	debug := r.Body["debug"].(map[string]any)
	s, ok := debug["sql"].(string)
	if assert.True(t, ok, "values are bound: debug[\"sql\"] = %q, want a string without %q", debug["sql"], "Chrome") {
		assert.NotContains(t, s, "Chrome", "values are bound: debug[\"sql\"] = %q, want a string without %q", debug["sql"], "Chrome")
	}
	assert.NotEqual(t, json.Number("0"), debug["arg_count"])

	mustStatus(t, http.StatusCreated, h.do("POST", base, keyP1, map[string]any{"name": "retention", "query": rawJSON(t, insightRetention)}))
	r = h.do("POST", base+"retention/run", keyP1, map[string]any{"variables": map[string]any{"$browser": "Safari"}})
	mustStatus(t, http.StatusOK, r)
	cohorts := r.Body["results"].([]any)
	if got := len(cohorts); got != 4 {
		t.Fatalf("one cohort per week from 2025-05-05: len(cohorts) = %d, want %d: %v", got, 4, cohorts)
	}
	for _, c := range cohorts {
		cohort := c.(map[string]any)
		assert.Equal(t, "Safari", cohort["breakdown_value"])
		got, ok := cohort["values"].([]any)
		if assert.True(t, ok, "len(cohort[\"values\"]) = %d, want %d: %v", len(got), 4, cohort["values"]) {
			assert.Len(t, got, 4, "len(cohort[\"values\"]) = %d, want %d: %v", len(got), 4, cohort["values"])
		}
	}
	first := cohorts[0].(map[string]any)["values"].([]any)[0].(map[string]any)
	assert.NotEqual(t, json.Number("0"), first["count"], "the first week has Safari users: first[\"count\"]")
}

func TestInsightEndpointErrors(t *testing.T) {
	h := newHarness(t, nil)
	base := "/api/projects/1/endpoints/"
	mustStatus(t, http.StatusCreated, h.do("POST", base, keyP1, map[string]any{"name": "pageviews", "query": rawJSON(t, insightTrends)}))
	run := base + "pageviews/run"
	limitOnly := "limit and offset apply to SQL endpoints only; an insight endpoint returns its whole result."
	cases := []struct {
		name, method, path string
		body               any
		code, detail, attr string
	}{
		{"unknown variable", "POST", run, `{"variables": {"browser": "Chrome", "$browser": "Chrome"}}`,
			"unknown_variable", "Unknown variable(s): browser", "variables.browser"},
		{"bad date", "POST", run, `{"variables": {"date_to": "31/05/2025"}}`,
			"invalid_variable_value", `Variable 'date_to' must be YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, an RFC 3339 date-time, or a relative date such as -7d, -2w, -1m, -1y, -24h, mStart or -1mStart, got "31/05/2025"`, "variables.date_to"},
		{"limit", "POST", run, `{"limit": 10}`, "invalid_input", limitOnly, "limit"},
		{"offset", "POST", run, `{"offset": 1}`, "invalid_input", limitOnly, "offset"},
		{"unsupported math", "POST", base, `{"name": "median", "query": {"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview", "math": "median"}]}}`,
			"invalid_input", `Invalid insight query: series[0].math: unsupported math "median" (supported: total, dau, sum, avg, min, max)`, "query.series[0].math"},
		{"unsupported math on update", "PATCH", base + "pageviews/", `{"query": {"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview", "math": "median"}]}}`,
			"invalid_input", `Invalid insight query: series[0].math: unsupported math "median" (supported: total, dau, sum, avg, min, max)`, "query.series[0].math"},
		{"bind marker", "POST", base, `{"name": "marker", "query": {"kind": "HogQLQuery", "query": "SELECT * FROM events WHERE event = ?"}}`,
			"invalid_input", "Query contains a bind marker '?' at line 1, column 36; use {variables.<code_name>} instead", "query"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.do(c.method, c.path, keyP1, c.body)
			mustStatus(t, http.StatusBadRequest, r)
			checkErrorBody(t, r)
			assert.Equal(t, c.code, r.Body["code"])
			assert.Equal(t, c.detail, r.Body["detail"])
			assert.Equal(t, c.attr, r.Body["attr"])
		})
	}
	r := h.do("GET", base+"pageviews/", keyP1, nil)
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, json.Number("1"), r.Body["current_version"], "a refused update changed nothing: r.Body[\"current_version\"]")
	mustStatus(t, http.StatusNotFound, h.do("GET", base+"median/", keyP1, nil))
}
