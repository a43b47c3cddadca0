package httpapi_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dailySQL is endpointtest.DailyPurchases: daily purchases and revenue of a
// country between two dates over the demo events.
const dailySQL = endpointtest.DailyPurchases

// failWritesWhile fails every write while fail is set, with an error that
// holds internals a client must not see.
func failWritesWhile(fail *atomic.Bool) heldexec.Option {
	return heldexec.BeforeExec(func(context.Context, []driver.Statement) error {
		if fail.Load() {
			return errors.New("sqlite: disk I/O error at /srv/secret.db")
		}
		return nil
	})
}

// setupDaily creates the variables of dailySQL and the endpoints "daily"
// (materialized, with the extra fields) and "inline" in project 1.
func (h *harness) setupDaily(extra map[string]any) response {
	h.t.Helper()
	base := "/api/projects/1"
	mustStatus(h.t, http.StatusCreated, h.do("POST", base+"/insight_variables/", keyP1, dateVar(idFrom, "From")))
	mustStatus(h.t, http.StatusCreated, h.do("POST", base+"/insight_variables/", keyP1, dateVar(idTo, "To")))
	mustStatus(h.t, http.StatusCreated, h.do("POST", base+"/insight_variables/", keyP1, map[string]any{"id": idCountry, "name": "Country", "type": "String"}))
	q := sqlQuery(dailySQL, map[string]string{idFrom: "from", idTo: "to", idCountry: "country"})
	mustStatus(h.t, http.StatusCreated, h.do("POST", base+"/endpoints/", keyP1, map[string]any{"name": "inline", "query": q}))
	body := map[string]any{"name": "daily", "query": q, "is_materialized": true}
	for k, v := range extra {
		body[k] = v
	}
	return h.do("POST", base+"/endpoints/", keyP1, body)
}

func materialization(t *testing.T, r response) map[string]any {
	t.Helper()
	m, ok := r.Body["materialization"].(map[string]any)
	require.True(t, ok, "no materialization object in %s: ok is false", r.Raw)
	return m
}

// TestHTTPMaterialize: the materialize route refreshes and answers the
// endpoint; runs then say they read the table and answer as inline runs do.
func TestHTTPMaterialize(t *testing.T) {
	h := newHarness(t, nil)
	created := h.setupDaily(map[string]any{"materialization_freshness": "2h", "materialization_buckets": map[string]any{"from": "day"}})
	mustStatus(t, http.StatusCreated, created)
	assert.Equal(t, map[string]any{"can_materialize": true, "reason": "", "status": "pending", "last_materialized_at": nil, "error": "", "hibernating": false,
		"variables": []any{
			map[string]any{"code_name": "country", "as": "key", "expression": `"country"`},
			map[string]any{"code_name": "from", "as": "range", "expression": `"timestamp"`, "bucket": "day"},
			map[string]any{"code_name": "to", "as": "range", "expression": `"timestamp"`, "bucket": "day"},
		}}, materialization(t, created))
	assert.Equal(t, "7200", string(created.Body["materialization_freshness"].(interface{ String() string }).String()))
	assert.Equal(t, map[string]any{"from": "day"}, created.Body["materialization_buckets"])

	vars := map[string]any{"variables": map[string]any{"country": "US", "from": "2025-04-01", "to": "2025-05-01"}}
	before := h.do("POST", "/api/projects/1/endpoints/daily/run", keyP1, vars)
	mustStatus(t, http.StatusOK, before)
	assert.Equal(t, false, before.Body["endpoint_materialized"])

	for _, path := range []string{"/api/projects/1/endpoints/daily/materialize", "/api/projects/1/endpoints/daily/materialize/"} {
		r := h.do("POST", path+"?wait=true", keyP1, nil)
		mustStatus(t, http.StatusOK, r)
		m := materialization(t, r)
		assert.Equal(t, "completed", m["status"])
		if m["last_materialized_at"] == nil {
			t.Errorf("m[\"last_materialized_at\"] is nil")
		}
		assert.Equal(t, "daily", r.Body["name"])
		assert.Equal(t, "/api/projects/1/endpoints/daily/run", r.Body["endpoint_path"])
	}
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", keyP1, map[string]any{}))

	got := h.do("POST", "/api/projects/1/endpoints/daily/run", keyP1, vars)
	want := h.do("POST", "/api/projects/1/endpoints/inline/run", keyP1, vars)
	mustStatus(t, http.StatusOK, got)
	assert.Equal(t, true, got.Body["endpoint_materialized"])
	s, ok := got.Body["endpoint_materialized_at"].(string)
	if assert.True(t, ok, "got.Body[\"endpoint_materialized_at\"] = %#v, want a non-empty string", got.Body["endpoint_materialized_at"]) {
		assert.NotEqual(t, "", s, "got.Body[\"endpoint_materialized_at\"] = %#v, want a non-empty string", got.Body["endpoint_materialized_at"])
	}
	assert.Equal(t, false, want.Body["endpoint_materialized"])
	assert.Equal(t, want.Body["results"], got.Body["results"])
	if rows, ok := got.Body["results"].([]any); !ok || len(rows) == 0 {
		t.Errorf("got.Body[\"results\"] = %v, want rows", got.Body["results"])
	}

	list := h.do("GET", "/api/projects/1/endpoints/", keyP1, nil)
	mustStatus(t, http.StatusOK, list)
	for _, item := range list.Body["results"].([]any) {
		e := item.(map[string]any)
		m := e["materialization"].(map[string]any)
		assert.Equal(t, true, m["can_materialize"], "%v: m[\"can_materialize\"]", e["name"])
		if e["name"] == "inline" {
			_, ok := m["status"]
			assert.False(t, ok, "an endpoint that is not materialized has no status: key %v in %v", "status", m)
		}
	}
}

// TestHTTPMaterializeErrors: every refusal of the route and of the
// materialization fields, with its status and code.
func TestHTTPMaterializeErrors(t *testing.T) {
	h := newHarness(t, nil)
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	for _, tc := range []struct {
		name, method, path, key string
		body                    any
		status                  int
		code, attr, detail      string
	}{
		{"no key", "POST", "/api/projects/1/endpoints/daily/materialize", "", nil, 401, "", "", ""},
		{"other project's key", "POST", "/api/projects/1/endpoints/daily/materialize", keyP2, nil, 403, "", "", ""},
		{"unknown endpoint", "POST", "/api/projects/1/endpoints/nope/materialize", keyP1, nil, 404, "not_found", "", "Endpoint 'nope' not found."},
		{"not materialized", "POST", "/api/projects/1/endpoints/inline/materialize", keyP1, nil, 400, "invalid_input", "is_materialized",
			"Endpoint 'inline' is not materialized; set is_materialized to true first."},
		{"unknown field", "POST", "/api/projects/1/endpoints/daily/materialize", keyP1, map[string]any{"force": true}, 400, "invalid_input", "force", "Unknown field(s): force"},
		{"GET", "GET", "/api/projects/1/endpoints/daily/materialize", keyP1, nil, 405, "", "", ""},
		{"not materializable", "POST", "/api/projects/1/endpoints/", keyP1, map[string]any{
			"name": "glob", "is_materialized": true,
			"query": sqlQuery("SELECT count(*) FROM events WHERE event GLOB {variables.country}", map[string]string{idCountry: "country"}),
		}, 400, "cannot_materialize", "is_materialized",
			"Cannot materialize endpoint. Reason: variable 'country' is used with the operator GLOB; only =, !=, >=, >, <, <=, [NOT] IN, [NOT] LIKE and [NOT] ILIKE can be materialized"},
		{"bad freshness", "PATCH", "/api/projects/1/endpoints/daily/", keyP1, map[string]any{"materialization_freshness": "soon"}, 400, "invalid_input", "materialization_freshness", ""},
		{"bad bucket", "PATCH", "/api/projects/1/endpoints/daily/", keyP1, map[string]any{"materialization_buckets": map[string]any{"to": "year"}}, 400, "invalid_input", "materialization_buckets",
			"materialization_buckets: invalid bucket 'year' for 'to'. Expected one of: minute, hour, day, week, month."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, tc.path, tc.key, tc.body)
			mustStatus(t, tc.status, r)
			if tc.code != "" {
				assert.Equal(t, tc.code, r.Body["code"])
				if tc.attr != "" {
					assert.Equal(t, tc.attr, r.Body["attr"])
				}
			}
			if tc.detail != "" {
				got, want := r.detail(), tc.detail
				assert.Equal(t, want, got, "r.detail()")
			}
		})
	}
	// The refused PATCHes changed nothing.
	r := h.do("GET", "/api/projects/1/endpoints/daily", keyP1, nil)
	assert.Equal(t, "86400", r.Body["materialization_freshness"].(interface{ String() string }).String(), "the default: the data freshness")
	_, ok := r.Body["materialization_buckets"]
	assert.False(t, ok, "key %v in %v", "materialization_buckets", r.Body)
}

// TestHTTPMaterializeFailure: a failed refresh is a 502 whose detail leaks
// nothing, the endpoint shows failed with the same words, and the last good
// table keeps serving.
func TestHTTPMaterializeFailure(t *testing.T) {
	var fail atomic.Bool
	h := newHarness(t, func(events *sql.DB) driver.Executor {
		return heldexec.NewFake(newExecutor(events), failWritesWhile(&fail))
	})
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", keyP1, nil))
	fail.Store(true)
	r := h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", keyP1, nil)
	mustStatus(t, http.StatusBadGateway, r)
	assert.Equal(t, "materialization_failed", r.Body["code"])
	if got, want := r.detail(), "Materialization of endpoint 'daily' failed: the query could not be executed against the database (request id "+r.Header.Get("X-Request-Id")+")"; got != want {
		t.Errorf("r.detail() = %q, want %q", got, want)
	}
	assert.NotContains(t, string(r.Raw), "secret", "leaked: %s: strings.Contains(string(r.Raw), \"secret\") is true", r.Raw)

	got := h.do("GET", "/api/projects/1/endpoints/daily", keyP1, nil)
	m := materialization(t, got)
	assert.Equal(t, "failed", m["status"])
	assert.Equal(t, "the query could not be executed against the database", m["error"])
	if m["last_materialized_at"] == nil {
		t.Errorf("m[\"last_materialized_at\"] is nil")
	}
	run := h.do("POST", "/api/projects/1/endpoints/daily/run", keyP1, map[string]any{"variables": map[string]any{"country": "DE", "from": "2025-04-01", "to": "2025-05-01"}})
	mustStatus(t, http.StatusOK, run)
	assert.Equal(t, true, run.Body["endpoint_materialized"])
}

// gatedBuild holds every write that builds a stored table until release,
// telling started when one is held.
type gatedBuild struct {
	started chan struct{}
	release func()
	gate    chan struct{}
}

func newGatedBuild() *gatedBuild {
	g := &gatedBuild{started: make(chan struct{}, 1), gate: make(chan struct{})}
	g.release = sync.OnceFunc(func() { close(g.gate) })
	return g
}

// hold is the BeforeExec of the executor g gates.
func (g *gatedBuild) hold(ctx context.Context, stmts []driver.Statement) error {
	if !slices.ContainsFunc(stmts, func(st driver.Statement) bool { return strings.Contains(st.SQL(), "CREATE TABLE") }) {
		return nil
	}
	select {
	case g.started <- struct{}{}:
	default:
	}
	select {
	case <-g.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestMaterializeAnswers202WhileTheRefreshRuns: POST materialize answers
// 202 at once with the status route (Location, status_url) while the
// refresh it started is held in its build, which therefore cannot have
// ended; the status shows that refresh's progress meanwhile, and its end
// once the build goes on. Before, the POST answered only once the
// refresh ended.
func TestMaterializeAnswers202WhileTheRefreshRuns(t *testing.T) {
	g := newGatedBuild()
	h := newHarness(t, func(events *sql.DB) driver.Executor {
		return heldexec.NewFake(newExecutor(events), heldexec.BeforeExec(g.hold))
	})
	t.Cleanup(g.release)
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))

	answered := make(chan response, 1)
	go func() { answered <- h.do("POST", "/api/projects/1/endpoints/daily/materialize", keyP1, nil) }()
	var r response
	select {
	case r = <-answered:
	case <-time.After(30 * time.Second): // a guard against a hang, not a measure
		t.Fatal("POST materialize did not answer while its refresh was held")
	}
	mustStatus(t, http.StatusAccepted, r)
	status := "/api/projects/1/endpoints/daily/materialization_status"
	assert.Equal(t, status, r.Header.Get("Location"))
	assert.Equal(t, status, r.Body["status_url"])
	assert.Equal(t, false, r.Body["joined"])

	<-g.started // the refresh is in its build, held
	st := h.do("GET", status, keyP1, nil)
	mustStatus(t, http.StatusOK, st)
	assert.Equal(t, "running", st.Body["status"], "%s", st.Raw)
	p, ok := st.Body["progress"].(map[string]any)
	require.True(t, ok, "no progress in %s", st.Raw)
	assert.Equal(t, "building", p["phase"])
	assert.Equal(t, "manual", p["trigger"])
	assert.Nil(t, p["rows_written"])
	assert.NotEmpty(t, p["note"])
	assert.NotNil(t, p["elapsed_ms"])

	// A second POST meanwhile joins the refresh under way.
	again := h.do("POST", "/api/projects/1/endpoints/daily/materialize/", keyP1, map[string]any{})
	mustStatus(t, http.StatusAccepted, again)
	assert.Equal(t, true, again.Body["joined"])

	g.release()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st = h.do("GET", status, keyP1, nil)
		if st.Body["status"] == "completed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.Equal(t, "completed", st.Body["status"], "%s", st.Raw)
	assert.Nil(t, st.Body["progress"])
	assert.NotNil(t, st.Body["rows"])

	// ?wait=true keeps the blocking answer; a wait that is no boolean is refused.
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", keyP1, nil))
	bad := h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=soon", keyP1, nil)
	mustStatus(t, http.StatusBadRequest, bad)
	assert.Equal(t, "wait must be true or false.", bad.detail())
	assert.Equal(t, "wait", bad.Body["attr"])
}

// slowWrites makes every write take delay (nanoseconds) more, or until its
// context ends.
func slowWrites(delay *atomic.Int64) heldexec.Option {
	return heldexec.BeforeExec(func(ctx context.Context, _ []driver.Statement) error {
		select {
		case <-time.After(time.Duration(delay.Load())):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

// TestMaterializeOutlivesTheServersWriteTimeout: a refresh that takes
// longer than the server's WriteTimeout is still answered, as a run that
// does is: its answer has a write deadline of its own from when the refresh
// ends (WithWriteTimeout), rather than the connection closed without one.
func TestMaterializeOutlivesTheServersWriteTimeout(t *testing.T) {
	var delay atomic.Int64
	h := newHarness(t, func(events *sql.DB) driver.Executor {
		return heldexec.NewFake(newExecutor(events), slowWrites(&delay))
	})
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	srv := httptest.NewUnstartedServer(h.handler)
	srv.Config.WriteTimeout = 200 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	delay.Store(int64(600 * time.Millisecond))
	req, err := http.NewRequest("POST", srv.URL+"/api/projects/1/endpoints/daily/materialize?wait=true", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyP1)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err, "a refresh longer than the server's write timeout was not answered")
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the answer was cut")
	require.Equal(t, http.StatusOK, resp.StatusCode, "status %d: %s", resp.StatusCode, body)
	require.Contains(t, string(body), `"status":"completed"`, "status %d: %s", resp.StatusCode, body)
}

// TestHTTPMaterializedInsight: a materialized insight endpoint over HTTP:
// breakdown runs read the table and equal the inline endpoint's, date
// variables are refused, and a breakdown is required unless optional.
func TestHTTPMaterializedInsight(t *testing.T) {
	h := newHarness(t, nil)
	base := "/api/projects/1/endpoints/"
	query := rawJSON(t, insightTrends)
	mustStatus(t, http.StatusCreated, h.do("POST", base, keyP1, map[string]any{"name": "inline", "query": query}))
	r := h.do("POST", base, keyP1, map[string]any{"name": "views", "query": query, "is_materialized": true, "optional_breakdown_properties": []string{"country"}})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "optional_breakdown_properties", r.Body["attr"])
	assert.Equal(t, "optional_breakdown_properties: 'country' is not a breakdown property of this query.", r.detail())
	r = h.do("POST", base, keyP1, map[string]any{"name": "views", "query": query, "is_materialized": true})
	mustStatus(t, http.StatusCreated, r)
	assert.Equal(t, "pending", materialization(t, r)["status"])
	mustStatus(t, http.StatusOK, h.do("POST", base+"views/materialize?wait=true", keyP1, nil))

	vars := map[string]any{"variables": map[string]any{"$browser": "Firefox"}}
	got := h.do("POST", base+"views/run", keyP1, vars)
	mustStatus(t, http.StatusOK, got)
	assert.Equal(t, true, got.Body["endpoint_materialized"])
	want := h.do("POST", base+"inline/run", keyP1, vars)
	mustStatus(t, http.StatusOK, want)
	assert.Equal(t, want.Body["results"], got.Body["results"])
	rows, ok := got.Body["results"].([]any)
	require.True(t, ok, "len(got.Body[\"results\"]) = %d, want %d: %v", len(rows), 1, got.Body["results"])
	require.Len(t, rows, 1, "len(got.Body[\"results\"]) = %d, want %d: %v", len(rows), 1, got.Body["results"])

	r = h.do("POST", base+"views/run", keyP1, map[string]any{"variables": map[string]any{"$browser": "Firefox", "date_from": "2025-05-10"}})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "unknown_variable", r.Body["code"])
	assert.Equal(t, "Unknown variable(s): date_from", r.detail())
	r = h.do("POST", base+"views/run", keyP1, map[string]any{"variables": map[string]any{}})
	mustStatus(t, http.StatusBadRequest, r)
	assert.Equal(t, "required_variable_missing", r.Body["code"])
	assert.Equal(t, "Required variable(s) '$browser' not provided", r.detail())

	mustStatus(t, http.StatusOK, h.do("PATCH", base+"views/", keyP1, map[string]any{"optional_breakdown_properties": []string{"$browser"}}))
	got = h.do("POST", base+"views/run", keyP1, map[string]any{"variables": map[string]any{}})
	mustStatus(t, http.StatusOK, got)
	assert.Equal(t, true, got.Body["endpoint_materialized"])
	want = h.do("POST", base+"inline/run", keyP1, map[string]any{"variables": map[string]any{}})
	assert.Equal(t, want.Body["results"], got.Body["results"])
	assert.Equal(t, []any{"$browser"}, h.do("GET", base+"views", keyP1, nil).Body["optional_breakdown_properties"])
}
