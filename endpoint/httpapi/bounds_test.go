package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
)

// boundedHarness is newHarness over a Service built with cfg's settings.
func boundedHarness(t *testing.T, cfg endpoint.Config) *harness {
	t.Helper()
	events := openEvents(t, demoEvents)
	eps, vars := newStores(t)
	cfg.Endpoints, cfg.Variables, cfg.Executor = eps, vars, newExecutor(events)
	svc, err := endpoint.New(cfg)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	keys := httpapi.NewKeyring()
	if err := keys.Add(keyP1, "1"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	srv := httptest.NewServer(httpapi.New(svc, keys, httpapi.WithLimiter(nil)))
	t.Cleanup(srv.Close)
	return &harness{t: t, server: srv, events: events}
}

// TestHTTPBounds: every limit of a run and of a saved query answers over
// HTTP with its status, its code and a detail that names it.
func TestHTTPBounds(t *testing.T) {
	h := boundedHarness(t, endpoint.Config{RunTimeout: 200 * time.Millisecond, MaxResultBytes: 5000})
	base := "/api/projects/1/endpoints/"
	create := func(name, sqlText string) response {
		return h.do("POST", base, keyP1, map[string]any{"name": name, "query": sqlQuery(sqlText, nil)})
	}
	run := func(name, body string) response { return h.do("POST", base+name+"/run", keyP1, body) }

	// The default row limit is 100.
	mustStatus(t, http.StatusCreated, create("events", "SELECT uuid FROM events ORDER BY uuid"))
	r := run("events", `{}`)
	mustStatus(t, http.StatusOK, r)
	if got, ok := r.Body["results"].([]any); !ok || len(got) != 100 {
		t.Errorf("len(r.Body[\"results\"]) = %d, want %d", len(got), 100)
	}
	if got, want := r.Body["hasMore"], true; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"hasMore\"] = %+v, want %+v", got, want)
	}
	r = run("events", `{"limit": 50001}`)
	mustStatus(t, http.StatusBadRequest, r)
	if got, want := r.detail(), "Limit must be between 0 and 50000, got 50001."; got != want {
		t.Errorf("r.detail() = %q, want %q", got, want)
	}

	// Bytes: 1,000 uuids are about 40 KB, over 5,000 bytes.
	r = run("events", `{"limit": 1000}`)
	mustStatus(t, http.StatusBadRequest, r)
	if got, want := r.Body["code"], endpoint.CodeResultTooLarge; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"code\"] = %q, want %q", got, want)
	}
	if s, sub := r.detail(), "max_result_bytes (5000 bytes)"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}

	// Time: a query without end stops at 200 ms with a 504 naming it.
	mustStatus(t, http.StatusCreated, create("endless", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"))
	start := time.Now()
	r = run("endless", `{}`)
	mustStatus(t, http.StatusGatewayTimeout, r)
	if got, want := r.Body["code"], endpoint.CodeTimeout; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"code\"] = %q, want %q", got, want)
	}
	if got, want := r.detail(), "query timed out: it ran longer than run_timeout (200ms) (request id "+r.Header.Get("X-Request-Id")+")"; got != want {
		t.Errorf("r.detail() = %q, want %q", got, want)
	}
	if a, b := time.Since(start), 3*time.Second; !(a < b) {
		t.Errorf("time.Since(start) = %v, want < %v", a, b)
	}

	// At save: placeholders and length, on create and update.
	many := "SELECT 1 WHERE 'x' IN (" + strings.Repeat("{variables.v}, ", 1001) + "'')"
	r = create("many", many)
	mustStatus(t, http.StatusBadRequest, r)
	if got, want := r.Body["code"], endpoint.CodeQueryTooLarge; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"code\"] = %q, want %q", got, want)
	}
	if got, want := r.detail(), "Query has 1001 placeholders, more than max_placeholders (1000)."; got != want {
		t.Errorf("r.detail() = %q, want %q", got, want)
	}
	long := "SELECT 1 -- " + strings.Repeat("x", 100<<10)
	r = create("long", long)
	mustStatus(t, http.StatusBadRequest, r)
	if got, want := r.detail(), "Query is 102412 bytes long, more than max_query_length (102400 bytes)."; got != want {
		t.Errorf("r.detail() = %q, want %q", got, want)
	}
	r = h.do("PATCH", base+"events/", keyP1, map[string]any{"query": sqlQuery(long, nil)})
	mustStatus(t, http.StatusBadRequest, r)
	if got, want := r.Body["code"], endpoint.CodeQueryTooLarge; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"code\"] = %q, want %q", got, want)
	}
}
