package sqlstore

import (
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/budget/budgettest"
	"github.com/endpointkit/endpointkit/internal/testdb"
)

// BenchmarkCounterTake is the cost of counting one run in a budget (one
// Take; a run costs one to five: the project's minute and hour, the key's
// minute and hour, a token's minute), over 1,000 keys, in this process
// (memory) and in each SQL store (a shared counter). Run with
//
//	go test ./endpoint/sqlstore -run '^$' -bench CounterTake -benchtime 2s
func BenchmarkCounterTake(b *testing.B) {
	b.Run("memory", func(b *testing.B) { budgettest.BenchTake(b, budget.NewMemory(budget.MemoryConfig{})) })
	b.Run("sqlite", func(b *testing.B) {
		s, _ := openFile(b, tempFile(b))
		budgettest.BenchTake(b, s.Counter())
	})
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			testdb.Require(b, e.env)
			budgettest.BenchTake(b, openEngine(b, e.dialect, e.open).Counter())
		})
	}
}
