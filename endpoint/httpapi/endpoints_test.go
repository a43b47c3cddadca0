package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEndpointRoutes(t *testing.T) {
	for _, slash := range []string{"/", ""} {
		t.Run("slash="+slash, func(t *testing.T) {
			h := newHarness(t, nil)
			mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/insight_variables/", keyP1, map[string]any{"id": idEvent, "name": "event", "type": "String"}))
			base := "/api/projects/1/endpoints"
			q := sqlQuery("SELECT count(*) AS n FROM events WHERE event = {variables.event}", map[string]string{idEvent: "event"})

			r := h.do("POST", base+slash, keyP1, map[string]any{"name": "event_count", "description": "Events of a kind", "query": q})
			mustStatus(t, http.StatusCreated, r)
			assert.Equal(t, "event_count", r.Body["name"])
			assert.Equal(t, "/api/projects/1/endpoints/event_count/run", r.Body["endpoint_path"])
			assert.Equal(t, json.Number("1"), r.Body["current_version"])
			assert.Equal(t, true, r.Body["is_active"])
			query := r.Body["query"].(map[string]any)
			assert.Equal(t, "HogQLQuery", query["kind"])

			r = h.do("GET", base+slash, keyP1, nil)
			mustStatus(t, http.StatusOK, r)
			results := r.Body["results"].([]any)
			require.Len(t, results, 1)
			assert.Equal(t, "/api/projects/1/endpoints/event_count/run", results[0].(map[string]any)["endpoint_path"])

			one := base + "/event_count" + slash
			r = h.do("GET", one, keyP1, nil)
			mustStatus(t, http.StatusOK, r)
			assert.Equal(t, "Events of a kind", r.Body["description"])

			r = h.do("PATCH", one, keyP1, map[string]any{"description": "Count of one event"})
			mustStatus(t, http.StatusOK, r)
			assert.Equal(t, "Count of one event", r.Body["description"])
			assert.Equal(t, json.Number("1"), r.Body["current_version"], "a description is no new version: r.Body[\"current_version\"]")

			q2 := sqlQuery("SELECT count(DISTINCT distinct_id) AS n FROM events WHERE event = {variables.event}", map[string]string{idEvent: "event"})
			r = h.do("PATCH", one, keyP1, map[string]any{"query": q2})
			mustStatus(t, http.StatusOK, r)
			assert.Equal(t, json.Number("2"), r.Body["current_version"], "a new query is a new version: r.Body[\"current_version\"]")

			run := base + "/event_count/run" + slash
			r = h.do("POST", run, keyP1, map[string]any{"variables": map[string]any{"event": "purchase"}})
			mustStatus(t, http.StatusOK, r)
			assert.Equal(t, "event_count", r.Body["name"])
			assert.Equal(t, json.Number("2"), r.Body["endpoint_version"])
			assert.Equal(t, []any{"n"}, r.Body["columns"])
			if got, ok := r.Body["types"].([]any); !ok || len(got) != 1 {
				t.Errorf("len(r.Body[\"types\"]) = %d, want %d: %v", len(got), 1, r.Body["types"])
			}
			assert.Equal(t, false, r.Body["hasMore"])
			wantV2 := countDemo(func(e demo.Event) bool { return e.Event == "purchase" }, true)
			assert.Equal(t, []any{[]any{json.Number(wantV2)}}, r.Body["results"])

			r = h.do("POST", run, keyP1, map[string]any{"variables": map[string]any{"event": "purchase"}, "version": 1})
			mustStatus(t, http.StatusOK, r)
			assert.Equal(t, json.Number("1"), r.Body["endpoint_version"])
			wantV1 := countDemo(func(e demo.Event) bool { return e.Event == "purchase" }, false)
			assert.Equal(t, []any{[]any{json.Number(wantV1)}}, r.Body["results"])

			r = h.do("POST", run, keyP1, map[string]any{"variables": map[string]any{"event": "purchase"}, "debug": true})
			mustStatus(t, http.StatusOK, r)
			debug, ok := r.Body["debug"].(map[string]any)
			require.True(t, ok, "debug: true adds debug: %s: ok is false", r.Raw)
			if s, ok := debug["sql"].(string); !ok || strings.Contains(s, "purchase") {
				t.Errorf("the value is bound, not in the SQL: debug[\"sql\"] = %q, want a string without %q", debug["sql"], "purchase")
			}

			r = h.do("DELETE", one, keyP1, nil)
			mustStatus(t, http.StatusNoContent, r)
			v := r.Raw
			assert.True(t, (len(v) == 0), "r.Raw = %v, want it empty", v)
			mustStatus(t, http.StatusNotFound, h.do("GET", one, keyP1, nil))
			mustStatus(t, http.StatusNotFound, h.do("POST", run, keyP1, map[string]any{"variables": map[string]any{"event": "purchase"}}))
		})
	}
}

// countDemo counts the harness's demo events that keep holds for, or their
// distinct users when distinct.
func countDemo(keep func(demo.Event) bool, distinct bool) string {
	n := 0
	users := map[string]bool{}
	_ = demo.Generate(demoEvents, demoSeed, func(e demo.Event) error {
		if keep(e) {
			n++
			users[e.DistinctID] = true
		}
		return nil
	})
	if distinct {
		n = len(users)
	}
	return strconv.Itoa(n)
}

func TestRunRangeCondition(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	cases := []struct{ from, to string }{
		{"2025-05-01", "2025-05-08"},
		{"2025-05-01T12:00:00Z", "2025-05-01T18:30:00Z"},
		{"2025-03-03", "2025-03-04"},
		{"2025-07-01", "2025-08-01"}, // after the data: no rows
		{"2025-05-08", "2025-05-01"}, // empty range
	}
	for _, c := range cases {
		t.Run(c.from+"/"+c.to, func(t *testing.T) {
			from, to := parseDemoTime(t, c.from), parseDemoTime(t, c.to)
			want := []any{}
			var ids []string
			_ = demo.Generate(demoEvents, demoSeed, func(e demo.Event) error {
				if !e.Timestamp.Before(from) && e.Timestamp.Before(to) {
					ids = append(ids, e.UUID)
				}
				return nil
			})
			slices.Sort(ids)
			for _, id := range ids {
				want = append(want, []any{id})
			}
			r := h.do("POST", "/api/projects/1/endpoints/in_range/run", keyP1, map[string]any{
				"variables": map[string]any{"from": c.from, "to": c.to},
				"limit":     demoEvents,
			})
			mustStatus(t, http.StatusOK, r)
			assert.Equal(t, want, r.Body["results"])
			assert.Equal(t, false, r.Body["hasMore"])
		})
	}
}

func parseDemoTime(t *testing.T, s string) time.Time {
	t.Helper()
	layout := time.RFC3339
	if len(s) == len(time.DateOnly) {
		layout = time.DateOnly
	}
	tm, err := time.Parse(layout, s)
	require.NoError(t, err)
	return tm
}

func TestRunPaging(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	vars := map[string]any{"from": "2025-05-01", "to": "2025-05-08"}
	all := h.do("POST", "/api/projects/1/endpoints/in_range/run", keyP1, map[string]any{"variables": vars, "limit": demoEvents})
	mustStatus(t, http.StatusOK, all)
	rows := all.Body["results"].([]any)
	a, b := len(rows), 10
	require.True(t, (a > b), "len(rows) = %v, want > %v", a, b)

	r := h.do("POST", "/api/projects/1/endpoints/in_range/run", keyP1, map[string]any{"variables": vars, "limit": 5, "offset": 3})
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, rows[3:8], r.Body["results"])
	assert.Equal(t, true, r.Body["hasMore"])
}

func TestRunEmptyBody(t *testing.T) {
	h := newHarness(t, nil)
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{
		"name": "total", "query": sqlQuery("SELECT count(*) AS n FROM events", nil),
	}))
	// An endpoint without variables runs with no body at all, as a bare
	// curl -X POST sends.
	req, err := http.NewRequest("POST", h.server.URL+"/api/projects/1/endpoints/total/run", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyP1)
	r := h.send(req)
	mustStatus(t, http.StatusOK, r)
	got, want := r.Body["results"], ([]any{[]any{json.Number(strconv.Itoa(demoEvents))}})
	assert.Equal(t, want, got, "r.Body[\"results\"]")
}

func TestInactiveEndpointDoesNotRun(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	r := h.do("PATCH", "/api/projects/1/endpoints/in_range/", keyP1, map[string]any{"is_active": false})
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, false, r.Body["is_active"])
	r = h.do("POST", runPath, keyP1, map[string]any{"variables": okVars})
	mustStatus(t, http.StatusNotFound, r)
	assert.Contains(t, r.detail(), "not active")
	mustStatus(t, http.StatusOK, h.do("PATCH", "/api/projects/1/endpoints/in_range/", keyP1, map[string]any{"is_active": true}))
	mustStatus(t, http.StatusOK, h.do("POST", runPath, keyP1, map[string]any{"variables": okVars}))
}
