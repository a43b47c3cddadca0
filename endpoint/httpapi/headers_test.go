package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSONHeadersAreTheResponses: the Content-Type and
// X-Content-Type-Options values of a JSON answer (a run's, an error's, a
// read's) are its own, so that a host's middleware that changes one in
// place after the handler changes no later response's.
func TestJSONHeadersAreTheResponses(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	for _, c := range []struct{ name, method, path, body string }{
		{"run", "POST", "/api/projects/1/endpoints/in_range/run", `{"variables": {"from": "2025-05-01", "to": "2025-05-08"}}`},
		{"error", "POST", "/api/projects/1/endpoints/missing/run", `{}`},
		{"read", "GET", "/api/projects/1/endpoints/in_range", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			send := func() http.Header {
				req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
				req.Header.Set("Authorization", "Bearer "+keyP1)
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.handler.ServeHTTP(rec, req)
				// The map the handler wrote to, not the recorder's
				// snapshot of it.
				return rec.Header()
			}
			first := send()
			require.Equal(t, []string{"application/json"}, first["Content-Type"])
			require.Equal(t, []string{"nosniff"}, first["X-Content-Type-Options"])
			first["Content-Type"][0] = "text/html"
			first["X-Content-Type-Options"][0] = ""
			first["Content-Type"] = append(first["Content-Type"], "text/plain")
			second := send()
			assert.Equal(t, []string{"application/json"}, second["Content-Type"])
			assert.Equal(t, []string{"nosniff"}, second["X-Content-Type-Options"])
		})
	}
}
