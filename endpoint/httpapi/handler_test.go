package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/httpapi"
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
		if got, want := r.Header.Get("Allow"), c.allow; got != want {
			t.Errorf("%s %s: r.Header.Get(\"Allow\") = %q, want %q", c.method, c.path, got, want)
		}
	}
}

func TestNewPanicsOnNil(t *testing.T) {
	svc := newService(t, newExecutor(openEvents(t, 1)))
	if !panics(func() { httpapi.New(nil, httpapi.NewKeyring()) }) {
		t.Errorf("httpapi.New(nil, keyring) did not panic")
	}
	if !panics(func() { httpapi.New(svc, nil) }) {
		t.Errorf("httpapi.New(svc, nil) did not panic")
	}
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
	if err := keys.Add(keyP1, "1"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	return keys
}

func TestWithPrefix(t *testing.T) {
	svc := newService(t, newExecutor(openEvents(t, 10)))
	h := httpapi.New(svc, newKeys(t), httpapi.WithPrefix("/analytics/"))
	r := serve(t, h, "POST", "/analytics/api/projects/1/endpoints", `{"name": "one", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`)
	mustStatus(t, http.StatusCreated, r)
	if got, want := r.Body["endpoint_path"], "/analytics/api/projects/1/endpoints/one/run"; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"endpoint_path\"] = %q, want %q", got, want)
	}
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
	if a, b := len(body), 64; !(a > b) {
		t.Fatalf("len(body) = %v, want > %v", a, b)
	}
	r := serve(t, h, "POST", "/api/projects/1/endpoints/", body)
	mustStatus(t, http.StatusRequestEntityTooLarge, r)
	if s, sub := r.detail(), "the limit is 64 bytes"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
	mustStatus(t, http.StatusCreated, serve(t, httpapi.New(svc, newKeys(t), httpapi.WithMaxBodyBytes(0)), "POST", "/api/projects/1/endpoints/", body))
}

func TestHead(t *testing.T) {
	svc := newService(t, newExecutor(openEvents(t, 10)))
	h := httpapi.New(svc, newKeys(t))
	req := httptest.NewRequest("HEAD", "/api/projects/1/endpoints/", nil)
	req.Header.Set("Authorization", "Bearer "+keyP1)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if got, want := rec.Code, http.StatusOK; got != want {
		t.Errorf("rec.Code = %v, want %v", got, want)
	}
}
