package httpapi_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	query := rawJSON(t, insightLifecycle)
	r := h.do("POST", base, keyP1, map[string]any{"name": "inline", "query": query})
	mustStatus(t, http.StatusCreated, r)
	if got, want := r.Body["query"], query; !reflect.DeepEqual(got, want) {
		t.Errorf("the query reads back as saved: r.Body[\"query\"] = %+v, want %+v", got, want)
	}

	r = h.do("POST", base+"inline/run", keyP1, map[string]any{"variables": map[string]any{}, "debug": true})
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
