package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/stretchr/testify/assert"
)

// A mistake in the query is the author's to read: 400 query_error with
// the engine's message. A failure of the database itself stays a 502
// without the engine's words, and its detail names the request id that
// the server's log holds the cause under.
func TestQueryErrorOverHTTP(t *testing.T) {
	h := newHarness(t, nil)
	// The mistake is refused when the query is saved, with where it is
	// and the column meant; nothing is saved.
	r := h.do("POST", "/api/projects/1/endpoints/", keyP1,
		map[string]any{"name": "typo", "query": map[string]any{"kind": "HogQLQuery", "query": "SELECT evnt FROM events"}})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, endpoint.CodeQueryError, r.Body["code"])
	assert.Equal(t, "The database refused the query: no such column: evnt (line 1, column 8). There is no column evnt in events; did you mean event?", r.detail())
	assert.Equal(t, "query.query", r.Body["attr"])
	mustStatus(t, http.StatusNotFound, h.do("GET", "/api/projects/1/endpoints/typo/", keyP1, nil))
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1,
		map[string]any{"name": "typo", "query": map[string]any{"kind": "HogQLQuery", "query": "SELECT event FROM events"}}))

	h.events.Close()
	r = h.do("POST", "/api/projects/1/endpoints/typo/run", keyP1, map[string]any{})
	mustStatus(t, http.StatusBadGateway, r)
	assert.Equal(t, endpoint.CodeExecutionFailed, r.Body["code"])
	id := r.Header.Get("X-Request-Id")
	v := id
	assert.NotEqual(t, "", v, "id is empty")
	got, want := r.detail(), "query execution failed (request id "+id+")"
	assert.Equal(t, want, got, "r.detail()")
	assert.Contains(t, h.logs.String(), id, "the log names the request id: strings.Contains(h.logs.String(), id) is false")

	// The client's own request id, when it sends one, is the one named.
	req, err := http.NewRequest("POST", h.server.URL+"/api/projects/1/endpoints/typo/run", strings.NewReader(`{}`))
	assert.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyP1)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "trace-42")
	r = h.send(req)
	mustStatus(t, http.StatusBadGateway, r)
	assert.Equal(t, "query execution failed (request id trace-42)", r.detail())
}
