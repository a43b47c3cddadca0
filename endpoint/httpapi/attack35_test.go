package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/stretchr/testify/require"
)

// TestRefusedSaveCostsNothing: a save refused for its record or its
// request (a restore of nothing, a create of a name taken, a query that
// does not compile) is refused before the caller's budget is charged, as
// a refused run is: a key whose budgets are 1 can still refresh after it.
func TestRefusedSaveCostsNothing(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	vars := map[string]string{idFrom: "from", idTo: "to", idCountry: "country"}
	cases := []struct {
		name   string
		method string
		path   string
		body   map[string]any
		status int
	}{
		{"a restore of an endpoint never deleted", "PATCH", "/api/projects/1/endpoints/nothing", map[string]any{"deleted": false}, http.StatusNotFound},
		{"a restore of a live endpoint", "PATCH", "/api/projects/1/endpoints/inline", map[string]any{"deleted": false}, http.StatusOK},
		{"a restore with another field", "PATCH", "/api/projects/1/endpoints/daily", map[string]any{"deleted": false, "description": "x"}, http.StatusBadRequest},
		{"a materialized create without a query", "POST", "/api/projects/1/endpoints/", map[string]any{"name": "daily4", "is_materialized": true}, http.StatusBadRequest},
		{"a new query with a name taken", "PATCH", "/api/projects/1/endpoints/daily", map[string]any{"query": sqlQuery(dailyV2SQL, vars), "name": "inline"}, http.StatusConflict},
		{"a new query with a bad freshness", "PATCH", "/api/projects/1/endpoints/daily", map[string]any{"query": sqlQuery(dailyV2SQL, vars), "data_freshness_seconds": -5}, http.StatusBadRequest},
		{"a materialized create of a name taken", "POST", "/api/projects/1/endpoints/", map[string]any{"name": "daily", "query": sqlQuery(dailySQL, vars), "is_materialized": true}, http.StatusConflict},
	}
	// A restore of an endpoint that is not materialized starts no
	// refresh, so it costs nothing either.
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{"name": "spare", "query": sqlQuery(dailySQL, vars)}))
	mustStatus(t, http.StatusOK, h.do("PATCH", "/api/projects/1/endpoints/spare", keyP1, map[string]any{"deleted": true}))
	cases = append(cases, struct {
		name   string
		method string
		path   string
		body   map[string]any
		status int
	}{"a restore of an endpoint not materialized", "PATCH", "/api/projects/1/endpoints/spare", map[string]any{"deleted": false}, http.StatusOK})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			secret, _ := h.mint("1", map[string]any{"name": "k", "scopes": []string{"endpoint:write", "endpoint:read"},
				"runs_per_minute": 1, "materialized_runs_per_minute": 1})
			r := h.do(c.method, c.path, secret, c.body)
			require.Equal(t, c.status, r.Status, "%s", r.Raw)
			r = h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", secret, map[string]any{})
			require.Equal(t, http.StatusOK, r.Status, "the refused save was charged: %s", r.Raw)
		})
	}
}

// TestRefusedQueryCostsNothing: a query refused for its request before
// it is compiled (no query, a bad limit, variables by name on a SQL
// query) is refused before the key's budget is charged.
func TestRefusedQueryCostsNothing(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	sql := sqlQuery("SELECT 1 AS one", nil)
	for _, c := range []struct {
		name string
		body map[string]any
	}{
		{"no query", map[string]any{}},
		{"a negative limit", map[string]any{"query": sql, "limit": -1}},
		{"variables by name on a SQL query", map[string]any{"query": sql, "variables": map[string]any{"x": 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			secret, _ := h.mint("1", map[string]any{"name": "q", "scopes": []string{"query:run"}, "runs_per_minute": 1})
			r := h.do("POST", "/api/projects/1/query/", secret, c.body)
			require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Raw)
			r = h.do("POST", "/api/projects/1/query/", secret, map[string]any{"query": sql})
			require.Equal(t, http.StatusOK, r.Status, "the refused query was charged: %s", r.Raw)
		})
	}
}

// TestInsightRowsFormatCostsNothing: an insight endpoint asked for in a
// format of rows (CSV, NDJSON) is refused before it runs and before the
// key's budget is charged: it was computed, charged, then answered 400.
func TestInsightRowsFormatCostsNothing(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{
		"name": "trend", "query": map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "$pageview"}}}}))
	for _, f := range []string{"csv", "ndjson"} {
		t.Run(f, func(t *testing.T) {
			secret, _ := h.mint("1", map[string]any{"name": "r", "scopes": []string{"endpoint:read"}, "runs_per_minute": 1})
			r := h.do("POST", "/api/projects/1/endpoints/trend/run", secret, map[string]any{"format": f})
			require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Raw)
			require.Contains(t, r.detail(), "Format '"+f+"' answers rows")
			r = h.do("POST", "/api/projects/1/endpoints/trend/run", secret, map[string]any{})
			require.Equal(t, http.StatusOK, r.Status, "the refused run was charged: %s", r.Raw)
		})
	}
}
