package endpoint_test

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/require"
)

// BenchmarkRunOverhead measures the library's own cost per run: a full
// Service.Run (options, endpoint look-up in the MemoryStore, cached compiled
// version, three variables checked and coerced, paging, rendering, result
// shaping, last_executed_at throttle) over an executor that returns fixed
// rows without doing any work.
func BenchmarkRunOverhead(b *testing.B) {
	fx := &fixedExecutor{res: &driver.Result{
		Columns: []string{"day", "orders", "revenue"},
		Types:   []string{"TEXT", "INTEGER", "REAL"},
		Rows:    [][]any{{"2025-05-01", int64(12), 340.5}, {"2025-05-02", int64(9), 120.0}, {"2025-05-03", int64(15), 512.25}},
	}}
	e := newEnv(b, func(c *endpoint.Config) { c.Executor = fx })
	e.create(b, "daily", e.query(
		"SELECT substr(created, 1, 10) AS day, count(*) AS orders, sum(amount) AS revenue FROM orders "+
			"WHERE country = {variables.country} AND amount >= {variables.min_amount} AND created >= {variables.from} "+
			"GROUP BY day ORDER BY day", "country", "min_amount", "from"))
	ctx := context.Background()
	req := endpoint.RunRequest{Variables: map[string]any{"country": "US", "min_amount": "10", "from": "2025-05-01"}}
	_, err := e.svc.Run(ctx, "1", "daily", req)
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := e.svc.Run(ctx, "1", "daily", req)
		if err != nil || res.HasMore {
			b.Fatal(err)
		}
	}
}
