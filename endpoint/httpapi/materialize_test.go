package httpapi_test

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// dailySQL is daily purchases and revenue of a country between two dates.
const dailySQL = `SELECT date(timestamp) AS day, count(*) AS purchases, sum(amount) AS revenue
FROM (SELECT timestamp, json_extract(properties, '$.country') AS country, json_extract(properties, '$.amount') AS amount
      FROM events WHERE event = 'purchase') AS p
WHERE country = {variables.country} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY day ORDER BY day`

// failingExec fails every write while fail is set, with an error that
// holds internals a client must not see.
type failingExec struct {
	driver.Executor
	fail atomic.Bool
}

func (x *failingExec) Exec(ctx context.Context, stmts []driver.Statement, tx driver.Write) error {
	if x.fail.Load() {
		return errors.New("sqlite: disk I/O error at /srv/secret.db")
	}
	return x.Executor.Exec(ctx, stmts, tx)
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
	if !ok {
		t.Fatalf("no materialization object in %s: ok is false", r.Raw)
	}
	return m
}

// TestHTTPMaterialize: the materialize route refreshes and answers the
// endpoint; runs then say they read the table and answer as inline runs do.
func TestHTTPMaterialize(t *testing.T) {
	h := newHarness(t, nil)
	created := h.setupDaily(map[string]any{"materialization_freshness": "2h", "materialization_buckets": map[string]any{"from": "day"}})
	mustStatus(t, http.StatusCreated, created)
	if got, want := materialization(t, created), (map[string]any{"can_materialize": true, "reason": "", "status": "pending", "last_materialized_at": nil, "error": "", "hibernating": false,
		"variables": []any{
			map[string]any{"code_name": "country", "as": "key", "expression": `"country"`},
			map[string]any{"code_name": "from", "as": "range", "expression": `"timestamp"`, "bucket": "day"},
			map[string]any{"code_name": "to", "as": "range", "expression": `"timestamp"`, "bucket": "day"},
		}}); !reflect.DeepEqual(got, want) {
		t.Errorf("materialization(t, created) = %+v, want %+v", got, want)
	}
	if got, want := (string(created.Body["materialization_freshness"].(interface{ String() string }).String())), "7200"; got != want {
		t.Errorf("got = %q, want %q", got, want)
	}
	if got, want := created.Body["materialization_buckets"], (map[string]any{"from": "day"}); !reflect.DeepEqual(got, want) {
		t.Errorf("created.Body[\"materialization_buckets\"] = %+v, want %+v", got, want)
	}

	vars := map[string]any{"variables": map[string]any{"country": "US", "from": "2025-04-01", "to": "2025-05-01"}}
	before := h.do("POST", "/api/projects/1/endpoints/daily/run", keyP1, vars)
	mustStatus(t, http.StatusOK, before)
	if got, want := before.Body["endpoint_materialized"], false; !reflect.DeepEqual(got, want) {
		t.Errorf("before.Body[\"endpoint_materialized\"] = %+v, want %+v", got, want)
	}

	for _, path := range []string{"/api/projects/1/endpoints/daily/materialize", "/api/projects/1/endpoints/daily/materialize/"} {
		r := h.do("POST", path+"?wait=true", keyP1, nil)
		mustStatus(t, http.StatusOK, r)
		m := materialization(t, r)
		if got, want := m["status"], "completed"; !reflect.DeepEqual(got, want) {
			t.Errorf("m[\"status\"] = %q, want %q", got, want)
		}
		if m["last_materialized_at"] == nil {
			t.Errorf("m[\"last_materialized_at\"] is nil")
		}
		if got, want := r.Body["name"], "daily"; !reflect.DeepEqual(got, want) {
			t.Errorf("r.Body[\"name\"] = %q, want %q", got, want)
		}
		if got, want := r.Body["endpoint_path"], "/api/projects/1/endpoints/daily/run"; !reflect.DeepEqual(got, want) {
			t.Errorf("r.Body[\"endpoint_path\"] = %q, want %q", got, want)
		}
	}
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", keyP1, map[string]any{}))

	got := h.do("POST", "/api/projects/1/endpoints/daily/run", keyP1, vars)
	want := h.do("POST", "/api/projects/1/endpoints/inline/run", keyP1, vars)
	mustStatus(t, http.StatusOK, got)
	if got, want := got.Body["endpoint_materialized"], true; !reflect.DeepEqual(got, want) {
		t.Errorf("got.Body[\"endpoint_materialized\"] = %+v, want %+v", got, want)
	}
	if s, ok := got.Body["endpoint_materialized_at"].(string); !ok || s == "" {
		t.Errorf("got.Body[\"endpoint_materialized_at\"] = %#v, want a non-empty string", got.Body["endpoint_materialized_at"])
	}
	if got, want := want.Body["endpoint_materialized"], false; !reflect.DeepEqual(got, want) {
		t.Errorf("want.Body[\"endpoint_materialized\"] = %+v, want %+v", got, want)
	}
	if got, want := got.Body["results"], want.Body["results"]; !reflect.DeepEqual(got, want) {
		t.Errorf("got.Body[\"results\"] = %+v, want %+v", got, want)
	}
	if rows, ok := got.Body["results"].([]any); !ok || len(rows) == 0 {
		t.Errorf("got.Body[\"results\"] = %v, want rows", got.Body["results"])
	}

	list := h.do("GET", "/api/projects/1/endpoints/", keyP1, nil)
	mustStatus(t, http.StatusOK, list)
	for _, item := range list.Body["results"].([]any) {
		e := item.(map[string]any)
		m := e["materialization"].(map[string]any)
		if got, want := m["can_materialize"], true; !reflect.DeepEqual(got, want) {
			t.Errorf("%v: m[\"can_materialize\"] = %+v, want %+v", e["name"], got, want)
		}
		if e["name"] == "inline" {
			if _, ok := m["status"]; ok {
				t.Errorf("an endpoint that is not materialized has no status: key %v in %v", "status", m)
			}
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
				if got, want := r.Body["code"], tc.code; !reflect.DeepEqual(got, want) {
					t.Errorf("r.Body[\"code\"] = %q, want %q", got, want)
				}
				if tc.attr != "" {
					if got, want := r.Body["attr"], tc.attr; !reflect.DeepEqual(got, want) {
						t.Errorf("r.Body[\"attr\"] = %q, want %q", got, want)
					}
				}
			}
			if tc.detail != "" {
				if got, want := r.detail(), tc.detail; got != want {
					t.Errorf("r.detail() = %q, want %q", got, want)
				}
			}
		})
	}
	// The refused PATCHes changed nothing.
	r := h.do("GET", "/api/projects/1/endpoints/daily", keyP1, nil)
	if got, want := (r.Body["materialization_freshness"].(interface{ String() string }).String()), "86400"; got != want {
		t.Errorf("the default: the data freshness: got = %q, want %q", got, want)
	}
	if _, ok := r.Body["materialization_buckets"]; ok {
		t.Errorf("key %v in %v", "materialization_buckets", r.Body)
	}
}

// TestHTTPMaterializeFailure: a failed refresh is a 502 whose detail leaks
// nothing, the endpoint shows failed with the same words, and the last good
// table keeps serving.
func TestHTTPMaterializeFailure(t *testing.T) {
	var x *failingExec
	h := newHarness(t, func(events *sql.DB) driver.Executor {
		x = &failingExec{Executor: newExecutor(events)}
		return x
	})
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", keyP1, nil))
	x.fail.Store(true)
	r := h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", keyP1, nil)
	mustStatus(t, http.StatusBadGateway, r)
	if got, want := r.Body["code"], "materialization_failed"; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"code\"] = %q, want %q", got, want)
	}
	if got, want := r.detail(), "Materialization of endpoint 'daily' failed: the query could not be executed against the database (request id "+r.Header.Get("X-Request-Id")+")"; got != want {
		t.Errorf("r.detail() = %q, want %q", got, want)
	}
	if strings.Contains(string(r.Raw), "secret") {
		t.Errorf("leaked: %s: strings.Contains(string(r.Raw), \"secret\") is true", r.Raw)
	}

	got := h.do("GET", "/api/projects/1/endpoints/daily", keyP1, nil)
	m := materialization(t, got)
	if got, want := m["status"], "failed"; !reflect.DeepEqual(got, want) {
		t.Errorf("m[\"status\"] = %q, want %q", got, want)
	}
	if got, want := m["error"], "the query could not be executed against the database"; !reflect.DeepEqual(got, want) {
		t.Errorf("m[\"error\"] = %q, want %q", got, want)
	}
	if m["last_materialized_at"] == nil {
		t.Errorf("m[\"last_materialized_at\"] is nil")
	}
	run := h.do("POST", "/api/projects/1/endpoints/daily/run", keyP1, map[string]any{"variables": map[string]any{"country": "DE", "from": "2025-04-01", "to": "2025-05-01"}})
	mustStatus(t, http.StatusOK, run)
	if got, want := run.Body["endpoint_materialized"], true; !reflect.DeepEqual(got, want) {
		t.Errorf("run.Body[\"endpoint_materialized\"] = %+v, want %+v", got, want)
	}
}
