package redisbudget_test

import (
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/budget/budgettest"
	"github.com/endpointkit/endpointkit/endpoint/budget/redisbudget"
)

// BenchmarkTake is the cost of counting one run in a budget, over 1,000
// keys, in this process (memory) and in Redis (one EVALSHA). Run with
//
//	go test ./endpoint/budget/redisbudget -run '^$' -bench Take -benchtime 2s
func BenchmarkTake(b *testing.B) {
	b.Run("memory", func(b *testing.B) { budgettest.BenchTake(b, budget.NewMemory(budget.MemoryConfig{})) })
	b.Run("redis", func(b *testing.B) { budgettest.BenchTake(b, redisbudget.New(client(b), "endpointkit:bench:")) })
}
