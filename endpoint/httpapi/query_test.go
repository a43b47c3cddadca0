package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queryBody is the JSON of POST query/ for a HogQLQuery whose variables,
// by id, carry the test values of values (an id absent from values is
// referenced without a value).
func queryBody(sqlText string, codes map[string]string, values map[string]any) map[string]any {
	vars := map[string]any{}
	for id, code := range codes {
		ref := map[string]any{"variableId": id, "code_name": code}
		if v, ok := values[id]; ok {
			ref["value"] = v
		}
		vars[id] = ref
	}
	return map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": sqlText, "variables": vars}}
}

const countByEvent = "SELECT count(*) AS n FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to}"

// TestQueryRoute: POST query/ runs an unsaved query with test values and
// defaults, and answers rows, columns, types, placeholders, the values
// that ran and the materialization verdict; the rows are those of the same
// query saved and run.
func TestQueryRoute(t *testing.T) {
	h := newHarness(t, nil)
	base := "/api/projects/1"
	mustStatus(t, http.StatusCreated, h.do("POST", base+"/insight_variables/", keyP1,
		map[string]any{"id": idEvent, "name": "Event", "type": "String", "default_value": "purchase"}))
	mustStatus(t, http.StatusCreated, h.do("POST", base+"/insight_variables/", keyP1, dateVar(idFrom, "From")))
	mustStatus(t, http.StatusCreated, h.do("POST", base+"/insight_variables/", keyP1, dateVar(idTo, "To")))
	codes := map[string]string{idEvent: "event", idFrom: "from", idTo: "to"}
	r := h.do("POST", base+"/query/", keyP1, queryBody(countByEvent, codes, map[string]any{idFrom: "2025-04-01", idTo: "2025-05-01"}))
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, []any{"event", "from", "to"}, r.Body["placeholders"])
	assert.Equal(t, []any{"n"}, r.Body["columns"])
	got, ok := r.Body["types"].([]any)
	if assert.True(t, ok, "len(r.Body[\"types\"]) = %d, want %d: %v", len(got), 1, r.Body["types"]) {
		assert.Len(t, got, 1, "len(r.Body[\"types\"]) = %d, want %d: %v", len(got), 1, r.Body["types"])
	}
	assert.Equal(t, false, r.Body["hasMore"])
	verdict := r.Body["materialization"].(map[string]any)
	assert.Equal(t, true, verdict["can_materialize"])
	assert.Equal(t, []any{}, verdict["reasons"])
	vars := r.Body["variables"].([]any)
	require.Len(t, vars, 3)
	assert.Equal(t, map[string]any{"id": idEvent, "name": "Event", "code_name": "event", "type": "String", "value": "purchase", "source": "default"}, vars[0])
	assert.Equal(t, "test", vars[1].(map[string]any)["source"])

	// The same query saved and run with the same values gives the same rows.
	mustStatus(t, http.StatusCreated, h.do("POST", base+"/endpoints/", keyP1, map[string]any{"name": "count_by_event", "query": sqlQuery(countByEvent, codes)}))
	run := h.do("POST", base+"/endpoints/count_by_event/run/", keyP1, map[string]any{"variables": map[string]any{"event": "purchase", "from": "2025-04-01", "to": "2025-05-01"}})
	mustStatus(t, http.StatusOK, run)
	assert.Equal(t, run.Body["results"], r.Body["results"])
	n, err := r.Body["results"].([]any)[0].([]any)[0].(json.Number).Int64()
	require.NoError(t, err)
	v := n
	assert.Greater(t, v, int64(0), "the comparison is of a real count: n")

	// Refusals, in the words of a save and a run.
	for _, tc := range []struct {
		name         string
		body         any
		status       int
		detail, attr string
	}{
		{"undefined variable", queryBody(countByEvent+" AND distinct_id = {variables.user}", codes, nil), 400, "Query references undefined variable(s): user", "query"},
		{"bad value", queryBody(countByEvent, codes, map[string]any{idFrom: "last tuesday", idTo: "2025-05-01"}), 400,
			"Invalid value for variable 'from': expected Date, got \"last tuesday\": not a date; want YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, an RFC 3339 date-time, or a relative date such as -7d, -2w, -1m, -1y, -24h, mStart or -1mStart",
			"query.variables." + idFrom + ".value"},
		{"no value and no default", queryBody(countByEvent, codes, map[string]any{idFrom: "2025-04-01"}), 400,
			"Required variable(s) 'to' not provided: give each a test value, or the variable a default value.", "query.variables." + idTo + ".value"},
		{"unknown key", `{"query": {"kind": "HogQLQuery", "query": "SELECT 1"}, "refresh": "force"}`, 400, "Unknown field(s): refresh", "refresh"},
		{"duplicate key", `{"query": {"kind": "HogQLQuery", "query": "SELECT 1", "query": "SELECT 2"}}`, 400, "", ""},
		{"no query", `{}`, 400, "This field is required.", "query"},
		{"a second statement", queryBody("SELECT 1; DROP TABLE events", nil, nil), 400,
			"Invalid query at line 1, column 9: an endpoint runs a single statement; remove the ';' and what follows it.", "query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", base+"/query/", keyP1, tc.body)
			mustStatus(t, tc.status, r)
			checkErrorBody(t, r)
			if tc.detail != "" {
				got, want := r.detail(), tc.detail
				assert.Equal(t, want, got, "r.detail()")
				assert.Equal(t, tc.attr, r.Body["attr"])
			}
		})
	}

	// Keys of the project only; a query saves nothing.
	mustStatus(t, http.StatusForbidden, h.do("POST", "/api/projects/2/query/", keyP1, queryBody("SELECT 1", nil, nil)))
	mustStatus(t, http.StatusUnauthorized, h.do("POST", base+"/query/", "", queryBody("SELECT 1", nil, nil)))
	list := h.do("GET", base+"/endpoints/", keyP1, nil)
	if got, ok := list.Body["results"].([]any); !ok || len(got) != 1 {
		t.Errorf("len(list.Body[\"results\"]) = %d, want %d: %v", len(got), 1, list.Body["results"])
	}
}

// TestQueryRouteInsight: a TrendsQuery runs unsaved with its variables by
// name, and answers its series.
func TestQueryRouteInsight(t *testing.T) {
	h := newHarness(t, nil)
	body := `{"query": {"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "interval": "week",
		"dateRange": {"date_from": "2025-03-01", "date_to": "2025-05-31"}, "breakdownFilter": {"breakdown": "$browser"}},
		"variables": {"$browser": "Chrome"}}`
	r := h.do("POST", "/api/projects/1/query/", keyP1, body)
	mustStatus(t, http.StatusOK, r)
	assert.Equal(t, "TrendsQuery", r.Body["kind"])
	series := r.Body["results"].([]any)
	require.Len(t, series, 1)
	s := series[0].(map[string]any)
	assert.Equal(t, "Chrome", s["label"])
	data, _ := s["data"].([]any)
	assert.NotEmpty(t, data, "s[\"data\"] = %v, want points", s["data"])
	labels, ok := s["labels"].([]any)
	if assert.True(t, ok, "len(s[\"labels\"]) = %d, want one per point (%d): %v", len(labels), len(data), s["labels"]) {
		assert.Len(t, labels, len(data), "len(s[\"labels\"]) = %d, want one per point (%d): %v", len(labels), len(data), s["labels"])
	}
	assert.Equal(t, []any{}, r.Body["placeholders"])
}

// TestQueryRouteSandbox: an unsaved query may read only what its project
// may read, scoped to its rows.
func TestQueryRouteSandbox(t *testing.T) {
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	require.NoError(t, err)
	env := endpointtest.New(t, endpointtest.WithDemoEvents(200), endpointtest.WithConfig(func(c *endpoint.Config) { c.Access = policy }),
		endpointtest.WithHTTPOptions(httpapi.WithLimiter(nil)))
	status, body := env.Do(t, "POST", "/query/", `{"query": {"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events"}}`)
	got, want := status, http.StatusOK
	require.Equal(t, want, got, "%v: status", body)
	assert.Contains(t, body, `"results":[[200]]`)
	status, body = env.Do(t, "POST", "/query/", `{"query": {"kind": "HogQLQuery", "query": "SELECT name FROM endpointkit_endpoints"}}`)
	if got, want := status, http.StatusBadRequest; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	assert.Contains(t, body, `"code":"query_not_allowed"`)
	assert.Contains(t, body, "endpointkit_endpoints")
}

// TestQueryRouteRefusesEmbedTokens: a token may run its endpoints, never an
// unsaved query, which could read anything of the project.
func TestQueryRouteRefusesEmbedTokens(t *testing.T) {
	env, signer, _, exec := embedEnv(t)
	tok, err := env.Service.MintEmbedToken(context.Background(), signer, env.Project,
		embed.Claims{Endpoints: []string{"by_event"}, Fixed: map[string]any{"event": "purchase"}}, time.Hour)
	require.NoError(t, err)
	before := exec.Queries()
	status, body, _ := send(t, env, "POST", "/api/projects/1/query/", tok, `{"query": {"kind": "HogQLQuery", "query": "SELECT count(*) FROM events"}}`)
	got, want := status, http.StatusForbidden
	assert.Equal(t, want, got, "%v: status", body)
	if got, want := exec.Queries(), before; got != want {
		t.Errorf("nothing ran: exec.Queries() = %v, want %v", got, want)
	}
	status, body, _ = send(t, env, "POST", "/api/projects/1/endpoints/by_event/run/", tok, `{}`)
	if got, want := status, http.StatusOK; got != want {
		t.Errorf("%v: status = %v, want %v", body, got, want)
	}
}

// TestQueryRouteRate: a query takes a run slot: it counts toward the
// project's runs per minute, shared with endpoint runs, and past the limit
// is answered 429 with Retry-After.
func TestQueryRouteRate(t *testing.T) {
	clock := endpointtest.NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	l := newLimiter(t, limit.Config{ProjectPerMinute: 2, Now: clock.Now})
	lh := newLimitHarness(t, newExecutor(openEvents(t, 1)), httpapi.WithLimiter(l))
	query := func() response {
		req := httptest.NewRequest("POST", "/api/projects/1/query/", strings.NewReader(`{"query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`))
		req.Header.Set("Authorization", "Bearer "+keyAdmin)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		lh.h.ServeHTTP(rec, req)
		return decodeResponse(t, rec.Code, rec.Header(), rec.Body.Bytes())
	}
	mustStatus(t, http.StatusOK, query())
	mustStatus(t, http.StatusOK, lh.run("1"))
	r := query()
	mustStatus(t, http.StatusTooManyRequests, r)
	assert.Equal(t, "throttled", r.Body["code"])
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err)
	clock.Advance(time.Duration(retry) * time.Second)
	mustStatus(t, http.StatusOK, query())
}

// TestQueryRouteTimeout: an unsaved query is bounded by the run timeout.
func TestQueryRouteTimeout(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithConfig(func(c *endpoint.Config) {
		c.Executor = newGate(c.Executor)
		c.RunTimeout = 30 * time.Millisecond
	}), endpointtest.WithHTTPOptions(httpapi.WithLimiter(nil), httpapi.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))))
	status, body := env.Do(t, "POST", "/query/", `{"query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`)
	got, want := status, http.StatusGatewayTimeout
	assert.Equal(t, want, got, "%v: status", body)
	assert.Contains(t, body, `"code":"timeout"`)
}

// TestVersionsRoute: GET endpoints/{name}/versions lists every version with
// its query, oldest first.
func TestVersionsRoute(t *testing.T) {
	h := newHarness(t, nil)
	base := "/api/projects/1/endpoints/"
	mustStatus(t, http.StatusCreated, h.do("POST", base, keyP1, map[string]any{"name": "v", "query": sqlQuery("SELECT 1 AS one", nil)}))
	mustStatus(t, http.StatusOK, h.do("PATCH", base+"v/", keyP1, map[string]any{"query": sqlQuery("SELECT 2 AS two", nil)}))
	r := h.do("GET", base+"v/versions/", keyP1, nil)
	mustStatus(t, http.StatusOK, r)
	vs := r.Body["results"].([]any)
	require.Len(t, vs, 2)
	for i, want := range []string{"SELECT 1 AS one", "SELECT 2 AS two"} {
		v := vs[i].(map[string]any)
		assert.Equal(t, json.Number(string(rune('1'+i))), v["version"])
		assert.Equal(t, want, v["query"].(map[string]any)["query"])
	}
	mustStatus(t, http.StatusNotFound, h.do("GET", base+"nope/versions/", keyP1, nil))
	mustStatus(t, http.StatusForbidden, h.do("GET", "/api/projects/2/endpoints/v/versions/", keyP1, nil))
}

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

// FuzzQueryBody sends arbitrary bodies to POST query/, which runs what it
// is sent: the answer is always JSON, never a 500; an error has a detail
// and a code, and the one 5xx allowed is a 502 or 504 of the database (a
// query SQLite refuses or that runs out of time), never of the server.
// A success always says what the editor shows: placeholders, variables
// and the verdict.
func FuzzQueryBody(f *testing.F) {
	for _, s := range []string{
		`{"query": {"kind": "HogQLQuery", "query": "SELECT count(*) FROM events WHERE timestamp >= {variables.from}", "variables": {"` + idFrom + `": {"variableId": "` + idFrom + `", "code_name": "from", "value": "2025-05-01"}}}}`,
		`{"query": {"kind": "HogQLQuery", "query": "SELECT {variables.from} AS f", "variables": {"` + idFrom + `": {"code_name": "from", "value": 1e400}}}, "limit": 1}`,
		`{"query": {"kind": "HogQLQuery", "query": "SELECT {variables.from}", "variables": {"` + idFrom + `": {"value": ["a", {"b": null}]}}}}`,
		`{"query": {"kind": "HogQLQuery", "query": "SELECT {variables.nope}"}}`,
		`{"query": {"kind": "HogQLQuery", "query": "SELECT 1; SELECT 2"}}`,
		`{"query": {"kind": "HogQLQuery", "query": "SELECT * FROM endpointkit_endpoints"}}`,
		`{"query": {"kind": "HogQLQuery", "query": "SELECT 1", "variables": {"not-a-uuid": {}}}, "offset": -1}`,
		`{"query": {"kind": "TrendsQuery", "series": [{"event": "$pageview"}], "breakdownFilter": {"breakdown": "$browser"}}, "variables": {"$browser": "Chrome", "date_from": "-7d"}}`,
		`{"query": {"kind": "RetentionQuery", "retentionFilter": {"targetEntity": {"id": "signed_up"}, "returningEntity": {"id": "$pageview"}}}, "limit": 5}`,
		`{"query": {"kind": "TrendsQuery"}, "variables": {"x": 1}}`,
		`{"query": null}`, `{"query": "SELECT 1"}`, `{"query": {}}`, `{"debug": true}`,
		`[]`, `null`, ``, `{`, `{"query": {"kind": "HogQLQuery", "query": "\xff"}}`,
	} {
		f.Add([]byte(s))
	}
	h := newHarness(f, nil)
	mustStatus(f, http.StatusCreated, h.do("POST", "/api/projects/1/insight_variables/", keyP1, dateVar(idFrom, "From")))
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/api/projects/1/query/", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyP1)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.handler.ServeHTTP(rec, req)
		var got map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), "%q: %d with a body that is not JSON: %q", body, rec.Code, rec.Body)
		switch {
		case rec.Code == http.StatusOK:
			for _, k := range []string{"kind", "results", "placeholders", "variables", "materialization"} {
				_, ok := got[k]
				require.True(t, ok, "%q: 200 without %q: %s", body, k, rec.Body)
			}
		case rec.Code == http.StatusBadGateway && got["code"] == "execution_failed",
			rec.Code == http.StatusGatewayTimeout && got["code"] == "timeout":
		case rec.Code >= 500:
			t.Fatalf("%q: %d %s", body, rec.Code, rec.Body)
		case got["detail"] == "" || got["code"] == "":
			t.Fatalf("%q: %d without detail or code: %s", body, rec.Code, rec.Body)
		}
	})
}
