package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
)

// BenchmarkObserveRun is the Observer's share of a run, from goroutines
// in parallel as a server's requests are (-cpu 1,8 for one client and
// eight):
//
//	go test ./endpoint/metrics -run '^$' -bench ObserveRun -benchmem -cpu 1,8
func BenchmarkObserveRun(b *testing.B) {
	o, err := metrics.New(prometheus.NewRegistry())
	require.NoError(b, err)
	ev := endpoint.RunEvent{Project: "1", Endpoint: "daily", Version: 3, Status: 200, Duration: time.Millisecond}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			o.ObserveRun(ctx, ev)
		}
	})
}
