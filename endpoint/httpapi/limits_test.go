package httpapi_test

import (
	"bytes"
	"context"
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
	"github.com/endpointkit/endpointkit/endpoint/driver"
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

// manualClock is a clock the test moves.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manualClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
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
	clock := &manualClock{t: time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)}
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

	clock.Add(89 * time.Second)
	mustStatus(t, http.StatusTooManyRequests, lh.run("1"))
	clock.Add(time.Second)
	mustStatus(t, http.StatusOK, lh.run("1"))
	v := lh.logs.String()
	assert.True(t, (v == ""), "a 429 is the client's doing, not logged: lh.logs.String() = %v, want it empty", v)
}

func TestRunPerHour429(t *testing.T) {
	clock := &manualClock{t: time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)}
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
