package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stretchr/testify/require"
)

// TestKeysOpenAPI: the key routes' document is valid OpenAPI, and the
// server's real requests and answers (create, list, revoke, a refusal)
// are valid by it.
func TestKeysOpenAPI(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	admin, _ := h.mint("1", map[string]any{"name": "admin", "scopes": []string{"key:admin", "endpoint:read"}})
	r := h.do("GET", "/api/projects/1/keys/openapi.json", admin, nil)
	mustStatus(t, http.StatusOK, r)
	doc, err := openapi3.NewLoader().LoadFromData(r.Raw)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()), "%s", r.Raw)
	router, err := legacy.NewRouter(doc)
	require.NoError(t, err)

	check := func(method, path, body string, wantStatus int) []byte {
		t.Helper()
		req := httptest.NewRequest(method, path, bytes.NewReader([]byte(body)))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		route, params, err := router.FindRoute(req)
		require.NoError(t, err, "%s %s", method, path)
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		if wantStatus < 400 {
			require.NoError(t, openapi3filter.ValidateRequest(context.Background(), in))
		}
		rec := httptest.NewRecorder()
		req = httptest.NewRequest(method, path, bytes.NewReader([]byte(body)))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		h.handler.ServeHTTP(rec, req)
		got, want := rec.Code, wantStatus
		require.Equal(t, want, got, "%s %s: %s: rec.Code", method, path, rec.Body)
		raw, _ := io.ReadAll(rec.Result().Body)
		require.NoError(t, openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: rec.Code, Header: rec.Header(), Body: io.NopCloser(bytes.NewReader(raw)),
		}), "%s %s answered %s", method, path, raw)
		return raw
	}
	check("POST", "/api/projects/1/keys/", `{"name": "ci", "scopes": ["endpoint:read"], "endpoints": ["daily"], "runs_per_minute": 10}`, 201)
	check("POST", "/api/projects/1/keys/", `{"name": "ci", "scopes": ["endpoint:read"]}`, 201)
	check("GET", "/api/projects/1/keys/", "", 200)
	check("POST", "/api/projects/1/keys/", `{"name": "wide", "scopes": ["endpoint:write"]}`, 403)
	check("DELETE", "/api/projects/1/keys/99999999-9999-4999-8999-999999999999", "", 404)
	list := h.do("GET", "/api/projects/1/keys/", admin, nil)
	var id string
	for _, k := range list.Body["results"].([]any) {
		if k := k.(map[string]any); k["name"] == "ci" {
			id = k["id"].(string)
		}
	}
	check("DELETE", "/api/projects/1/keys/"+id, "", 204)
	// A request the document refuses, the server refuses too.
	req := httptest.NewRequest("POST", "/api/projects/1/keys/", bytes.NewReader([]byte(`{"name": "x", "scopes": ["endpoint:delete"]}`)))
	req.Header.Set("Content-Type", "application/json")
	route, params, err := router.FindRoute(req)
	require.NoError(t, err)
	require.Error(t, openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}))
	mustStatus(t, http.StatusBadRequest, h.do("POST", "/api/projects/1/keys/", admin, map[string]any{"name": "x", "scopes": []string{"endpoint:delete"}}))
}
