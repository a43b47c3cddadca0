package httpapi_test

import (
	"net/http"
	"reflect"
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
	if got, want := r.Body["attr"], "optional_breakdown_properties"; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"attr\"] = %q, want %q", got, want)
	}
	if got, want := r.detail(), "optional_breakdown_properties: 'country' is not a breakdown property of this query."; got != want {
		t.Errorf("r.detail() = %q, want %q", got, want)
	}
	r = h.do("POST", base, keyP1, map[string]any{"name": "views", "query": query, "is_materialized": true})
	mustStatus(t, http.StatusCreated, r)
	if got, want := materialization(t, r)["status"], "pending"; !reflect.DeepEqual(got, want) {
		t.Errorf("materialization(t, r)[\"status\"] = %q, want %q", got, want)
	}
	mustStatus(t, http.StatusOK, h.do("POST", base+"views/materialize?wait=true", keyP1, nil))

	vars := map[string]any{"variables": map[string]any{"$browser": "Firefox"}}
	got := h.do("POST", base+"views/run", keyP1, vars)
	mustStatus(t, http.StatusOK, got)
	if got, want := got.Body["endpoint_materialized"], true; !reflect.DeepEqual(got, want) {
		t.Errorf("got.Body[\"endpoint_materialized\"] = %+v, want %+v", got, want)
	}
	want := h.do("POST", base+"inline/run", keyP1, vars)
	mustStatus(t, http.StatusOK, want)
	if got, want := got.Body["results"], want.Body["results"]; !reflect.DeepEqual(got, want) {
		t.Errorf("got.Body[\"results\"] = %+v, want %+v", got, want)
	}
	if rows, ok := got.Body["results"].([]any); !ok || len(rows) != 1 {
		t.Fatalf("len(got.Body[\"results\"]) = %d, want %d: %v", len(rows), 1, got.Body["results"])
	}

	r = h.do("POST", base+"views/run", keyP1, map[string]any{"variables": map[string]any{"$browser": "Firefox", "date_from": "2025-05-10"}})
	mustStatus(t, http.StatusBadRequest, r)
	if got, want := r.Body["code"], "unknown_variable"; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"code\"] = %q, want %q", got, want)
	}
	if got, want := r.detail(), "Unknown variable(s): date_from"; got != want {
		t.Errorf("r.detail() = %q, want %q", got, want)
	}
	r = h.do("POST", base+"views/run", keyP1, map[string]any{"variables": map[string]any{}})
	mustStatus(t, http.StatusBadRequest, r)
	if got, want := r.Body["code"], "required_variable_missing"; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"code\"] = %q, want %q", got, want)
	}
	if got, want := r.detail(), "Required variable(s) '$browser' not provided"; got != want {
		t.Errorf("r.detail() = %q, want %q", got, want)
	}

	mustStatus(t, http.StatusOK, h.do("PATCH", base+"views/", keyP1, map[string]any{"optional_breakdown_properties": []string{"$browser"}}))
	got = h.do("POST", base+"views/run", keyP1, map[string]any{"variables": map[string]any{}})
	mustStatus(t, http.StatusOK, got)
	if got, want := got.Body["endpoint_materialized"], true; !reflect.DeepEqual(got, want) {
		t.Errorf("got.Body[\"endpoint_materialized\"] = %+v, want %+v", got, want)
	}
	want = h.do("POST", base+"inline/run", keyP1, map[string]any{"variables": map[string]any{}})
	if got, want := got.Body["results"], want.Body["results"]; !reflect.DeepEqual(got, want) {
		t.Errorf("got.Body[\"results\"] = %+v, want %+v", got, want)
	}
	if got, want := h.do("GET", base+"views", keyP1, nil).Body["optional_breakdown_properties"], ([]any{"$browser"}); !reflect.DeepEqual(got, want) {
		t.Errorf("got = %+v, want %+v", got, want)
	}
}
