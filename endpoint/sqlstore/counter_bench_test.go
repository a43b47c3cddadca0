package sqlstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/stretchr/testify/require"
)

// BenchmarkCounterTake is the cost of counting one run in a budget (one
// Take; a run costs one to five: the project's minute and hour, the key's
// minute and hour, a token's minute), over 1,000 keys, in this process
// (memory) and in each SQL store (a shared counter). Run with
//
//	go test ./endpoint/sqlstore -run '^$' -bench CounterTake -benchtime 2s
func BenchmarkCounterTake(b *testing.B) {
	bench := func(b *testing.B, c budget.Counter) {
		keys := make([]string, 1000)
		for i := range keys {
			keys[i] = fmt.Sprintf("bench/%d/%d", time.Now().UnixNano(), i)
		}
		ctx := context.Background()
		i := 0
		for b.Loop() {
			_, err := c.Take(ctx, keys[i%len(keys)], 1<<40, time.Minute)
			require.NoError(b, err)
			i++
		}
	}
	b.Run("memory", func(b *testing.B) { bench(b, budget.NewMemory(budget.MemoryConfig{})) })
	b.Run("sqlite", func(b *testing.B) {
		s, _ := openFile(b, tempFile(b))
		bench(b, s.Counter())
	})
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			testdb.Require(b, e.env)
			bench(b, openEngine(b, e.dialect, e.open).Counter())
		})
	}
}
