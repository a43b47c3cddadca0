package endpoint_test

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
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
	if err := demo.Load(context.Background(), e.db, n, 11); err != nil {
		b.Fatal(err)
	}
	var q endpoint.Query
	if err := q.UnmarshalJSON([]byte(trendsByBrowser)); err != nil {
		b.Fatal(err)
	}
	e.create(b, "trends", &q)
	req := endpoint.RunRequest{Variables: map[string]any{"$browser": "Chrome"}}
	ctx := context.Background()
	for b.Loop() {
		res, err := e.svc.Run(ctx, "1", "trends", req)
		if err != nil {
			b.Fatal(err)
		}
		if s := res.Results.(*insight.Result).Series; len(s) != 1 || s[0].Count == 0 {
			b.Fatalf("series %+v", s)
		}
	}
}
