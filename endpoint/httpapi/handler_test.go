package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllowHeader(t *testing.T) {
	h := newHarness(t, nil)
	cases := []struct{ method, path, allow string }{
		{"PUT", "/api/projects/1/endpoints/", "GET, HEAD, POST"},
		{"PUT", "/api/projects/1/endpoints/x", "GET, HEAD, PATCH, DELETE"},
		{"GET", "/api/projects/1/endpoints/x/run", "POST"},
		{"POST", "/api/projects/1/insight_variables/" + idFrom + "/", "GET, HEAD, PATCH, DELETE"},
	}
	for _, c := range cases {
		r := h.do(c.method, c.path, keyP1, nil)
		mustStatus(t, http.StatusMethodNotAllowed, r)
		got, want := r.Header.Get("Allow"), c.allow
		assert.Equal(t, want, got, "%s %s: r.Header.Get(\"Allow\")", c.method, c.path)
	}
}

func TestNewPanicsOnNil(t *testing.T) {
	svc := newService(t, newExecutor(openEvents(t, 1)))
	assert.True(t, panics(func() { httpapi.New(nil, httpapi.NewKeyring()) }), "httpapi.New(nil, keyring) did not panic")
	assert.True(t, panics(func() { httpapi.New(svc, nil) }), "httpapi.New(svc, nil) did not panic")
}

// panics reports whether f panics.
func panics(f func()) (did bool) {
	defer func() {
		if recover() != nil {
			did = true
		}
	}()
	f()
	return false
}

// serve answers one request through h.
func serve(t *testing.T, h http.Handler, method, path, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Authorization", "Bearer "+keyP1)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return decodeResponse(t, rec.Code, rec.Header(), rec.Body.Bytes())
}

func newKeys(t *testing.T) *httpapi.Keyring {
	t.Helper()
	keys := httpapi.NewKeyring()
	require.NoError(t, keys.Add(keyP1, "1"))
	return keys
}

func TestWithPrefix(t *testing.T) {
	svc := newService(t, newExecutor(openEvents(t, 10)))
	h := httpapi.New(svc, newKeys(t), httpapi.WithPrefix("/analytics/"))
	r := serve(t, h, "POST", "/analytics/api/projects/1/endpoints", `{"name": "one", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`)
	mustStatus(t, http.StatusCreated, r)
	assert.Equal(t, "/analytics/api/projects/1/endpoints/one/run", r.Body["endpoint_path"])
	mustStatus(t, http.StatusOK, serve(t, h, "POST", "/analytics/api/projects/1/endpoints/one/run/", ""))
	r = serve(t, h, "GET", "/api/projects/1/endpoints/", "")
	mustStatus(t, http.StatusNotFound, r)
	checkErrorBody(t, r)
	mustStatus(t, http.StatusMethodNotAllowed, serve(t, h, "PUT", "/analytics/api/projects/1/endpoints/one", "{}"))
}

func TestWithMaxBodyBytes(t *testing.T) {
	svc := newService(t, newExecutor(openEvents(t, 10)))
	h := httpapi.New(svc, newKeys(t), httpapi.WithMaxBodyBytes(64))
	body := `{"name": "one", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`
	a, b := len(body), 64
	require.True(t, (a > b), "len(body) = %v, want > %v", a, b)
	r := serve(t, h, "POST", "/api/projects/1/endpoints/", body)
	mustStatus(t, http.StatusRequestEntityTooLarge, r)
	assert.Contains(t, r.detail(), "the limit is 64 bytes")
	mustStatus(t, http.StatusCreated, serve(t, httpapi.New(svc, newKeys(t), httpapi.WithMaxBodyBytes(0)), "POST", "/api/projects/1/endpoints/", body))
}

func TestHead(t *testing.T) {
	svc := newService(t, newExecutor(openEvents(t, 10)))
	h := httpapi.New(svc, newKeys(t))
	req := httptest.NewRequest("HEAD", "/api/projects/1/endpoints/", nil)
	req.Header.Set("Authorization", "Bearer "+keyP1)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code)
}
