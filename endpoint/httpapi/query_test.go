package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
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
	if got, want := r.Body["placeholders"], ([]any{"event", "from", "to"}); !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"placeholders\"] = %+v, want %+v", got, want)
	}
	if got, want := r.Body["columns"], ([]any{"n"}); !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"columns\"] = %+v, want %+v", got, want)
	}
	if got, ok := r.Body["types"].([]any); !ok || len(got) != 1 {
		t.Errorf("len(r.Body[\"types\"]) = %d, want %d: %v", len(got), 1, r.Body["types"])
	}
	if got, want := r.Body["hasMore"], false; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"hasMore\"] = %+v, want %+v", got, want)
	}
	verdict := r.Body["materialization"].(map[string]any)
	if got, want := verdict["can_materialize"], true; !reflect.DeepEqual(got, want) {
		t.Errorf("verdict[\"can_materialize\"] = %+v, want %+v", got, want)
	}
	if got, want := verdict["reasons"], ([]any{}); !reflect.DeepEqual(got, want) {
		t.Errorf("verdict[\"reasons\"] = %+v, want %+v", got, want)
	}
	vars := r.Body["variables"].([]any)
	if got := len(vars); got != 3 {
		t.Fatalf("len(vars) = %d, want %d: %v", got, 3, vars)
	}
	if got, want := vars[0], (map[string]any{"id": idEvent, "name": "Event", "code_name": "event", "type": "String", "value": "purchase", "source": "default"}); !reflect.DeepEqual(got, want) {
		t.Errorf("vars[0] = %+v, want %+v", got, want)
	}
	if got, want := vars[1].(map[string]any)["source"], "test"; !reflect.DeepEqual(got, want) {
		t.Errorf("vars[1].(map[string]any)[\"source\"] = %q, want %q", got, want)
	}

	// The same query saved and run with the same values gives the same rows.
	mustStatus(t, http.StatusCreated, h.do("POST", base+"/endpoints/", keyP1, map[string]any{"name": "count_by_event", "query": sqlQuery(countByEvent, codes)}))
	run := h.do("POST", base+"/endpoints/count_by_event/run/", keyP1, map[string]any{"variables": map[string]any{"event": "purchase", "from": "2025-04-01", "to": "2025-05-01"}})
	mustStatus(t, http.StatusOK, run)
	if got, want := r.Body["results"], run.Body["results"]; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"results\"] = %+v, want %+v", got, want)
	}
	n, err := r.Body["results"].([]any)[0].([]any)[0].(json.Number).Int64()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if v := n; v <= 0 {
		t.Errorf("the comparison is of a real count: n = %v, want > 0", v)
	}

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
				if got, want := r.detail(), tc.detail; got != want {
					t.Errorf("r.detail() = %q, want %q", got, want)
				}
				if got, want := r.Body["attr"], tc.attr; !reflect.DeepEqual(got, want) {
					t.Errorf("r.Body[\"attr\"] = %q, want %q", got, want)
				}
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
	if got, want := r.Body["kind"], "TrendsQuery"; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"kind\"] = %q, want %q", got, want)
	}
	series := r.Body["results"].([]any)
	if got := len(series); got != 1 {
		t.Fatalf("len(series) = %d, want %d: %v", got, 1, series)
	}
	s := series[0].(map[string]any)
	if got, want := s["label"], "Chrome"; !reflect.DeepEqual(got, want) {
		t.Errorf("s[\"label\"] = %q, want %q", got, want)
	}
	data, _ := s["data"].([]any)
	if len(data) == 0 {
		t.Errorf("s[\"data\"] = %v, want points", s["data"])
	}
	if labels, ok := s["labels"].([]any); !ok || len(labels) != len(data) {
		t.Errorf("len(s[\"labels\"]) = %d, want one per point (%d): %v", len(labels), len(data), s["labels"])
	}
	if got, want := r.Body["placeholders"], ([]any{}); !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"placeholders\"] = %+v, want %+v", got, want)
	}
}

// TestQueryRouteSandbox: an unsaved query may read only what its project
// may read, scoped to its rows.
func TestQueryRouteSandbox(t *testing.T) {
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	env := endpointtest.New(t, endpointtest.WithDemoEvents(200), endpointtest.WithConfig(func(c *endpoint.Config) { c.Access = policy }),
		endpointtest.WithHTTPOptions(httpapi.WithLimiter(nil)))
	status, body := env.Do(t, "POST", "/query/", `{"query": {"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events"}}`)
	if got, want := status, http.StatusOK; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	if s, sub := body, `"results":[[200]]`; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
	status, body = env.Do(t, "POST", "/query/", `{"query": {"kind": "HogQLQuery", "query": "SELECT name FROM endpointkit_endpoints"}}`)
	if got, want := status, http.StatusBadRequest; got != want {
		t.Fatalf("%v: status = %v, want %v", body, got, want)
	}
	if s, sub := body, `"code":"query_not_allowed"`; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
	if s, sub := body, "endpointkit_endpoints"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}

// TestQueryRouteRefusesEmbedTokens: a token may run its endpoints, never an
// unsaved query, which could read anything of the project.
func TestQueryRouteRefusesEmbedTokens(t *testing.T) {
	env, signer, _, exec := embedEnv(t)
	tok, err := env.Service.MintEmbedToken(context.Background(), signer, env.Project,
		embed.Claims{Endpoints: []string{"by_event"}, Fixed: map[string]any{"event": "purchase"}}, time.Hour)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	before := exec.n.Load()
	status, body, _ := send(t, env, "POST", "/api/projects/1/query/", tok, `{"query": {"kind": "HogQLQuery", "query": "SELECT count(*) FROM events"}}`)
	if got, want := status, http.StatusForbidden; got != want {
		t.Errorf("%v: status = %v, want %v", body, got, want)
	}
	if got, want := exec.n.Load(), before; got != want {
		t.Errorf("nothing ran: exec.n.Load() = %v, want %v", got, want)
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
	clock := &manualClock{t: time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)}
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
	if got, want := r.Body["code"], "throttled"; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"code\"] = %q, want %q", got, want)
	}
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	clock.Add(time.Duration(retry) * time.Second)
	mustStatus(t, http.StatusOK, query())
}

// TestQueryRouteTimeout: an unsaved query is bounded by the run timeout.
func TestQueryRouteTimeout(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithConfig(func(c *endpoint.Config) {
		c.Executor = newGate(c.Executor)
		c.RunTimeout = 30 * time.Millisecond
	}), endpointtest.WithHTTPOptions(httpapi.WithLimiter(nil), httpapi.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))))
	status, body := env.Do(t, "POST", "/query/", `{"query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`)
	if got, want := status, http.StatusGatewayTimeout; got != want {
		t.Errorf("%v: status = %v, want %v", body, got, want)
	}
	if s, sub := body, `"code":"timeout"`; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
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
	if got := len(vs); got != 2 {
		t.Fatalf("len(vs) = %d, want %d: %v", got, 2, vs)
	}
	for i, want := range []string{"SELECT 1 AS one", "SELECT 2 AS two"} {
		v := vs[i].(map[string]any)
		if got, want := v["version"], json.Number(string(rune('1'+i))); !reflect.DeepEqual(got, want) {
			t.Errorf("v[\"version\"] = %q, want %q", got, want)
		}
		if got, want := v["query"].(map[string]any)["query"], want; !reflect.DeepEqual(got, want) {
			t.Errorf("v[\"query\"].(map[string]any)[\"query\"] = %q, want %q", got, want)
		}
	}
	mustStatus(t, http.StatusNotFound, h.do("GET", base+"nope/versions/", keyP1, nil))
	mustStatus(t, http.StatusForbidden, h.do("GET", "/api/projects/2/endpoints/v/versions/", keyP1, nil))
}
