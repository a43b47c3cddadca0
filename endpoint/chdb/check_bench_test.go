//go:build chdb

package chdb

import (
	"context"
	"strconv"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// BenchmarkSave: Create of a SQL endpoint on ClickHouse (chDB), with the
// check (ClickHouse analyzes the scoped query with LIMIT 0) and without it
// (an executor that answers at once), as endpoint's BenchmarkSave on the
// other engines.
//
//	eval "$(scripts/engines env)"; go test -tags chdb ./endpoint/chdb -run '^$' -bench BenchmarkSave -benchtime 2s
func BenchmarkSave(b *testing.B) {
	x := executor(b)
	loadDemo(b, x)
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	require.NoError(b, err)
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users FROM events " +
		"WHERE timestamp >= '2025-01-01' AND event <> 'x' GROUP BY event ORDER BY n DESC"}
	// answersAtOnce answers every query with no column at once, without
	// the engine: a save over it does all a save does but the engine's work
	// of the check.
	answersAtOnce := func(x driver.Executor) driver.Executor {
		return heldexec.NewFake(x, heldexec.Answer(&driver.Result{}), heldexec.Unrecorded())
	}
	for _, mode := range []struct {
		name string
		x    driver.Executor
	}{{"check", x}, {"nocheck", answersAtOnce(x)}} {
		b.Run(mode.name, func(b *testing.B) {
			svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: mode.x, Access: policy})
			require.NoError(b, err)
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "e" + strconv.Itoa(i), Query: q})
				require.NoError(b, err)
			}
		})
	}
}
