package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newGate holds every run's query (a save's check passes) until the test
// releases it, so that runs are in flight for as long as a test needs.
func newGate(ex driver.Executor) *heldexec.Fake {
	g := heldexec.NewFake(ex, heldexec.Held(100), heldexec.HoldOnly(func(st driver.Statement) bool { return !savesCheck(st) }))
	g.Hold()
	return g
}

// limitHarness serves projects 1 and 2 (each with the endpoint "one",
// SELECT 1) through a handler with opts, over ex.
type limitHarness struct {
	t    *testing.T
	h    http.Handler
	logs *bytes.Buffer
	// async numbers the runs of runAsync.
	async atomic.Int64
}

func newLimitHarness(t *testing.T, ex driver.Executor, opts ...httpapi.Option) *limitHarness {
	t.Helper()
	svc := newService(t, ex)
	for _, p := range []string{"1", "2"} {
		_, err := svc.Create(context.Background(), p, endpoint.CreateRequest{Name: "one", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1 AS one"}})
		require.NoError(t, err)
	}
	keys := httpapi.NewKeyring()
	require.NoError(t, keys.AddAllProjects(keyAdmin))
	logs := &bytes.Buffer{}
	opts = append([]httpapi.Option{httpapi.WithLogger(slog.New(slog.NewTextHandler(logs, nil)))}, opts...)
	return &limitHarness{t: t, h: httpapi.New(svc, keys, opts...), logs: logs}
}

// run runs "one" of project.
func (lh *limitHarness) run(project string) response {
	req := httptest.NewRequest("POST", "/api/projects/"+project+"/endpoints/one/run", nil)
	req.Header.Set("Authorization", "Bearer "+keyAdmin)
	rec := httptest.NewRecorder()
	lh.h.ServeHTTP(rec, req)
	return decodeResponse(lh.t, rec.Code, rec.Header(), rec.Body.Bytes())
}

// runAsync starts a run of project and returns its answer's channel. Each
// run asks for another limit, so that no two are identical runs, which the
// Service would compute once (single flight).
func (lh *limitHarness) runAsync(project string) <-chan response {
	ch := make(chan response, 1)
	body := fmt.Sprintf(`{"limit": %d}`, lh.async.Add(1))
	go func() {
		req := httptest.NewRequest("POST", "/api/projects/"+project+"/endpoints/one/run", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+keyAdmin)
		rec := httptest.NewRecorder()
		lh.h.ServeHTTP(rec, req)
		ch <- response{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.Bytes()}
	}()
	return ch
}

func newLimiter(t *testing.T, cfg limit.Config) *limit.Limiter {
	t.Helper()
	l, err := limit.New(cfg)
	require.NoError(t, err)
	return l
}

// TestRunRate429: past a project's runs per minute, a run is answered 429
// with Retry-After and a detail naming the limit; other projects and other
// routes go on; after Retry-After the run passes.
func TestRunRate429(t *testing.T) {
	clock := endpointtest.NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	l := newLimiter(t, limit.Config{ProjectPerMinute: 2, Now: clock.Now})
	lh := newLimitHarness(t, newExecutor(openEvents(t, 1)), httpapi.WithLimiter(l))
	mustStatus(t, http.StatusOK, lh.run("1"))
	mustStatus(t, http.StatusOK, lh.run("1"))
	r := lh.run("1")
	mustStatus(t, http.StatusTooManyRequests, r)
	checkErrorBody(t, r)
	assert.Equal(t, "throttled", r.Body["code"])
	assert.Equal(t, "Too many runs: project '1' may start 2 runs per minute (project_runs_per_minute). Retry after 90 s.", r.detail())
	assert.Equal(t, "90", r.Header.Get("Retry-After"))
	assert.NotEqual(t, "", r.Header.Get("X-Request-Id"), "r.Header.Get(\"X-Request-Id\") is empty")

	mustStatus(t, http.StatusOK, lh.run("2"))
	req := httptest.NewRequest("GET", "/api/projects/1/endpoints/one", nil)
	req.Header.Set("Authorization", "Bearer "+keyAdmin)
	rec := httptest.NewRecorder()
	lh.h.ServeHTTP(rec, req)
	got, want := rec.Code, http.StatusOK
	assert.Equal(t, want, got, "only runs are limited: rec.Code")

	clock.Advance(89 * time.Second)
	mustStatus(t, http.StatusTooManyRequests, lh.run("1"))
	clock.Advance(time.Second)
	mustStatus(t, http.StatusOK, lh.run("1"))
	v := lh.logs.String()
	assert.True(t, (v == ""), "a 429 is the client's doing, not logged: lh.logs.String() = %v, want it empty", v)
}

func TestRunPerHour429(t *testing.T) {
	clock := endpointtest.NewClock(time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC))
	l := newLimiter(t, limit.Config{ProjectPerHour: 1, Now: clock.Now})
	lh := newLimitHarness(t, newExecutor(openEvents(t, 1)), httpapi.WithLimiter(l))
	mustStatus(t, http.StatusOK, lh.run("1"))
	r := lh.run("1")
	mustStatus(t, http.StatusTooManyRequests, r)
	assert.Contains(t, r.detail(), "(project_runs_per_hour)")
	assert.Equal(t, "7200", r.Header.Get("Retry-After"))
}

// TestRunConcurrency429: with a project's runs in flight at its limit, the
// next is 429; once one ends, a run passes again.
func TestRunConcurrency429(t *testing.T) {
	gate := newGate(newExecutor(openEvents(t, 1)))
	l := newLimiter(t, limit.Config{ProjectConcurrency: 2, BusyRetryAfter: 1500 * time.Millisecond})
	lh := newLimitHarness(t, gate, httpapi.WithLimiter(l))
	first, second := lh.runAsync("1"), lh.runAsync("1")
	<-gate.Started
	<-gate.Started
	r := lh.run("1")
	mustStatus(t, http.StatusTooManyRequests, r)
	assert.Equal(t, "throttled", r.Body["code"])
	assert.Contains(t, r.detail(), "project '1' may have 2 runs in progress (project_concurrency)")
	assert.Equal(t, "2", r.Header.Get("Retry-After"), "rounded up: r.Header.Get(\"Retry-After\")")

	gate.Release() // every held run finishes
	mustStatus(t, http.StatusOK, <-first)
	mustStatus(t, http.StatusOK, <-second)
	mustStatus(t, http.StatusOK, lh.run("1"))
}

// TestGlobalCap503: with the server's runs in flight at the global cap, a
// run of any project is 503 with Retry-After, logged as a warning.
func TestGlobalCap503(t *testing.T) {
	gate := newGate(newExecutor(openEvents(t, 1)))
	l := newLimiter(t, limit.Config{GlobalConcurrency: 1})
	lh := newLimitHarness(t, gate, httpapi.WithLimiter(l))
	held := lh.runAsync("1")
	<-gate.Started
	r := lh.run("2")
	mustStatus(t, http.StatusServiceUnavailable, r)
	checkErrorBody(t, r)
	assert.Equal(t, "overloaded", r.Body["code"])
	got, want := r.detail(), "The server is busy: it takes at most 1 runs at once (global_concurrency). Retry after 1 s (request id "+r.Header.Get("X-Request-Id")+")."
	assert.Equal(t, want, got, "r.detail()")
	assert.Equal(t, "1", r.Header.Get("Retry-After"))
	logs := lh.logs.String()
	assert.Contains(t, logs, "level=WARN")
	assert.Contains(t, logs, "global_concurrency")
	s, sub := logs, "request_id="+r.Header.Get("X-Request-Id")
	assert.Contains(t, s, sub)
	gate.Release()
	mustStatus(t, http.StatusOK, <-held)
	mustStatus(t, http.StatusOK, lh.run("2"))
}

// TestDefaultLimits: a handler without WithLimiter has the default limits:
// a fourth run of a project in flight is refused.
func TestDefaultLimits(t *testing.T) {
	gate := newGate(newExecutor(openEvents(t, 1)))
	lh := newLimitHarness(t, gate)
	var held []<-chan response
	for range limit.DefaultProjectConcurrency {
		held = append(held, lh.runAsync("1"))
		<-gate.Started
	}
	r := lh.run("1")
	mustStatus(t, http.StatusTooManyRequests, r)
	s, sub := r.detail(), fmt.Sprintf("may have %d runs in progress (project_concurrency)", limit.DefaultProjectConcurrency)
	assert.Contains(t, s, sub)
	gate.Release()
	for _, h := range held {
		mustStatus(t, http.StatusOK, <-h)
	}
}

// TestWithLimiterNil turns the limits off.
func TestWithLimiterNil(t *testing.T) {
	gate := newGate(newExecutor(openEvents(t, 1)))
	lh := newLimitHarness(t, gate, httpapi.WithLimiter(nil))
	var held []<-chan response
	for range 2 * limit.DefaultProjectConcurrency {
		held = append(held, lh.runAsync("1"))
		<-gate.Started
	}
	gate.Release()
	for _, h := range held {
		mustStatus(t, http.StatusOK, <-h)
	}
}

// TestMalformedRunCostsNothing: a run refused for its body takes no slot
// and counts towards no rate.
func TestMalformedRunCostsNothing(t *testing.T) {
	l := newLimiter(t, limit.Config{ProjectPerMinute: 1})
	lh := newLimitHarness(t, newExecutor(openEvents(t, 1)), httpapi.WithLimiter(l))
	for range 5 {
		req := httptest.NewRequest("POST", "/api/projects/1/endpoints/one/run", strings.NewReader(`{"variables": `))
		req.Header.Set("Authorization", "Bearer "+keyAdmin)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		lh.h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusBadRequest, rec.Code)
	}
	mustStatus(t, http.StatusOK, lh.run("1"))
}

// TestLimitsUnderLoad sends many concurrent runs of several projects
// through one handler (run it with -race): every answer is 200, 429 or
// 503, every refusal carries Retry-After, and no more runs were ever in
// flight than the caps allow.
func TestLimitsUnderLoad(t *testing.T) {
	const projConc, globalConc = 2, 3
	var mu sync.Mutex
	inFlight := map[string]int{}
	total, maxTotal, maxProject := 0, 0, 0
	counting := heldexec.NewFake(newExecutor(openEvents(t, 1)), heldexec.Around(
		func(ctx context.Context) {
			mu.Lock()
			defer mu.Unlock()
			p := projectOf(ctx)
			inFlight[p]++
			total++
			maxTotal = max(maxTotal, total)
			maxProject = max(maxProject, inFlight[p])
		},
		func(ctx context.Context) {
			mu.Lock()
			defer mu.Unlock()
			inFlight[projectOf(ctx)]--
			total--
		}))
	l := newLimiter(t, limit.Config{ProjectConcurrency: projConc, GlobalConcurrency: globalConc, ProjectPerMinute: limit.Unlimited, ProjectPerHour: limit.Unlimited})
	lh := newLimitHarness(t, counting, httpapi.WithLimiter(l))
	var wg sync.WaitGroup
	statuses := make(chan int, 16*25)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprint(1 + g%2)
			for range 25 {
				req := httptest.NewRequest("POST", "/api/projects/"+p+"/endpoints/one/run", nil)
				req = req.WithContext(context.WithValue(req.Context(), projectKey{}, p))
				req.Header.Set("Authorization", "Bearer "+keyAdmin)
				rec := httptest.NewRecorder()
				lh.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK && rec.Header().Get("Retry-After") == "" {
					t.Errorf("%d without Retry-After", rec.Code)
				}
				statuses <- rec.Code
			}
		}()
	}
	wg.Wait()
	close(statuses)
	seen := map[int]int{}
	for s := range statuses {
		seen[s]++
	}
	for s := range seen {
		s, sub := ([]int{200, 429, 503}), s
		assert.True(t, slices.Contains(s, sub), "%v does not contain %v", s, sub)
	}
	assert.Greater(t, seen[200], 0)
	a, b := maxProject, projConc
	assert.True(t, (a <= b), "maxProject = %v, want <= %v", a, b)
	if a, b := maxTotal, globalConc; !(a <= b) {
		t.Errorf("maxTotal = %v, want <= %v", a, b)
	}
}

type projectKey struct{}

func projectOf(ctx context.Context) string { p, _ := ctx.Value(projectKey{}).(string); return p }

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

// TestRefusedSaveCostsNothing: a save refused for its record or its
// request (a restore of nothing, a create of a name taken, a query that
// does not compile) is refused before the caller's budget is charged, as
// a refused run is: a key whose budgets are 1 can still refresh after it.
func TestRefusedSaveCostsNothing(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	mustStatus(t, http.StatusCreated, h.setupDaily(nil))
	vars := map[string]string{idFrom: "from", idTo: "to", idCountry: "country"}
	cases := []struct {
		name   string
		method string
		path   string
		body   map[string]any
		status int
	}{
		{"a restore of an endpoint never deleted", "PATCH", "/api/projects/1/endpoints/nothing", map[string]any{"deleted": false}, http.StatusNotFound},
		{"a restore of a live endpoint", "PATCH", "/api/projects/1/endpoints/inline", map[string]any{"deleted": false}, http.StatusOK},
		{"a restore with another field", "PATCH", "/api/projects/1/endpoints/daily", map[string]any{"deleted": false, "description": "x"}, http.StatusBadRequest},
		{"a materialized create without a query", "POST", "/api/projects/1/endpoints/", map[string]any{"name": "daily4", "is_materialized": true}, http.StatusBadRequest},
		{"a new query with a name taken", "PATCH", "/api/projects/1/endpoints/daily", map[string]any{"query": sqlQuery(dailyV2SQL, vars), "name": "inline"}, http.StatusConflict},
		{"a new query with a bad freshness", "PATCH", "/api/projects/1/endpoints/daily", map[string]any{"query": sqlQuery(dailyV2SQL, vars), "data_freshness_seconds": -5}, http.StatusBadRequest},
		{"a materialized create of a name taken", "POST", "/api/projects/1/endpoints/", map[string]any{"name": "daily", "query": sqlQuery(dailySQL, vars), "is_materialized": true}, http.StatusConflict},
	}
	// A restore of an endpoint that is not materialized starts no
	// refresh, so it costs nothing either.
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{"name": "spare", "query": sqlQuery(dailySQL, vars)}))
	mustStatus(t, http.StatusOK, h.do("PATCH", "/api/projects/1/endpoints/spare", keyP1, map[string]any{"deleted": true}))
	cases = append(cases, struct {
		name   string
		method string
		path   string
		body   map[string]any
		status int
	}{"a restore of an endpoint not materialized", "PATCH", "/api/projects/1/endpoints/spare", map[string]any{"deleted": false}, http.StatusOK})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			secret, _ := h.mint("1", map[string]any{"name": "k", "scopes": []string{"endpoint:write", "endpoint:read"},
				"runs_per_minute": 1, "materialized_runs_per_minute": 1})
			r := h.do(c.method, c.path, secret, c.body)
			require.Equal(t, c.status, r.Status, "%s", r.Raw)
			r = h.do("POST", "/api/projects/1/endpoints/daily/materialize?wait=true", secret, map[string]any{})
			require.Equal(t, http.StatusOK, r.Status, "the refused save was charged: %s", r.Raw)
		})
	}
}

// TestRefusedQueryCostsNothing: a query refused for its request before
// it is compiled (no query, a bad limit, variables by name on a SQL
// query) is refused before the key's budget is charged.
func TestRefusedQueryCostsNothing(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	sql := sqlQuery("SELECT 1 AS one", nil)
	for _, c := range []struct {
		name string
		body map[string]any
	}{
		{"no query", map[string]any{}},
		{"a negative limit", map[string]any{"query": sql, "limit": -1}},
		{"variables by name on a SQL query", map[string]any{"query": sql, "variables": map[string]any{"x": 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			secret, _ := h.mint("1", map[string]any{"name": "q", "scopes": []string{"query:run"}, "runs_per_minute": 1})
			r := h.do("POST", "/api/projects/1/query/", secret, c.body)
			require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Raw)
			r = h.do("POST", "/api/projects/1/query/", secret, map[string]any{"query": sql})
			require.Equal(t, http.StatusOK, r.Status, "the refused query was charged: %s", r.Raw)
		})
	}
}

// TestInsightRowsFormatCostsNothing: an insight endpoint asked for in a
// format of rows (CSV, NDJSON) is refused before it runs and before the
// key's budget is charged: it was computed, charged, then answered 400.
func TestInsightRowsFormatCostsNothing(t *testing.T) {
	h := newKeysHarness(t, apikey.Config{})
	mustStatus(t, http.StatusCreated, h.do("POST", "/api/projects/1/endpoints/", keyP1, map[string]any{
		"name": "trend", "query": map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "$pageview"}}}}))
	for _, f := range []string{"csv", "ndjson"} {
		t.Run(f, func(t *testing.T) {
			secret, _ := h.mint("1", map[string]any{"name": "r", "scopes": []string{"endpoint:read"}, "runs_per_minute": 1})
			r := h.do("POST", "/api/projects/1/endpoints/trend/run", secret, map[string]any{"format": f})
			require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Raw)
			require.Contains(t, r.detail(), "Format '"+f+"' answers rows")
			r = h.do("POST", "/api/projects/1/endpoints/trend/run", secret, map[string]any{})
			require.Equal(t, http.StatusOK, r.Status, "the refused run was charged: %s", r.Raw)
		})
	}
}

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

type unreachableCounter struct{}

func (unreachableCounter) Take(context.Context, string, int64, time.Duration) (budget.Decision, error) {
	return budget.Decision{}, errors.New("dial tcp 127.0.0.1:6379: connection refused")
}

// TestBrokenBudgetStore: a run whose budget cannot be counted is answered
// 503 with Retry-After and its own code, never run, and the failure is
// logged.
func TestBrokenBudgetStore(t *testing.T) {
	var logs bytes.Buffer
	l := newLimiter(t, limit.Config{Counter: unreachableCounter{}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	lh := newLimitHarness(t, newExecutor(openEvents(t, 1)), httpapi.WithLimiter(l))
	res := lh.run("1")
	require.Equal(t, http.StatusServiceUnavailable, res.Status, "%s", res.Raw)
	require.Equal(t, "1", res.Header.Get("Retry-After"))
	require.Contains(t, string(res.Raw), endpoint.CodeBudgetUnavailable)
	require.Contains(t, string(res.Raw), "budget store is unavailable")
	require.Contains(t, logs.String(), "connection refused")
	require.EqualValues(t, 1, l.CounterFailures())
}
