package mcp_test

import (
	"github.com/stretchr/testify/require"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzHandler sends /mcp any credential, project and body: it never
// panics or answers 5xx, and a refusal before the transport is the API's
// JSON error body.
func FuzzHandler(f *testing.F) {
	fx := newFixture(f)
	for _, s := range []struct{ auth, project, body string }{
		{"Bearer " + fx.env.Key, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"by_event","arguments":{"variables":{"event":"purchase"}}}}`},
		{"Bearer " + fx.env.Key, "2", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{"Bearer eyJhbGciOiJIUzI1NiJ9.eyJwcm9qZWN0IjoiMSJ9.x", "", `{}`},
		{"Bearer eyJ..", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"_run_query","arguments":{"query":{"kind":"HogQLQuery","query":"SELECT 1"}}}}`},
		{"Basic x", "1", `[`},
		{"", "", ``},
	} {
		f.Add(s.auth, s.project, s.body)
	}
	f.Fuzz(func(t *testing.T, auth, project, body string) {
		req := httptest.NewRequest("POST", "/mcp?project="+url.QueryEscape(project), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header["Authorization"] = []string{auth}
		}
		w := httptest.NewRecorder()
		fx.mcp.Config.Handler.ServeHTTP(w, req)
		require.Less(t, w.Code, 500, "status for %q %q %q: %s", auth, project, body, w.Body)
		if w.Code == http.StatusUnauthorized || w.Code == http.StatusForbidden {
			require.Contains(t, w.Body.String(), `"detail"`, "refusal without the API's body: %s", w.Body)
		}
	})
}
