package main

import (
	"encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"path/filepath"
	"reflect"
	"testing"
)

// TestStoredKeys: over HTTP against the server, an -api-key key creates a
// stored key that runs the endpoint it names and nothing else; the key
// is kept in the -db database across a restart, and its revocation too.
func TestStoredKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "endpointkit.db")
	args := []string{"-db", path, "-api-key", "k", "-demo-events", "500"}
	s := start(t, args, nil)
	base := s.url() + "/api/projects/1"
	call := func(method, path, key string, body any) (int, map[string]any) {
		t.Helper()
		var text string
		if body != nil {
			b, err := json.Marshal(body)
			require.NoError(t, err)
			text = string(b)
		}
		return callJSON(t, method, base+path, key, text)
	}
	for _, name := range []string{"counted", "hidden"} {
		st, body := call("POST", "/endpoints/", "k", map[string]any{"name": name, "query": map[string]any{"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events"}})
		got, want := st, 201
		require.Equal(t, want, got, "%v: st", body)
	}
	st, created := call("POST", "/keys/", "k", map[string]any{"name": "dashboard", "scopes": []string{"endpoint:read"}, "endpoints": []string{"counted"}})
	got, want := st, 201
	require.Equal(t, want, got, "%v: st", created)
	secret, id := created["key"].(string), created["id"].(string)

	st, body := call("POST", "/endpoints/counted/run", secret, map[string]any{})
	if got, want := st, 200; got != want {
		t.Fatalf("%v: st = %v, want %v", body, got, want)
	}
	st, _ = call("POST", "/endpoints/hidden/run", secret, map[string]any{})
	assert.Equal(t, 403, st)
	st, _ = call("DELETE", "/endpoints/counted", secret, nil)
	assert.Equal(t, 403, st)
	st, logs := call("GET", "/endpoints/counted/logs", "k", nil)
	require.Equal(t, 200, st)
	assert.Equal(t, id, logs["results"].([]any)[0].(map[string]any)["key_id"])
	require.NoError(t, s.stop())

	s = start(t, args, nil)
	base = s.url() + "/api/projects/1"
	st, _ = call("POST", "/endpoints/counted/run", secret, map[string]any{})
	if got, want := st, 200; got != want {
		t.Errorf("the key outlives a restart: st = %v, want %v", got, want)
	}
	st, _ = call("DELETE", "/keys/"+id, "k", nil)
	require.Equal(t, 204, st)
	st, body = call("POST", "/endpoints/counted/run", secret, map[string]any{})
	if got, want := st, 401; got != want {
		t.Errorf("%v: st = %v, want %v", body, got, want)
	}
	st, logs = call("GET", "/endpoints/counted/logs", "k", nil)
	require.Equal(t, 200, st)
	if got, want := logs["results"].([]any)[0].(map[string]any)["key_id"], id; !reflect.DeepEqual(got, want) {
		t.Errorf("the run log keeps the key id across a restart: logs[\"results\"].([]any)[0].(map[string]any)[\"key_id\"] = %q, want %q", got, want)
	}
}
