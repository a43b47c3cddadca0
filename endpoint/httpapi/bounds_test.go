package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boundedHarness is newHarness over a Service built with cfg's settings.
func boundedHarness(t *testing.T, cfg endpoint.Config) *harness {
	t.Helper()
	events := openEvents(t, demoEvents)
	eps, vars := newStores(t)
	cfg.Endpoints, cfg.Variables, cfg.Executor = eps, vars, newExecutor(events)
	svc, err := endpoint.New(cfg)
	require.NoError(t, err)
	keys := httpapi.NewKeyring()
	require.NoError(t, keys.Add(keyP1, "1"))
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
	got, ok := r.Body["results"].([]any)
	if assert.True(t, ok, "len(r.Body[\"results\"]) = %d, want %d", len(got), 100) {
		assert.Len(t, got, 100, "len(r.Body[\"results\"]) = %d, want %d", len(got), 100)
	}
	assert.Equal(t, true, r.Body["hasMore"])
	r = run("events", `{"limit": 50001}`)
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "Limit must be between 0 and 50000, got 50001.", r.detail())

	// Bytes: 1,000 uuids are about 40 KB, over 5,000 bytes.
	r = run("events", `{"limit": 1000}`)
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, endpoint.CodeResultTooLarge, r.Body["code"])
	assert.Contains(t, r.detail(), "max_result_bytes (5000 bytes)")

	// Time: a query without end stops at 200 ms with a 504 naming it.
	mustStatus(t, http.StatusCreated, create("endless", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"))
	start := time.Now()
	r = run("endless", `{}`)
	mustStatus(t, http.StatusGatewayTimeout, r)
	assert.Equal(t, endpoint.CodeTimeout, r.Body["code"])
	if got, want := r.detail(), "query timed out: it ran longer than run_timeout (200ms) (request id "+r.Header.Get("X-Request-Id")+")"; got != want {
		t.Errorf("r.detail() = %q, want %q", got, want)
	}
	a, b := time.Since(start), 3*time.Second
	assert.True(t, (a < b), "time.Since(start) = %v, want < %v", a, b)

	// At save: placeholders and length, on create and update.
	many := "SELECT 1 WHERE 'x' IN (" + strings.Repeat("{variables.v}, ", 1001) + "'')"
	r = create("many", many)
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, endpoint.CodeQueryTooLarge, r.Body["code"])
	assert.Equal(t, "Query has 1001 placeholders, more than max_placeholders (1000).", r.detail())
	long := "SELECT 1 -- " + strings.Repeat("x", 100<<10)
	r = create("long", long)
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "Query is 102412 bytes long, more than max_query_length (102400 bytes).", r.detail())
	r = h.do("PATCH", base+"events/", keyP1, map[string]any{"query": sqlQuery(long, nil)})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, endpoint.CodeQueryTooLarge, r.Body["code"])
}
