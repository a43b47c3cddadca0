package httpapi_test

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"net/http"
	"strings"
	"testing"
)

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
