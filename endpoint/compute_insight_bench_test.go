package endpoint_test

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/stretchr/testify/require"
)

// BenchmarkInsightRun runs an inline insight endpoint through the Service
// on real SQLite: the daily pageview trend by browser over May, filtered
// to one browser, on 100,000 demo events. Nearly all of it is SQLite's
// time; compare with insight's BenchmarkTrendsInline for the library's
// own share.
func BenchmarkInsightRun(b *testing.B) {
	e := newEnv(b)
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	require.NoError(b, demo.Load(context.Background(), e.db, n, 11))
	var q endpoint.Query
	require.NoError(b, q.UnmarshalJSON([]byte(trendsByBrowser)))
	e.create(b, "trends", &q)
	req := endpoint.RunRequest{Variables: map[string]any{"$browser": "Chrome"}}
	ctx := context.Background()
	for b.Loop() {
		res, err := e.svc.Run(ctx, "1", "trends", req)
		require.NoError(b, err)
		s := res.Results.(*insight.Result).Series
		require.Len(b, s, 1, "series %+v", s)
		require.NotEqual(b, float64(0), s[0].Count, "series %+v", s)
	}
}
