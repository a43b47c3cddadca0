package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dailyV2SQL is dailySQL changed, so that saving it makes version 2.
var dailyV2SQL = strings.Replace(dailySQL, "count(*) AS purchases", "count(1) AS purchases", 1)

// dailyRunVars are values every run of daily takes.
var dailyRunVars = map[string]any{"from": "2025-01-01", "to": "2026-01-01", "country": "US"}

// requireThrottled checks that r is the 429 of the budget named limit.
func requireThrottled(t *testing.T, r response, limit string) {
	t.Helper()
	mustStatus(t, http.StatusTooManyRequests, r)
	if got, want := r.Body["code"], endpoint.CodeThrottled; got != want {
		t.Errorf("code = %v, want %v", got, want)
	}
	assert.Contains(t, r.detail(), limit, "detail")
	assert.NotEqual(t, "", r.Header.Get("Retry-After"), "no Retry-After")
}

// mustRead checks that r is a 200 answered from the stored table (stored)
// or computed inline.
func mustRead(t *testing.T, r response, stored bool) {
	t.Helper()
	mustStatus(t, http.StatusOK, r)
	if got := r.Body["endpoint_materialized"]; got != stored {
		t.Errorf("endpoint_materialized = %v, want %v", got, stored)
	}
}

// TestKeyBudgetChargesWhatAnswers: a key's run is charged to its
// materialized budget only when the stored table answers it. A run of an
// older version of a materialized endpoint, or of its current version
// before a table is built, computes inline and is charged to the inline
// budget (before, both went to the larger materialized one: a key with
// runs_per_minute 1 ran version 1 four times in a minute).
func TestKeyBudgetChargesWhatAnswers(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	run := func(key string, version any) response {
		body := map[string]any{"variables": dailyRunVars}
		if version != nil {
			body["version"] = version
		}
		return h.do("POST", "/api/projects/1/endpoints/daily/run", key, body)
	}
	mint := func(name string) string {
		secret, _ := h.mint("1", map[string]any{"name": name, "scopes": []string{"endpoint:read"},
			"runs_per_minute": 1, "materialized_runs_per_minute": 1000})
		return secret
	}

	// Each phase a subtest, so that one failing does not hide the others.
	t.Run("no table yet: the current version runs inline, charged so", func(t *testing.T) {
		early := mint("early")
		mustRead(t, run(early, nil), false)
		requireThrottled(t, run(early, nil), apikey.LimitRunsPerMinute)
	})
	// Version 2, materialized: version 1 is computed inline.
	mustStatus(t, http.StatusOK, h.do("PATCH", "/api/projects/1/endpoints/daily", keyP1,
		map[string]any{"query": sqlQuery(dailyV2SQL, map[string]string{idFrom: "from", idTo: "to", idCountry: "country"})}))
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", keyP1, map[string]any{}))
	t.Run("an older version is computed inline, charged so", func(t *testing.T) {
		older := mint("older")
		r := run(older, 1)
		mustRead(t, r, false)
		assert.Equal(t, "1", fmt.Sprint(r.Body["endpoint_version"]), "endpoint_version")
		requireThrottled(t, run(older, 1), apikey.LimitRunsPerMinute)
		// Its materialized budget is untouched: the stored table answers
		// the current version, charged there.
		for _, v := range []any{nil, 2} {
			mustRead(t, run(older, v), true)
		}
	})
	t.Run("the current version read from the table is charged to the materialized budget", func(t *testing.T) {
		current := mint("current")
		for range 3 {
			mustRead(t, run(current, nil), true)
		}
		mustRead(t, run(current, 1), false)
		requireThrottled(t, run(current, 1), apikey.LimitRunsPerMinute)
		// A key whose materialized budget is 1 is held to it by the
		// table's runs.
		tight, _ := h.mint("1", map[string]any{"name": "tight", "scopes": []string{"endpoint:read"},
			"runs_per_minute": 1000, "materialized_runs_per_minute": 1})
		mustRead(t, run(tight, nil), true)
		requireThrottled(t, run(tight, nil), apikey.LimitMaterializedRunsPerMinute)
		mustRead(t, run(tight, 1), false) // inline: another budget
	})
}

// TestKeyBudgetRefusalCostsNothing: a run refused for its record (an
// unknown version, an unknown endpoint) is refused before any budget is
// charged.
func TestKeyBudgetRefusalCostsNothing(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	secret, _ := h.mint("1", map[string]any{"name": "one", "scopes": []string{"endpoint:read"}, "runs_per_minute": 1})
	mustStatus(t, http.StatusNotFound, h.do("POST", "/api/projects/1/endpoints/daily/run", secret,
		map[string]any{"variables": dailyRunVars, "version": 7}))
	mustStatus(t, http.StatusNotFound, h.do("POST", "/api/projects/1/endpoints/nothing/run", secret,
		map[string]any{"variables": dailyRunVars}))
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/inline/run", secret,
		map[string]any{"variables": dailyRunVars}))
}

// TestMaterializeCharged: POST materialize computes the query, so it is
// charged once to the caller's inline budget (before, it was counted
// nowhere: 3 refreshes for a key whose budgets were 1), and refused 429
// naming the budget once it is spent.
func TestMaterializeCharged(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	secret, _ := h.mint("1", map[string]any{"name": "writer", "scopes": []string{"endpoint:write", "endpoint:read"},
		"runs_per_minute": 1, "runs_per_hour": 1, "materialized_runs_per_minute": 1, "materialized_runs_per_hour": 1})
	materialize := func(key string) response {
		return h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", key, map[string]any{})
	}
	mustStatus(t, http.StatusOK, materialize(secret))
	// Every budget is 1; the minute's is counted first, in the background
	// form (202) as in the blocking one.
	requireThrottled(t, h.do("POST", "/api/projects/1/endpoints/daily/materialize", secret, map[string]any{}), apikey.LimitRunsPerMinute)
	requireThrottled(t, materialize(secret), apikey.LimitRunsPerMinute)
	// It was the inline budget: the table's runs are still allowed.
	mustStatus(t, http.StatusOK, h.do("POST", "/api/projects/1/endpoints/daily/run", secret, map[string]any{"variables": dailyRunVars}))
	// A refusal for the record costs nothing: "inline" is not materialized.
	other, _ := h.mint("1", map[string]any{"name": "other", "scopes": []string{"endpoint:write", "endpoint:read"}, "runs_per_minute": 1})
	mustStatus(t, http.StatusBadRequest, h.do("POST", "/api/projects/1/endpoints/inline/materialize", other, map[string]any{}))
	mustStatus(t, http.StatusOK, materialize(other))
	requireThrottled(t, materialize(other), apikey.LimitRunsPerMinute)
	// The server's own keys have no budget of their own.
	mustStatus(t, http.StatusOK, materialize(keyP1))
}

// TestMaterializeChargesProject: POST materialize counts against the
// project's limits as a run does.
func TestMaterializeChargesProject(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	l, err := limit.New(limit.Config{ProjectPerMinute: 1})
	require.NoError(t, err, "limit.New")
	ring := httpapi.NewKeyring()
	require.NoError(t, ring.Add(keyP1, "1"), "ring.Add")
	srv := httptest.NewServer(httpapi.New(h.svc, ring, httpapi.WithKeys(h.keys), httpapi.WithLimiter(l)))
	t.Cleanup(srv.Close)
	limited := &harness{t: t, handler: srv.Config.Handler, server: srv, events: h.events, logs: h.logs}
	// The background form (202) counts as the blocking one does.
	mustStatus(t, http.StatusAccepted, limited.do("POST", "/api/projects/1/endpoints/daily/materialize", keyP1, map[string]any{}))
	r := limited.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", keyP1, map[string]any{})
	requireThrottled(t, r, limit.ProjectPerMinute.String())
	// And a run after it is refused by the same budget.
	requireThrottled(t, limited.do("POST", "/api/projects/1/endpoints/inline/run", keyP1, map[string]any{"variables": dailyRunVars}),
		limit.ProjectPerMinute.String())
}

// TestSaveThatRefreshesCharged: a save that leaves a materialized
// endpoint without a table for its new definition starts a refresh at
// once, so it is charged as POST materialize is (before, a key whose
// budgets were 1 could change a materialized endpoint's query back and
// forth, each save a refresh, without limit); a save that starts none
// costs nothing.
func TestSaveThatRefreshesCharged(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	secret, _ := h.mint("1", map[string]any{"name": "editor", "scopes": []string{"endpoint:write", "endpoint:read"},
		"runs_per_minute": 1, "materialized_runs_per_minute": 1})
	vars := map[string]string{idFrom: "from", idTo: "to", idCountry: "country"}
	patch := func(body map[string]any) response {
		return h.do("PATCH", "/api/projects/1/endpoints/daily", secret, body)
	}
	mustStatus(t, http.StatusOK, patch(map[string]any{"query": sqlQuery(dailyV2SQL, vars)}))
	requireThrottled(t, patch(map[string]any{"query": sqlQuery(dailySQL, vars)}), apikey.LimitRunsPerMinute)
	requireThrottled(t, h.do("POST", "/api/projects/1/endpoints/", secret,
		map[string]any{"name": "daily2", "query": sqlQuery(dailySQL, vars), "is_materialized": true}), apikey.LimitRunsPerMinute)
	// Saves that start no refresh cost nothing, and are not refused.
	mustStatus(t, http.StatusOK, patch(map[string]any{"description": "per day"}))
	mustStatus(t, http.StatusOK, h.do("PATCH", "/api/projects/1/endpoints/inline", secret, map[string]any{"query": sqlQuery(dailyV2SQL, vars)}))
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", secret,
		map[string]any{"name": "daily3", "query": sqlQuery(dailySQL, vars)}))
	// An unknown endpoint is its 404, not a budget's 429.
	mustStatus(t, http.StatusNotFound, h.do("PATCH", "/api/projects/1/endpoints/nothing", secret, map[string]any{"query": sqlQuery(dailySQL, vars)}))
}
