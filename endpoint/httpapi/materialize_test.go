package httpapi_test

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dailySQL is daily purchases and revenue of a country between two dates.
const dailySQL = `SELECT date(timestamp) AS day, count(*) AS purchases, sum(amount) AS revenue
FROM (SELECT timestamp, json_extract(properties, '$.country') AS country, json_extract(properties, '$.amount') AS amount
      FROM events WHERE event = 'purchase') AS p
WHERE country = {variables.country} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY day ORDER BY day`

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
			"name": "like", "is_materialized": true,
			"query": sqlQuery("SELECT count(*) FROM events WHERE event LIKE {variables.country}", map[string]string{idCountry: "country"}),
		}, 400, "cannot_materialize", "is_materialized",
			"Cannot materialize endpoint. Reason: variable 'country' is used with the operator LIKE; only =, >=, >, <, <= and IN can be materialized"},
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
