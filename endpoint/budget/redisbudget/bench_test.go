package redisbudget_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/budget/redisbudget"
	"github.com/stretchr/testify/require"
)

// BenchmarkTake is the cost of counting one run in a budget, over 1,000
// keys, in this process (memory) and in Redis (one EVALSHA). Run with
//
//	go test ./endpoint/budget/redisbudget -run '^$' -bench Take -benchtime 2s
func BenchmarkTake(b *testing.B) {
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
	b.Run("redis", func(b *testing.B) { bench(b, redisbudget.New(client(b), "endpointkit:bench:")) })
}
