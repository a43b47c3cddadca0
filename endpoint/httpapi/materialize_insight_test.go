package httpapi_test

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"net/http"
	"testing"
)

// TestHTTPMaterializedInsight: a materialized insight endpoint over HTTP:
// breakdown runs read the table and equal the inline endpoint's, date
// variables are refused, and a breakdown is required unless optional.
func TestHTTPMaterializedInsight(t *testing.T) {
	h := newHarness(t, nil)
	base := "/api/projects/1/endpoints/"
	query := rawJSON(t, insightTrends)
	mustStatus(t, http.StatusCreated, h.do("POST", base, keyP1, map[string]any{"name": "inline", "query": query}))
	r := h.do("POST", base, keyP1, map[string]any{"name": "views", "query": query, "is_materialized": true, "optional_breakdown_properties": []string{"country"}})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "optional_breakdown_properties", r.Body["attr"])
	assert.Equal(t, "optional_breakdown_properties: 'country' is not a breakdown property of this query.", r.detail())
	r = h.do("POST", base, keyP1, map[string]any{"name": "views", "query": query, "is_materialized": true})
	mustStatus(t, http.StatusCreated, r)
	assert.Equal(t, "pending", materialization(t, r)["status"])
	mustStatus(t, http.StatusOK, h.do("POST", base+"views/materialize?wait=true", keyP1, nil))

	vars := map[string]any{"variables": map[string]any{"$browser": "Firefox"}}
	got := h.do("POST", base+"views/run", keyP1, vars)
	mustStatus(t, http.StatusOK, got)
	assert.Equal(t, true, got.Body["endpoint_materialized"])
	want := h.do("POST", base+"inline/run", keyP1, vars)
	mustStatus(t, http.StatusOK, want)
	assert.Equal(t, want.Body["results"], got.Body["results"])
	rows, ok := got.Body["results"].([]any)
	require.True(t, ok, "len(got.Body[\"results\"]) = %d, want %d: %v", len(rows), 1, got.Body["results"])
	require.Len(t, rows, 1, "len(got.Body[\"results\"]) = %d, want %d: %v", len(rows), 1, got.Body["results"])

	r = h.do("POST", base+"views/run", keyP1, map[string]any{"variables": map[string]any{"$browser": "Firefox", "date_from": "2025-05-10"}})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "unknown_variable", r.Body["code"])
	assert.Equal(t, "Unknown variable(s): date_from", r.detail())
	r = h.do("POST", base+"views/run", keyP1, map[string]any{"variables": map[string]any{}})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "required_variable_missing", r.Body["code"])
	assert.Equal(t, "Required variable(s) '$browser' not provided", r.detail())

	mustStatus(t, http.StatusOK, h.do("PATCH", base+"views/", keyP1, map[string]any{"optional_breakdown_properties": []string{"$browser"}}))
	got = h.do("POST", base+"views/run", keyP1, map[string]any{"variables": map[string]any{}})
	mustStatus(t, http.StatusOK, got)
	assert.Equal(t, true, got.Body["endpoint_materialized"])
	want = h.do("POST", base+"inline/run", keyP1, map[string]any{"variables": map[string]any{}})
	assert.Equal(t, want.Body["results"], got.Body["results"])
	assert.Equal(t, []any{"$browser"}, h.do("GET", base+"views", keyP1, nil).Body["optional_breakdown_properties"])
}
