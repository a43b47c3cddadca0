package metrics_test

import (
	"context"
	"errors"
	"go/build"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
)

// TestObserver: runs count by status, errors by code, cache hits, latency
// and refreshes; a run refused before its endpoint was found is counted
// under the endpoint "", whatever name the client sent.
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

	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP endpointkit_runs_total Endpoint runs, by HTTP status of the answer, cached or not, from the stored table or not.
# TYPE endpointkit_runs_total counter
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
# HELP endpointkit_refreshes_total Refreshes of materialized endpoints, by trigger and result (ok, failed).
# TYPE endpointkit_refreshes_total counter
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
