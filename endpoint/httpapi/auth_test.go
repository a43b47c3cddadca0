package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMalformedAuthorization(t *testing.T) {
	h := newHarness(t, nil)
	for _, header := range []string{"Basic a2V5OnB3", "Bearer", "Bearer ", "Bearer a b", keyP1, "Token " + keyP1} {
		req, err := http.NewRequest("GET", h.server.URL+"/api/projects/1/endpoints/", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", header)
		r := h.send(req)
		mustStatus(t, http.StatusUnauthorized, r)
		assert.Contains(t, r.detail(), "Authorization", "header %q", header)
		assert.Contains(t, r.Header.Get("WWW-Authenticate"), `error="invalid_token"`)
	}
	// Scheme names are case-insensitive (RFC 9110).
	req, err := http.NewRequest("GET", h.server.URL+"/api/projects/1/endpoints/", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "bearer "+keyP1)
	mustStatus(t, http.StatusOK, h.send(req))
	// Two Authorization headers are ambiguous: refused.
	req.Header.Add("Authorization", "Bearer "+keyAdmin)
	mustStatus(t, http.StatusUnauthorized, h.send(req))
}

// authFunc adapts a function to Authenticator.
type authFunc func(ctx context.Context, key, project string) error

func (f authFunc) Authorize(ctx context.Context, key, project string) error {
	return f(ctx, key, project)
}

// serveWith answers one GET of the endpoint list through a handler whose
// Authenticator is auth, and returns the answer and what was logged.
func serveWith(t *testing.T, auth httpapi.Authenticator) (response, string) {
	t.Helper()
	logs := &bytes.Buffer{}
	h := httpapi.New(newService(t, newExecutor(openEvents(t, 10))), auth,
		httpapi.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	req := httptest.NewRequest("GET", "/api/projects/1/endpoints/", nil)
	req.Header.Set("Authorization", "Bearer k")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return decodeResponse(t, rec.Code, rec.Header(), rec.Body.Bytes()), logs.String()
}

func TestAuthenticatorErrors(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"wrapped unauthorized", fmt.Errorf("revoked key k: %w", endpoint.ErrUnauthorized), 401, "unauthorized"},
		{"wrapped forbidden", fmt.Errorf("no: %w", endpoint.ErrForbidden), 403, "forbidden"},
		{"unknown project", fmt.Errorf("no project: %w", endpoint.ErrNotFound), 404, "not_found"},
		{"own *Error", endpoint.NewError(endpoint.ErrForbidden, "suspended", "", "This key is suspended."), 403, "suspended"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, logs := serveWith(t, authFunc(func(context.Context, string, string) error { return c.err }))
			require.Equal(t, c.status, r.Status)
			checkErrorBody(t, r)
			assert.Equal(t, c.code, r.Body["code"])
			assert.NotContains(t, r.detail(), "revoked key", "a sentinel-wrapping message is not shown")
			v := logs
			assert.True(t, (v == ""), "logs = %v, want it empty", v)
			if c.status == 401 {
				assert.Contains(t, r.Header.Get("WWW-Authenticate"), `error="invalid_token"`)
			}
		})
	}
}

// TestEveryRouteNeedsAKey: no route, in either slash form, answers anything
// but 401 without a key, or 403 with a key of another project.
func TestEveryRouteNeedsAKey(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	routes := []struct{ method, path string }{
		{"POST", "/api/projects/1/insight_variables"},
		{"GET", "/api/projects/1/insight_variables"},
		{"GET", "/api/projects/1/insight_variables/" + idFrom},
		{"PATCH", "/api/projects/1/insight_variables/" + idFrom},
		{"DELETE", "/api/projects/1/insight_variables/" + idFrom},
		{"POST", "/api/projects/1/endpoints"},
		{"GET", "/api/projects/1/endpoints"},
		{"GET", "/api/projects/1/endpoints/in_range"},
		{"PATCH", "/api/projects/1/endpoints/in_range"},
		{"DELETE", "/api/projects/1/endpoints/in_range"},
		{"POST", "/api/projects/1/endpoints/in_range/run"},
		{"POST", "/api/projects/1/endpoints/in_range/materialize"},
	}
	for _, rt := range routes {
		for _, path := range []string{rt.path, rt.path + "/"} {
			r := h.do(rt.method, path, "", `{"variables": {}}`)
			mustStatus(t, http.StatusUnauthorized, r)
			assert.Equal(t, "unauthorized", r.Body["code"])
			r = h.do(rt.method, path, keyP2, `{"variables": {}}`)
			mustStatus(t, http.StatusForbidden, r)
		}
	}
	// Nothing was changed or deleted on the way.
	r := h.do("GET", "/api/projects/1/endpoints/in_range", keyP1, nil)
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, json.Number("1"), r.Body["current_version"])
	mustStatus(t, http.StatusOK, h.do("GET", "/api/projects/1/insight_variables/"+idFrom, keyP1, nil))
}
