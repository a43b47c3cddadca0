package endpoint_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/require"
)

// answersAtOnce answers every query with no column at once, without the
// engine: a save over it does all a save does but the engine's work of
// the check.
type answersAtOnce struct{ driver.Executor }

func (answersAtOnce) Query(context.Context, driver.Statement, driver.Bounds) (*driver.Result, error) {
	return &driver.Result{}, nil
}

// checkedSQL is a query of the size an editor saves: a filter, a group, a
// variable.
const checkedSQL = "SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users FROM events " +
	"WHERE timestamp >= '2025-01-01' AND event <> 'x' GROUP BY event ORDER BY n DESC"

// BenchmarkSave: Create of a SQL endpoint on each engine, with the check
// (the engine describes the scoped query with LIMIT 0) and without it (an
// executor that answers at once): the difference is what the check adds
// to a save. ClickHouse's is in package endpoint/chdb.
//
//	eval "$(scripts/engines env)"; go test ./endpoint -run '^$' -bench BenchmarkSave -benchtime 2s
func BenchmarkSave(b *testing.B) {
	for _, e := range checkEngines {
		for _, mode := range []struct {
			name string
			wrap func(driver.Executor) driver.Executor
		}{
			{"check", func(x driver.Executor) driver.Executor { return x }},
			{"nocheck", func(x driver.Executor) driver.Executor { return answersAtOnce{x} }},
		} {
			b.Run(e.name+"/"+mode.name, func(b *testing.B) {
				svc := checkServiceOn(b, e, mode.wrap)
				ctx := context.Background()
				q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: checkedSQL}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "e" + strconv.Itoa(i), Query: q})
					require.NoError(b, err)
				}
			})
		}
	}
}
