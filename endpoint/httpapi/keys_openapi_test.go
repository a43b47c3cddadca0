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
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("%s: unexpected error: %v", r.Raw, err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	check := func(method, path, body string, wantStatus int) []byte {
		t.Helper()
		req := httptest.NewRequest(method, path, bytes.NewReader([]byte(body)))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Fatalf("%s %s: unexpected error: %v", method, path, err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		if wantStatus < 400 {
			if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
		}
		rec := httptest.NewRecorder()
		req = httptest.NewRequest(method, path, bytes.NewReader([]byte(body)))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		h.handler.ServeHTTP(rec, req)
		if got, want := rec.Code, wantStatus; got != want {
			t.Fatalf("%s %s: %s: rec.Code = %v, want %v", method, path, rec.Body, got, want)
		}
		raw, _ := io.ReadAll(rec.Result().Body)
		if err := (openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: rec.Code, Header: rec.Header(), Body: io.NopCloser(bytes.NewReader(raw)),
		})); err != nil {
			t.Fatalf("%s %s answered %s: unexpected error: %v", method, path, raw, err)
		}
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
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := (openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}})); err == nil {
		t.Fatalf("got no error, want one")
	}
	mustStatus(t, http.StatusBadRequest, h.do("POST", "/api/projects/1/keys/", admin, map[string]any{"name": "x", "scopes": []string{"endpoint:delete"}}))
}
