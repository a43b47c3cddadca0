package httpapi_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/examples/demo"
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
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	return v
}

func TestInsightEndpointRoutes(t *testing.T) {
	h := newHarness(t, nil)
	base := "/api/projects/1/endpoints/"
	query := rawJSON(t, insightTrends)

	r := h.do("POST", base, keyP1, map[string]any{"name": "pageviews", "query": query})
	mustStatus(t, http.StatusCreated, r)
	if got, want := r.Body["query"], query; !reflect.DeepEqual(got, want) {
		t.Errorf("the query reads back as saved: r.Body[\"query\"] = %+v, want %+v", got, want)
	}
	r = h.do("GET", base+"pageviews/", keyP1, nil)
	mustStatus(t, http.StatusOK, r)
	if got, want := r.Body["query"], query; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"query\"] = %+v, want %+v", got, want)
	}

	run := base + "pageviews/run"
	r = h.do("POST", run, keyP1, map[string]any{"variables": map[string]any{}})
	mustStatus(t, http.StatusOK, r)
	if got, want := r.Body["name"], "pageviews"; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"name\"] = %q, want %q", got, want)
	}
	if got, want := r.Body["endpoint_version"], json.Number("1"); !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"endpoint_version\"] = %q, want %q", got, want)
	}
	if got, want := r.Body["columns"], ([]any{}); !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"columns\"] = %+v, want %+v", got, want)
	}
	if got, want := r.Body["types"], ([]any{}); !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"types\"] = %+v, want %+v", got, want)
	}
	if got, want := r.Body["hasMore"], false; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"hasMore\"] = %+v, want %+v", got, want)
	}
	all := r.Body["results"].([]any)
	if got := len(all); got != len(demo.Browsers) {
		t.Fatalf("len(all) = %d, want %d: %v", got, len(demo.Browsers), all)
	}
	for _, s := range all {
		series := s.(map[string]any)
		b := series["breakdown_value"].(string)
		if got, ok := series["days"].([]any); !ok || len(got) != 31 {
			t.Errorf("len(series[\"days\"]) = %d, want %d: %v", len(got), 31, series["days"])
		}
		if got, ok := series["data"].([]any); !ok || len(got) != 31 {
			t.Errorf("len(series[\"data\"]) = %d, want %d: %v", len(got), 31, series["data"])
		}
		r := h.do("POST", run, keyP1, map[string]any{"variables": map[string]any{"$browser": b}})
		mustStatus(t, http.StatusOK, r)
		if got, want := r.Body["results"], ([]any{series}); !reflect.DeepEqual(got, want) {
			t.Errorf("$browser=%s selects exactly its series: r.Body[\"results\"] = %+v, want %+v", b, got, want)
		}
	}

	// A number is the text of a numeric property; no browser is "5".
	r = h.do("POST", run, keyP1, `{"variables": {"$browser": 5, "date_from": "2025-05-30", "date_to": "2025-05-31"}}`)
	mustStatus(t, http.StatusOK, r)
	if got, want := r.Body["results"], ([]any{}); !reflect.DeepEqual(got, want) {
		t.Errorf("no series is an empty array, never null: r.Body[\"results\"] = %+v, want %+v", got, want)
	}

	r = h.do("POST", run, keyP1, map[string]any{"variables": map[string]any{"$browser": "Chrome"}, "debug": true})
	mustStatus(t, http.StatusOK, r)
	debug := r.Body["debug"].(map[string]any)
	if s, ok := debug["sql"].(string); !ok || strings.Contains(s, "Chrome") {
		t.Errorf("values are bound: debug[\"sql\"] = %q, want a string without %q", debug["sql"], "Chrome")
	}
	if got, want := debug["arg_count"], json.Number("0"); reflect.DeepEqual(got, want) {
		t.Errorf("debug[\"arg_count\"] = %q, want anything else", got)
	}

	mustStatus(t, http.StatusCreated, h.do("POST", base, keyP1, map[string]any{"name": "retention", "query": rawJSON(t, insightRetention)}))
	r = h.do("POST", base+"retention/run", keyP1, map[string]any{"variables": map[string]any{"$browser": "Safari"}})
	mustStatus(t, http.StatusOK, r)
	cohorts := r.Body["results"].([]any)
	if got := len(cohorts); got != 4 {
		t.Fatalf("one cohort per week from 2025-05-05: len(cohorts) = %d, want %d: %v", got, 4, cohorts)
	}
	for _, c := range cohorts {
		cohort := c.(map[string]any)
		if got, want := cohort["breakdown_value"], "Safari"; !reflect.DeepEqual(got, want) {
			t.Errorf("cohort[\"breakdown_value\"] = %q, want %q", got, want)
		}
		if got, ok := cohort["values"].([]any); !ok || len(got) != 4 {
			t.Errorf("len(cohort[\"values\"]) = %d, want %d: %v", len(got), 4, cohort["values"])
		}
	}
	first := cohorts[0].(map[string]any)["values"].([]any)[0].(map[string]any)
	if got, want := first["count"], json.Number("0"); reflect.DeepEqual(got, want) {
		t.Errorf("the first week has Safari users: first[\"count\"] = %q, want anything else", got)
	}
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
			if got, want := r.Body["code"], c.code; !reflect.DeepEqual(got, want) {
				t.Errorf("r.Body[\"code\"] = %q, want %q", got, want)
			}
			if got, want := r.Body["detail"], c.detail; !reflect.DeepEqual(got, want) {
				t.Errorf("r.Body[\"detail\"] = %q, want %q", got, want)
			}
			if got, want := r.Body["attr"], c.attr; !reflect.DeepEqual(got, want) {
				t.Errorf("r.Body[\"attr\"] = %q, want %q", got, want)
			}
		})
	}
	r := h.do("GET", base+"pageviews/", keyP1, nil)
	mustStatus(t, http.StatusOK, r)
	if got, want := r.Body["current_version"], json.Number("1"); !reflect.DeepEqual(got, want) {
		t.Errorf("a refused update changed nothing: r.Body[\"current_version\"] = %q, want %q", got, want)
	}
	mustStatus(t, http.StatusNotFound, h.do("GET", base+"median/", keyP1, nil))
}
