package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/stretchr/testify/require"
)

// FuzzKeyRequests: any body to the key routes, and any bearer shaped or
// not like a stored key, is answered with a JSON status below 500; a
// created key holds no more than the body asked for, and an unknown
// secret never authenticates.
func FuzzKeyRequests(f *testing.F) {
	for _, s := range []string{
		`{"name": "ci", "scopes": ["endpoint:read"]}`,
		`{"name": "ci", "scopes": ["endpoint:read", "endpoint:read"], "endpoints": ["a", "a"], "runs_per_minute": -1}`,
		`{"name": " ", "scopes": []}`,
		`{"name": "x", "scopes": ["key:admin"], "endpoints": []}`,
		`{"name": "x", "scopes": ["endpoint:write"], "endpoints": ["1bad"], "materialized_runs_per_hour": -2}`,
		`{"name": "x", "scopes": null, "runs_per_hour": 1e40}`,
		`{"name": "` + strings.Repeat("é", 201) + `", "scopes": ["query:run"]}`,
		`{"name": "x", "scopes": ["endpoint:read"], "key": "ekk_chosen"}`,
		`[]`, `null`, `{`, "{\"name\": \"\xff\"}",
	} {
		f.Add([]byte(s), apikey.Prefix+strings.Repeat("A", 43))
	}
	f.Add([]byte(`{}`), "ekk_short")
	h := newKeysHarness(f, apikey.Config{})
	serve := func(t *testing.T, method, path, bearer string, body []byte) (int, map[string]any, string) {
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.handler.ServeHTTP(rec, req)
		var got map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), "%s %s: %d with a body that is not JSON: %q", method, path, rec.Code, rec.Body)
		return rec.Code, got, rec.Body.String()
	}
	f.Fuzz(func(t *testing.T, body []byte, bearer string) {
		status, got, raw := serve(t, "POST", "/api/projects/1/keys/", keyAdmin, body)
		require.Less(t, status, 500, "POST keys/ %q %s", body, raw)
		if status == http.StatusCreated {
			secret, _ := got["key"].(string)
			require.True(t, apikey.LooksLikeKey(secret), "created key's secret %q from %q", secret, body)
			require.NotContains(t, string(body), secret, "created key's secret %q from %q", secret, body)
			for _, s := range got["scopes"].([]any) {
				require.Contains(t, string(body), s.(string), "scope %v not asked for in %q", s, body)
			}
		}
		if strings.ContainsAny(bearer, " \t\r\n\x00\x7f") || bearer == "" {
			return
		}
		status, _, raw = serve(t, "GET", "/api/projects/1/endpoints/", bearer, nil)
		if status != http.StatusUnauthorized && bearer != keyP1 && bearer != keyP2 && bearer != keyAdmin {
			t.Fatalf("bearer %q: %d %s", bearer, status, raw)
		}
	})
}
