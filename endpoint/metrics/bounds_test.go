package metrics_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
)

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
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP endpointkit_refreshes_total Refreshes of materialized endpoints, by trigger and result (ok, failed).
# TYPE endpointkit_refreshes_total counter
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
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP endpointkit_runs_total Endpoint runs, by HTTP status of the answer, cached or not, from the stored table or not.
# TYPE endpointkit_runs_total counter
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
