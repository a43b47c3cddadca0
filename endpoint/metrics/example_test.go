package metrics_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
)

func ExampleNew() {
	reg := prometheus.NewRegistry()
	obs, err := metrics.New(reg)
	if err != nil {
		log.Fatal(err)
	}
	// In a host: endpoint.Config{Observer: endpoint.MultiObserver(endpoint.SlogObserver{}, obs)},
	// and metrics.Handler(reg, metricsKey) at /metrics.
	obs.ObserveRun(context.Background(), endpoint.RunEvent{Project: "1", Endpoint: "daily", Version: 1, Status: 200, Cached: true, Duration: time.Millisecond})
	n, _ := testutil.GatherAndCount(reg, "endpointkit_cache_hits_total")
	fmt.Println("cache hit series:", n)
	err = testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP endpointkit_cache_hits_total Endpoint runs answered without a query (result cache or a shared identical run).
# TYPE endpointkit_cache_hits_total counter
endpointkit_cache_hits_total{endpoint="daily",project="1"} 1
`), "endpointkit_cache_hits_total")
	fmt.Println("compare:", err)
	// Output:
	// cache hit series: 1
	// compare: <nil>
}

func ExampleHandler() {
	reg := prometheus.NewRegistry()
	obs, err := metrics.New(reg, metrics.WithMaxEndpoints(100))
	if err != nil {
		log.Fatal(err)
	}
	obs.ObserveRun(context.Background(), endpoint.RunEvent{Project: "1", Endpoint: "daily", Version: 1, Status: 200})
	h := metrics.Handler(reg, "metrics-secret") // in a host: mux.Handle("GET /metrics", h)
	for _, auth := range []string{"", "Bearer an-api-key", "Bearer metrics-secret"} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Printf("%q: %d, names endpoints: %v\n", auth, rec.Code, strings.Contains(rec.Body.String(), `endpoint="daily"`))
	}
	// Output:
	// "": 401, names endpoints: false
	// "Bearer an-api-key": 401, names endpoints: false
	// "Bearer metrics-secret": 200, names endpoints: true
}
