package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/stretchr/testify/assert"
)

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
