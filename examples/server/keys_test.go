package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoredKeys: over HTTP against the server, an -api-key key creates a
// stored key that runs the endpoint it names and nothing else; the key
// is kept in the -db database across a restart, and its revocation too.
func TestStoredKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "endpointkit.db")
	args := []string{"-db", path, "-api-key", "k", "-demo-events", "500"}
	s := start(t, args, nil)
	base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(s.out.String())[1] + "/api/projects/1"
	call := func(method, path, key string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			require.NoError(t, err)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, base+path, rd)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	for _, name := range []string{"counted", "hidden"} {
		st, body := call("POST", "/endpoints/", "k", map[string]any{"name": name, "query": map[string]any{"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events"}})
		require.Equal(t, 201, st, "%v", body)
	}
	st, created := call("POST", "/keys/", "k", map[string]any{"name": "dashboard", "scopes": []string{"endpoint:read"}, "endpoints": []string{"counted"}})
	require.Equal(t, 201, st, "%v", created)
	secret, id := created["key"].(string), created["id"].(string)

	st, body := call("POST", "/endpoints/counted/run", secret, map[string]any{})
	require.Equal(t, 200, st, "%v", body)
	st, _ = call("POST", "/endpoints/hidden/run", secret, map[string]any{})
	assert.Equal(t, 403, st)
	st, _ = call("DELETE", "/endpoints/counted", secret, nil)
	assert.Equal(t, 403, st)
	st, logs := call("GET", "/endpoints/counted/logs", "k", nil)
	require.Equal(t, 200, st)
	assert.Equal(t, id, logs["results"].([]any)[0].(map[string]any)["key_id"])
	require.NoError(t, s.stop())

	s = start(t, args, nil)
	base = regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(s.out.String())[1] + "/api/projects/1"
	st, _ = call("POST", "/endpoints/counted/run", secret, map[string]any{})
	assert.Equal(t, 200, st, "the key outlives a restart")
	st, _ = call("DELETE", "/keys/"+id, "k", nil)
	require.Equal(t, 204, st)
	st, body = call("POST", "/endpoints/counted/run", secret, map[string]any{})
	assert.Equal(t, 401, st, "%v", body)
	st, logs = call("GET", "/endpoints/counted/logs", "k", nil)
	require.Equal(t, 200, st)
	assert.Equal(t, id, logs["results"].([]any)[0].(map[string]any)["key_id"], "the run log keeps the key id across a restart")
}
