package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"go/build"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObserver: runs count by status, errors by code, cache hits, latency
// and refreshes; a run refused before its endpoint was found is counted
// under the endpoint "", whatever name the client sent.
// runsHead and refreshesHead are the HELP and TYPE lines of the runs and
// refreshes counters, as the registry writes them.
const (
	runsHead = `
# HELP endpointkit_runs_total Endpoint runs, by HTTP status of the answer, cached or not, from the stored table or not.
# TYPE endpointkit_runs_total counter
`
	refreshesHead = `
# HELP endpointkit_refreshes_total Refreshes of materialized endpoints, by trigger and result (ok, failed).
# TYPE endpointkit_refreshes_total counter
`
)

func TestObserver(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := metrics.New(reg)
	require.NoError(t, err)
	ctx := context.Background()
	o.ObserveRun(ctx, endpoint.RunEvent{Project: "1", Endpoint: "daily", Version: 1, Status: 200, Duration: 3 * time.Millisecond})
	o.ObserveRun(ctx, endpoint.RunEvent{Project: "1", Endpoint: "daily", Version: 1, Status: 200, Cached: true, Duration: time.Millisecond / 10})
	o.ObserveRun(ctx, endpoint.RunEvent{Project: "1", Endpoint: "daily", Version: 1, Status: 400, Code: "unknown_variable"})
	o.ObserveRun(ctx, endpoint.RunEvent{Project: "1", Endpoint: "made-up-by-a-client", Status: 404, Code: "not_found", LogErr: errors.New("x")})
	o.ObserveRefresh(ctx, endpoint.RefreshEvent{Project: "1", Endpoint: "daily", Trigger: "scheduled", Duration: time.Second})
	o.ObserveRefresh(ctx, endpoint.RefreshEvent{Project: "1", Endpoint: "daily", Trigger: "manual", Err: errors.New("failed")})

	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(runsHead+`
endpointkit_runs_total{cached="false",endpoint="",materialized="false",project="1",status="404"} 1
endpointkit_runs_total{cached="false",endpoint="daily",materialized="false",project="1",status="200"} 1
endpointkit_runs_total{cached="false",endpoint="daily",materialized="false",project="1",status="400"} 1
endpointkit_runs_total{cached="true",endpoint="daily",materialized="false",project="1",status="200"} 1
# HELP endpointkit_run_errors_total Endpoint runs that failed, by error code.
# TYPE endpointkit_run_errors_total counter
endpointkit_run_errors_total{code="not_found",endpoint="",project="1"} 1
endpointkit_run_errors_total{code="unknown_variable",endpoint="daily",project="1"} 1
# HELP endpointkit_cache_hits_total Endpoint runs answered without a query (result cache or a shared identical run).
# TYPE endpointkit_cache_hits_total counter
endpointkit_cache_hits_total{endpoint="daily",project="1"} 1
`+refreshesHead+`
endpointkit_refreshes_total{endpoint="daily",project="1",result="failed",trigger="manual"} 1
endpointkit_refreshes_total{endpoint="daily",project="1",result="ok",trigger="scheduled"} 1
# HELP endpointkit_run_log_errors_total Runs the run log failed to record: entries dropped from a full buffer, and background writes that failed.
# TYPE endpointkit_run_log_errors_total counter
endpointkit_run_log_errors_total 1
`), "endpointkit_runs_total", "endpointkit_run_errors_total", "endpointkit_cache_hits_total", "endpointkit_refreshes_total", "endpointkit_run_log_errors_total"))
	require.Equal(t, 3, testutil.CollectAndCount(reg, "endpointkit_run_duration_seconds"))
	require.Equal(t, 1, testutil.CollectAndCount(reg, "endpointkit_refresh_duration_seconds"))
	if _, err := metrics.New(reg); err == nil {
		t.Fatal("registering twice succeeded")
	}
}

// TestCoreDoesNotImportPrometheus: no package of the module but this one
// and the example server reaches client_golang, directly or not.
func TestCoreDoesNotImportPrometheus(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	const module = "github.com/endpointkit/endpointkit"
	allowed := map[string]bool{module + "/endpoint/metrics": true, module + "/examples/server": true}
	seen := map[string]bool{}
	var walk func(path string, from []string)
	walk = func(path string, from []string) {
		if seen[path] || !strings.HasPrefix(path, module) {
			return
		}
		seen[path] = true
		pkg, err := build.Import(path, root, 0)
		require.NoError(t, err, "%s", path)
		for _, imp := range pkg.Imports {
			assert.False(t, strings.HasPrefix(imp, "github.com/prometheus/"), "%s imports %s (via %v)", path, imp, from)
			walk(imp, append(from, path))
		}
	}
	for _, dir := range []string{"endpoint", "sql/access", "endpoint/embed", "sql/engine", "endpoint/endpointtest",
		"endpoint/httpapi", "endpoint/limit", "endpoint/openapi", "endpoint/sqlexec", "endpoint/sqlstore", "endpoint/storetest",
		"endpoint/executortest", "insight", "materialize", "placeholder", "variable", "examples/demo"} {
		if allowed[module+"/"+dir] {
			continue
		}
		walk(module+"/"+dir, nil)
	}
	require.GreaterOrEqual(t, len(seen), 10, "walked only")
}

// TestObserverCountsEdgeIndexWarnings: a refresh that found a read of the
// source beside the stored table no index serves, or could not read the
// engine's plan, is counted by endpoint and result; one whose reads use an
// index, or were not checked, is not.
func TestObserverCountsEdgeIndexWarnings(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := metrics.New(reg)
	require.NoError(t, err)
	ctx := context.Background()
	for _, edge := range []string{endpoint.EdgeIndexNotUsed, endpoint.EdgeIndexNotUsed, endpoint.EdgeIndexCheckFailed, endpoint.EdgeIndexUsed, endpoint.EdgeIndexNotChecked, ""} {
		o.ObserveRefresh(ctx, endpoint.RefreshEvent{Project: "1", Endpoint: "daily", Trigger: "scheduled", EdgeIndex: edge, EdgeIndexWarning: "x"})
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP endpointkit_edge_index_warnings_total Refreshes of materialized endpoints that found a read of the source beside the stored table (partial buckets, live tail) no index serves (not_used), or could not read the engine's plan of it (check_failed).
# TYPE endpointkit_edge_index_warnings_total counter
endpointkit_edge_index_warnings_total{endpoint="daily",project="1",result="check_failed"} 1
endpointkit_edge_index_warnings_total{endpoint="daily",project="1",result="not_used"} 2
`), "endpointkit_edge_index_warnings_total"))
}

// TestEndpointLabelsBounded: a project creating and running 100,000
// endpoints adds at most DefaultMaxEndpoints names to the scrape; the rest
// are counted under OtherEndpoint, nothing lost.
func TestEndpointLabelsBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := metrics.New(reg)
	require.NoError(t, err)
	ctx := context.Background()
	const n = 100000
	for i := range n {
		o.ObserveRun(ctx, endpoint.RunEvent{Project: "2", Endpoint: fmt.Sprintf("e%d", i), Version: 1, Status: 200})
	}
	o.ObserveRefresh(ctx, endpoint.RefreshEvent{Project: "2", Endpoint: "e99999", Trigger: "manual"})
	runs := runsByEndpoint(t, reg)
	require.Len(t, runs, metrics.DefaultMaxEndpoints+1, "%d run series, want %d names and %q", len(runs), metrics.DefaultMaxEndpoints, metrics.OtherEndpoint)
	other := runs[metrics.OtherEndpoint]
	require.Equal(t, float64(n-metrics.DefaultMaxEndpoints), other, "%v runs counted under %q, want %d", other, metrics.OtherEndpoint, n-metrics.DefaultMaxEndpoints)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(refreshesHead+`
endpointkit_refreshes_total{endpoint="_other",project="2",result="ok",trigger="manual"} 1
`), "endpointkit_refreshes_total"))
}

// TestWithMaxEndpoints: the first names seen keep their label, later ones
// go to OtherEndpoint, the unknown endpoint "" is never capped, and a
// negative cap labels every name.
func TestWithMaxEndpoints(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	o, err := metrics.New(reg, metrics.WithMaxEndpoints(2))
	require.NoError(t, err)
	for _, ev := range []endpoint.RunEvent{
		{Project: "1", Endpoint: "a", Version: 1, Status: 200},
		{Project: "2", Endpoint: "a", Version: 1, Status: 200}, // another project's a is another pair
		{Project: "1", Endpoint: "b", Version: 1, Status: 200},
		{Project: "1", Endpoint: "a", Version: 1, Status: 200},
		{Project: "1", Endpoint: "nope", Status: 404, Code: "not_found"},
	} {
		o.ObserveRun(ctx, ev)
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(runsHead+`
endpointkit_runs_total{cached="false",endpoint="",materialized="false",project="1",status="404"} 1
endpointkit_runs_total{cached="false",endpoint="_other",materialized="false",project="1",status="200"} 1
endpointkit_runs_total{cached="false",endpoint="a",materialized="false",project="1",status="200"} 2
endpointkit_runs_total{cached="false",endpoint="a",materialized="false",project="2",status="200"} 1
`), "endpointkit_runs_total"))

	reg = prometheus.NewRegistry()
	o, err = metrics.New(reg, metrics.WithMaxEndpoints(-1))
	require.NoError(t, err)
	for i := range 2000 {
		o.ObserveRun(ctx, endpoint.RunEvent{Project: "1", Endpoint: fmt.Sprintf("e%d", i), Version: 1, Status: 200})
	}
	require.Len(t, runsByEndpoint(t, reg), 2000)
}

// TestHandlerNeedsTheMetricsKey: the metrics answer only their own key.
func TestHandlerNeedsTheMetricsKey(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := metrics.New(reg)
	require.NoError(t, err)
	o.ObserveRun(context.Background(), endpoint.RunEvent{Project: "1", Endpoint: "acme_corp_churn_report", Version: 1, Status: 200})
	for _, tc := range []struct {
		key, auth string
		status    int
	}{
		{"m-key", "", 401},
		{"m-key", "Bearer wrong", 401},
		{"m-key", "Bearer m-key2", 401},
		{"m-key", "Basic m-key", 401},
		{"m-key", "Bearer m-key", 200},
		{"", "Bearer ", 401},
		{"", "", 401},
	} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		metrics.Handler(reg, tc.key).ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Body)
		assert.Equal(t, tc.status, rec.Code, "key %q, %q", tc.key, tc.auth)
		leaked := strings.Contains(string(body), "acme_corp")
		assert.Equal(t, tc.status == http.StatusOK, leaked, "key %q, %q: endpoint name shown: %v\n%s", tc.key, tc.auth, leaked, body)
		if tc.status == 401 && (rec.Header().Get("WWW-Authenticate") == "" || !strings.Contains(string(body), `"detail"`)) {
			t.Errorf("key %q, %q: 401 without WWW-Authenticate or detail: %s", tc.key, tc.auth, body)
		}
	}
}

// runsByEndpoint sums endpointkit_runs_total of reg by endpoint label.
func runsByEndpoint(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "endpointkit_runs_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "endpoint" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// TestUncheckedSavesCounted: each query saved unchecked (the engine failed
// on a value while checking it) is counted, so that the fallback is
// visible to the operator, not only in a log line.
func TestUncheckedSavesCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := metrics.New(reg)
	require.NoError(t, err)
	var obs endpoint.Observer = o
	so, ok := obs.(endpoint.SaveCheckObserver)
	require.True(t, ok, "the metrics Observer is told of unchecked saves")
	ev := endpoint.SaveCheckEvent{Project: "1", Endpoint: "zero", Err: errors.New("division by zero")}
	so.ObserveSaveCheck(context.Background(), ev)
	endpoint.MultiObserver(endpoint.SlogObserver{}, o).(endpoint.SaveCheckObserver).ObserveSaveCheck(context.Background(), ev)
	n, err := testutil.GatherAndCount(reg, "endpointkit_unchecked_saves_total")
	require.NoError(t, err)
	assert.Equal(t, 1, n, "one series")
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var got float64
	for _, mf := range mfs {
		if mf.GetName() == "endpointkit_unchecked_saves_total" {
			got = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	assert.Equal(t, float64(2), got, "both saves counted, the second through MultiObserver")
}

// TestAnswersNotCachedCounted: an answer computed with the result cache on
// and not kept (RunEvent.CacheErr) is counted, so that an operator sees
// exports too heavy for the cache, not only a log line; an answer kept is
// not.
func TestAnswersNotCachedCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := metrics.New(reg)
	require.NoError(t, err)
	ctx := context.Background()
	o.ObserveRun(ctx, endpoint.RunEvent{Project: "1", Endpoint: "export", Version: 1, Status: 200,
		CacheErr: fmt.Errorf("%w: too heavy", endpoint.ErrAnswerNotCached)})
	o.ObserveRun(ctx, endpoint.RunEvent{Project: "1", Endpoint: "daily", Version: 1, Status: 200})
	assert.Equal(t, float64(1), counterNamed(t, reg, "endpointkit_answers_not_cached_total"))
}

// counterNamed is the value of the counter without labels named name, as
// reg gathers it.
func counterNamed(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			require.Len(t, mf.GetMetric(), 1)
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
