package httpapi_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEndpointRoutes(t *testing.T) {
	forEachSlash(t, func(t *testing.T, h *harness, slash string) {
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

// insightLifecycle is a weekly lifecycle of pageviews in May 2025.
const insightLifecycle = `{"kind": "LifecycleQuery",
	"series": [{"kind": "EventsNode", "event": "$pageview"}],
	"interval": "week",
	"dateRange": {"date_from": "2025-05-05", "date_to": "2025-05-31"},
	"lifecycleFilter": {"toggledLifecycles": ["new", "dormant"]}}`

// TestHTTPLifecycle: a lifecycle endpoint over HTTP answers PostHog's four
// status series, its dates moved by date_from and date_to, its values
// bound; materialized, it reads its table, answers as the inline endpoint
// does, and refuses the dates.
func TestHTTPLifecycle(t *testing.T) {
	h := newHarness(t, nil)
	base := "/api/projects/1/endpoints/"
	query := h.createInsight(t, "inline", insightLifecycle)

	r := h.do("POST", base+"inline/run", keyP1, map[string]any{"variables": map[string]any{}, "debug": true})
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, []any{}, r.Body["columns"])
	sql, ok := r.Body["debug"].(map[string]any)["sql"].(string)
	if assert.True(t, ok, "values are bound: debug sql = %q, want no %q", sql, "$pageview") {
		assert.NotContains(t, sql, "$pageview", "values are bound: debug sql = %q, want no %q", sql, "$pageview")
	}
	results := r.Body["results"].([]any)
	if got := len(results); got != 4 {
		t.Fatalf("every status, whatever toggledLifecycles says: len(results) = %d, want %d: %v", got, 4, results)
	}
	users := 0
	for i, status := range []string{"new", "returning", "resurrecting", "dormant"} {
		s := results[i].(map[string]any)
		got, want := s["status"], status
		assert.Equal(t, want, got, "s[\"status\"]")
		if got, want := s["label"], "$pageview - "+status; !reflect.DeepEqual(got, want) {
			t.Errorf("s[\"label\"] = %q, want %q", got, want)
		}
		assert.Equal(t, []any{"2025-05-05", "2025-05-12", "2025-05-19", "2025-05-26"}, s["days"])
		assert.Equal(t, []any{"5-May-2025", "12-May-2025", "19-May-2025", "26-May-2025"}, s["labels"])
		assert.Equal(t, map[string]any{"id": "$pageview", "name": "$pageview", "type": "events", "order": json.Number("0"), "math": "total"}, s["action"])
		for _, v := range s["data"].([]any) {
			n, err := v.(json.Number).Int64()
			require.NoError(t, err)
			if status == "dormant" {
				a, b := n, int64(0)
				assert.True(t, (a <= b), "n = %v, want <= %v", a, b)
			} else {
				a, b := n, int64(0)
				assert.True(t, (a >= b), "n = %v, want >= %v", a, b)
			}
			users += int(n * n)
		}
	}
	assert.Greater(t, users, 0)

	r = h.do("POST", base+"inline/run", keyP1, map[string]any{"variables": map[string]any{"date_from": "2025-05-19", "date_to": "2025-05-20"}})
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, []any{"2025-05-19"}, r.Body["results"].([]any)[0].(map[string]any)["days"])
	r = h.do("POST", base+"inline/run", keyP1, map[string]any{"variables": map[string]any{"$browser": "Chrome"}})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "Unknown variable(s): $browser", r.detail())

	mustStatus(t, http.StatusCreated, h.do("POST", base, keyP1, map[string]any{"name": "stored", "query": query, "is_materialized": true}))
	mustStatus(t, http.StatusOK, h.do("POST", base+"stored/materialize?wait=true", keyP1, nil))
	got := h.do("POST", base+"stored/run", keyP1, map[string]any{"variables": map[string]any{}})
	mustStatus(t, http.StatusOK, got)
	assert.Equal(t, true, got.Body["endpoint_materialized"])
	want := h.do("POST", base+"inline/run", keyP1, map[string]any{"variables": map[string]any{}})
	assert.Equal(t, want.Body["results"], got.Body["results"])
	r = h.do("POST", base+"stored/run", keyP1, map[string]any{"variables": map[string]any{"date_to": "2025-05-20"}})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "unknown_variable", r.Body["code"])

	r = h.do("POST", base, keyP1, map[string]any{"name": "bad", "query": rawJSON(t, `{"kind": "LifecycleQuery", "series": [{"kind": "EventsNode", "math": "sum", "math_property": "amount"}]}`)})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "query.series[0].math", r.Body["attr"])
}

// TestQueryRouteLifecycle: a LifecycleQuery runs unsaved with its dates by
// name, and under an access policy that scopes the events to the project
// it answers from the project's rows only (both of its reads of events).
func TestQueryRouteLifecycle(t *testing.T) {
	body := `{"query": {"kind": "LifecycleQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "interval": "week",
		"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-31"}}, "variables": {"date_from": "2025-03-03"}}`
	h := newHarness(t, nil)
	r := h.do("POST", "/api/projects/1/query/", keyP1, body)
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, "LifecycleQuery", r.Body["kind"])
	results := r.Body["results"].([]any)
	require.Len(t, results, 4)
	days, ok := results[0].(map[string]any)["days"].([]any)
	if assert.True(t, ok, "the weeks from 2025-03-03 to 2025-05-26: len(days) = %d, want %d: %v", len(days), 13, days) {
		assert.Len(t, days, 13, "the weeks from 2025-03-03 to 2025-05-26: len(days) = %d, want %d: %v", len(days), 13, days)
	}

	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	require.NoError(t, err)
	scoped := endpointtest.New(t, endpointtest.WithDemoEvents(300), endpointtest.WithConfig(func(c *endpoint.Config) { c.Access = policy }),
		endpointtest.WithHTTPOptions(httpapi.WithLimiter(nil)))
	status, alone := scoped.Do(t, "POST", "/query/", body)
	got, want := status, http.StatusOK
	require.Equal(t, want, got, "%v: status", alone)
	// Another project's rows: the same users, earlier (first seen) and in the range (activity).
	for i, ts := range []string{"2025-01-01 00:00:00", "2025-05-27 10:00:00"} {
		_, err := scoped.DB.Exec(`INSERT INTO events (project_id, uuid, event, distinct_id, timestamp, properties)
			SELECT '2', uuid || '-p2-' || ?, event, distinct_id, ?, properties FROM events WHERE project_id = '1'`, i, ts)
		require.NoError(t, err)
	}
	status, beside := scoped.Do(t, "POST", "/query/", body)
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", beside, got, want)
	}
	if got, want := results4(t, beside), results4(t, alone); !reflect.DeepEqual(got, want) {
		t.Errorf("project 2's rows change nothing: results4(t, beside) = %+v, want %+v", got, want)
	}
	newUsers := results4(t, alone)[0].(map[string]any)["count"].(float64)
	if v := newUsers; v <= 0 {
		t.Errorf("new users, whom project 2's earlier rows would make seen before: newUsers = %v, want > 0", v)
	}
}

// results4 reads the results of a lifecycle answer.
func results4(t *testing.T, body string) []any {
	t.Helper()
	var v struct {
		Results []any `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	require.Len(t, v.Results, 4)
	return v.Results
}

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

// createInsight saves the insight query text as the endpoint name of
// project 1, checks that its query reads back as saved, and returns it.
func (h *harness) createInsight(t *testing.T, name, text string) any {
	t.Helper()
	query := rawJSON(t, text)
	r := h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{"name": name, "query": query})
	mustStatus(t, http.StatusCreated, r)
	assert.Equal(t, query, r.Body["query"], "the query reads back as saved: r.Body[\"query\"]")
	return query
}

func TestInsightEndpointRoutes(t *testing.T) {
	h := newHarness(t, nil)
	base := "/api/projects/1/endpoints/"
	query := h.createInsight(t, "pageviews", insightTrends)
	r := h.do("GET", base+"pageviews/", keyP1, nil)
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

// TestProjectIsolation: a key for project 1 never reads, changes or runs
// anything of project 2, whatever the route: the server's key of project
// 1, and a stored key of project 1 with every scope (keys_test.go).
func TestProjectIsolation(t *testing.T) {
	kh := newKeysHarness(t, apikey.Config{})
	h := kh.harness
	stored, _ := kh.mint("1", map[string]any{"name": "all", "scopes": apikey.Scopes, "runs_per_minute": 1, "materialized_runs_per_minute": 1})
	h.setupRange("1", keyP1)
	h.setupRange("2", keyP2)
	secret := "SELECT 'project-two-secret' AS s"
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/2/endpoints/", keyP2, map[string]any{"name": "secret", "query": sqlQuery(secret, nil)}))

	forbidden := []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/projects/2/endpoints/", nil},
		{"GET", "/api/projects/2/endpoints/secret", nil},
		{"GET", "/api/projects/2/endpoints/no_such_one", nil},
		{"POST", "/api/projects/2/endpoints/secret/run", map[string]any{"variables": map[string]any{}}},
		{"POST", "/api/projects/2/endpoints/in_range/run", map[string]any{"variables": okVars}},
		{"PATCH", "/api/projects/2/endpoints/secret", map[string]any{"description": "mine now"}},
		{"DELETE", "/api/projects/2/endpoints/secret", nil},
		{"POST", "/api/projects/2/endpoints/", map[string]any{"name": "planted", "query": sqlQuery("SELECT 1", nil)}},
		{"GET", "/api/projects/2/insight_variables/", nil},
		{"GET", "/api/projects/2/insight_variables/" + idFrom, nil},
		{"PATCH", "/api/projects/2/insight_variables/" + idFrom, map[string]any{"name": "mine"}},
		{"DELETE", "/api/projects/2/insight_variables/" + idTo, nil},
		{"POST", "/api/projects/2/insight_variables/", dateVar(idCountry, "Planted")},
		// In any format: the 403 comes first, in JSON.
		{"POST", "/api/projects/2/endpoints/secret/run", map[string]any{"variables": map[string]any{}, "format": "csv"}},
		{"POST", "/api/projects/2/endpoints/secret/run", map[string]any{"variables": map[string]any{}, "format": "ndjson"}},
		{"POST", "/api/projects/2/query/", map[string]any{"query": sqlQuery(secret, nil), "format": "csv"}},
		// The streamed answers (no result cache here: CSV and NDJSON runs
		// are written as the engine reads the rows), and Parquet.
		{"POST", "/api/projects/2/endpoints/in_range/run", map[string]any{"variables": okVars, "format": "csv", "refresh": "force"}},
		{"POST", "/api/projects/2/endpoints/in_range/run", map[string]any{"variables": okVars, "format": "ndjson", "refresh": "force"}},
		{"POST", "/api/projects/2/endpoints/in_range/run", map[string]any{"variables": okVars, "format": "parquet"}},
		{"POST", "/api/projects/2/endpoints/secret/run", map[string]any{"variables": map[string]any{}, "format": "parquet"}},
		// A malformed body must not reveal more than the 403 either.
		{"POST", "/api/projects/2/endpoints/secret/run", `{"variables": `},
		{"POST", "/api/projects/2/query/", map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": "SELECT 1"}}},
		{"GET", "/api/projects/2/schema", nil},
		{"GET", "/api/projects/2/endpoints/secret/logs", nil},
		{"GET", "/api/projects/2/endpoints/secret/openapi.json", nil},
		{"GET", "/api/projects/2/keys/", nil},
		{"POST", "/api/projects/2/keys/", map[string]any{"name": "planted", "scopes": []string{"endpoint:read"}}},
	}
	for _, key := range []string{keyP1, stored} {
		for _, c := range forbidden {
			r := h.do(c.method, c.path, key, c.body)
			mustStatus(t, http.StatusForbidden, r)
			assert.Equal(t, "forbidden", r.Body["code"], "%s %s: r.Body[\"code\"]", c.method, c.path)
			assert.NotContains(t, string(r.Raw), "project-two-secret")
			assert.NotContains(t, string(r.Raw), idFrom)
		}
	}

	// Project 2 is as it was.
	r := h.do("GET", "/api/projects/2/endpoints/", keyP2, nil)
	mustStatus(t, http.StatusOK, r)
	got, ok := r.Body["results"].([]any)
	if assert.True(t, ok, "len(r.Body[\"results\"]) = %d, want %d: %v", len(got), 2, r.Body["results"]) {
		assert.Len(t, got, 2, "len(r.Body[\"results\"]) = %d, want %d: %v", len(got), 2, r.Body["results"])
	}
	r = h.do("GET", "/api/projects/2/endpoints/secret", keyP2, nil)
	assert.Equal(t, "", r.Body["description"])
	r = h.do("GET", "/api/projects/2/insight_variables/", keyP2, nil)
	if got, ok := r.Body["results"].([]any); !ok || len(got) != 2 {
		t.Errorf("len(r.Body[\"results\"]) = %d, want %d: %v", len(got), 2, r.Body["results"])
	}
	r = h.do("POST", "/api/projects/2/endpoints/secret/run", keyP2, map[string]any{"variables": map[string]any{}})
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, []any{[]any{"project-two-secret"}}, r.Body["results"])

	// Through its own project, key 1 sees only project 1's records.
	for _, key := range []string{keyP1, stored} {
		r = h.do("GET", "/api/projects/1/endpoints/", key, nil)
		mustStatus(t, http.StatusOK, r)
		got, ok := r.Body["results"].([]any)
		if assert.True(t, ok, "len(r.Body[\"results\"]) = %d, want %d: %v", len(got), 1, r.Body["results"]) {
			assert.Len(t, got, 1, "len(r.Body[\"results\"]) = %d, want %d: %v", len(got), 1, r.Body["results"])
		}
		mustStatus(t, http.StatusNotFound, h.do("GET", "/api/projects/1/endpoints/secret", key, nil))
		mustStatus(t, http.StatusNotFound, h.do("POST", "/api/projects/1/endpoints/secret/run", key, map[string]any{"variables": map[string]any{}}))
		r = h.do("GET", "/api/projects/1/keys/", key, nil)
		mustStatus(t, http.StatusOK, r)
		if got, ok := r.Body["results"].([]any); !ok || len(got) != 1 {
			t.Errorf("project 1's keys only: len(r.Body[\"results\"]) = %d, want %d: %v", len(got), 1, r.Body["results"])
		}
	}

	// The budget dimension: no refusal above cost the stored key its
	// budget (a 403 for the project, a 404 for the record come before
	// it), so its one inline run of the minute is still there; once it
	// is spent, another project is still a 403, not a 429.
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/in_range/run", stored, map[string]any{"variables": okVars}))
	requireThrottled(t, h.do("POST", "/api/projects/1/endpoints/in_range/run", stored, map[string]any{"variables": okVars}), apikey.LimitRunsPerMinute)
	requireThrottled(t, h.do("POST", "/api/projects/1/query/", stored, map[string]any{"query": sqlQuery("SELECT 1 AS one", nil)}), apikey.LimitRunsPerMinute)
	mustStatus(t, http.StatusForbidden, h.do("POST", "/api/projects/2/endpoints/secret/run", stored, map[string]any{"variables": map[string]any{}}))

	// The admin key reaches both.
	mustStatus(t, http.StatusOK, h.do("GET", "/api/projects/1/endpoints/in_range", keyAdmin, nil))
	mustStatus(t, http.StatusOK, h.do("GET", "/api/projects/2/endpoints/secret", keyAdmin, nil))
}

// TestVariableOfAnotherProject: a variable id of project 2 is unknown in
// project 1, both to read and to use in an endpoint.
func TestVariableOfAnotherProject(t *testing.T) {
	h := newHarness(t, nil)
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/2/insight_variables/", keyP2, map[string]any{"id": idCountry, "name": "country", "type": "String"}))
	mustStatus(t, http.StatusNotFound, h.do("GET", "/api/projects/1/insight_variables/"+idCountry, keyAdmin, nil))
	r := h.do("POST", "/api/projects/1/endpoints/", keyAdmin, map[string]any{
		"name":  "borrowed",
		"query": sqlQuery("SELECT count(*) FROM events WHERE json_extract(properties, '$.country') = {variables.country}", map[string]string{idCountry: "country"}),
	})
	mustStatus(t, http.StatusBadRequest, r)
	s, sub := r.detail(), "Variable ID(s) not found: "+idCountry
	assert.Contains(t, s, sub)
}

// TestHTTPSoftDelete: PATCH {"deleted": true} hides an endpoint on every
// route (404) and frees its name; PATCH {"deleted": false} brings it back
// with its versions and run log while the name is free, and is a 409 once
// another endpoint took it.
func TestHTTPSoftDelete(t *testing.T) {
	h := newHarness(t, nil)
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	base := "/api/projects/1/endpoints/"
	vars := map[string]any{"variables": map[string]any{"country": "US", "from": "2025-04-01", "to": "2025-05-01"}}
	ran := h.do("POST", base+"daily/run", keyP1, vars)
	mustStatus(t, http.StatusOK, ran)
	mustStatus(t, http.StatusOK, h.do("PATCH", base+"daily/", keyP1, map[string]any{"description": "v2"}))

	gone := h.do("PATCH", base+"daily/", keyP1, map[string]any{"deleted": true})
	mustStatus(t, http.StatusOK, gone)
	assert.Equal(t, "daily", gone.Body["name"])
	s, ok := gone.Body["deleted_at"].(string)
	if assert.True(t, ok, "gone.Body[\"deleted_at\"] = %#v, want a non-empty string", gone.Body["deleted_at"]) {
		assert.NotEqual(t, "", s, "gone.Body[\"deleted_at\"] = %#v, want a non-empty string", gone.Body["deleted_at"])
	}

	for _, r := range []struct{ method, path string }{
		{"GET", base + "daily/"}, {"POST", base + "daily/run"}, {"GET", base + "daily/versions/"},
		{"GET", base + "daily/logs/"}, {"GET", base + "daily/materialization_status/"},
		{"POST", base + "daily/materialize"}, {"PATCH", base + "daily/"}, {"DELETE", base + "daily/"},
	} {
		var body any
		if r.method == "POST" && r.path == base+"daily/run" {
			body = vars
		} else if r.method == "PATCH" {
			body = map[string]any{"description": "x"}
		}
		got, want := h.do(r.method, r.path, keyP1, body).Status, http.StatusNotFound
		assert.Equal(t, want, got, "%s %s of a deleted endpoint: h.do(r.method, r.path, keyP1, body).Status", r.method, r.path)
	}
	list := h.do("GET", base, keyP1, nil)
	mustStatus(t, http.StatusOK, list)
	assert.NotContains(t, string(list.Raw), `"daily"`, "the list shows a deleted endpoint")
	assert.NotContains(t, string(list.Raw), `daily/`, "the list shows a deleted endpoint's stored name")

	// Restored: the same id, versions and log.
	back := h.do("PATCH", base+"daily/", keyP1, map[string]any{"deleted": false})
	mustStatus(t, http.StatusOK, back)
	assert.Equal(t, gone.Body["id"], back.Body["id"])
	if v := back.Body["deleted_at"]; v != nil {
		t.Errorf("back.Body[\"deleted_at\"] = %v, want nil", v)
	}
	versions := h.do("GET", base+"daily/versions/", keyP1, nil)
	mustStatus(t, http.StatusOK, versions)
	logs := h.do("GET", base+"daily/logs/", keyP1, nil)
	mustStatus(t, http.StatusOK, logs)
	if s, sub := string(logs.Raw), ran.Body["execution_id"].(string); !strings.Contains(s, sub) {
		t.Errorf("the run log did not survive the delete: %q does not contain %q", s, sub)
	}
	mustStatus(t, http.StatusOK, h.do("POST", base+"daily/run", keyP1, vars))

	// Deleted again, its name taken by a new endpoint: no restore.
	mustStatus(t, http.StatusOK, h.do("PATCH", base+"daily/", keyP1, map[string]any{"deleted": true}))
	q := h.do("GET", base+"inline/", keyP1, nil).Body["query"]
	mustStatus(t, http.StatusCreated, h.do("POST", base, keyP1, map[string]any{"name": "daily", "query": q}))
	taken := h.do("PATCH", base+"daily/", keyP1, map[string]any{"deleted": false})
	got, want := taken.Status, http.StatusOK
	require.Equal(t, want, got, "deleted:false on a live endpoint changes nothing: taken.Status")
	assert.NotEqual(t, gone.Body["id"], taken.Body["id"])
	mustStatus(t, http.StatusOK, h.do("PATCH", base+"daily/", keyP1, map[string]any{"name": "daily2"}))
	mustStatus(t, http.StatusOK, h.do("PATCH", base+"daily/", keyP1, map[string]any{"deleted": false}))

	// deleted comes alone; an unknown endpoint has nothing to restore.
	mixed := h.do("PATCH", base+"daily/", keyP1, map[string]any{"deleted": true, "description": "x"})
	mustStatus(t, http.StatusBadRequest, mixed)
	assert.Contains(t, mixed.detail(), "deleted must be the only field")
	mustStatus(t, http.StatusNotFound, h.do("PATCH", base+"nothing/", keyP1, map[string]any{"deleted": false}))
	// Another project sees none of it.
	mustStatus(t, http.StatusNotFound, h.do("PATCH", "/api/projects/2/endpoints/daily/", keyP2, map[string]any{"deleted": true}))
}

// TestHTTPSoftDeletedStoredNameIsUnknown: the name a soft-deleted endpoint
// was stored under (its name, a slash and its id, %2F in a path) reaches
// none of it: every route of an endpoint answers 404 as for an unknown
// name, and PATCH {"name": ...} through it does not bring it back.
func TestHTTPSoftDeletedStoredNameIsUnknown(t *testing.T) {
	h := newHarness(t, nil)
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	base := "/api/projects/1/endpoints/"
	vars := map[string]any{"variables": map[string]any{"country": "US", "from": "2025-04-01", "to": "2025-05-01"}}
	mustStatus(t, http.StatusOK, h.do("POST", base+"daily/run", keyP1, vars))
	gone := h.do("PATCH", base+"daily/", keyP1, map[string]any{"deleted": true})
	mustStatus(t, http.StatusOK, gone)
	id, _ := gone.Body["id"].(string)
	require.NotEqual(t, "", id, "the deleted endpoint has no id: %s", gone.Raw)
	for _, name := range []string{"daily%2F" + id, "daily%2f" + id, "daily"} {
		for _, r := range []struct {
			method, path string
			body         any
		}{
			{"POST", base + name + "/run", vars},
			{"GET", base + name + "/", nil},
			{"GET", base + name + "/logs/", nil},
			{"GET", base + name + "/versions/", nil},
			{"GET", base + name + "/versions/1/", nil},
			{"GET", base + name + "/openapi.json", nil},
			{"GET", base + name + "/materialization_status/", nil},
			{"POST", base + name + "/materialize", nil},
			{"PATCH", base + name + "/", map[string]any{"name": "back"}},
			{"PATCH", base + name + "/", map[string]any{"description": "x"}},
			{"DELETE", base + name + "/", nil},
		} {
			res := h.do(r.method, r.path, keyP1, r.body)
			assert.Equal(t, http.StatusNotFound, res.Status, "%s %s of a soft-deleted endpoint: status %d, want 404: %.200s", r.method, r.path, res.Status, res.Raw)
			if s := res.detail(); res.Status == http.StatusNotFound && !strings.Contains(s, "not found") {
				t.Errorf("%s %s: detail %q, want the unknown endpoint's", r.method, r.path, s)
			}
		}
	}
	mustStatus(t, http.StatusNotFound, h.do("GET", base+"back/", keyP1, nil))
	// Restore still finds it, by its name.
	back := h.do("PATCH", base+"daily/", keyP1, map[string]any{"deleted": false})
	mustStatus(t, http.StatusOK, back)
	if got := back.Body["id"]; got != id {
		t.Errorf("restored id %v, want %s", got, id)
	}
	mustStatus(t, http.StatusOK, h.do("POST", base+"daily/run", keyP1, vars))
}
