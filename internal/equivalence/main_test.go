package equivalence

import (
	"os"
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
)

// engineParallel is how many parallel tests (one engine's part of a
// test each) the package runs at once unless -parallel says otherwise:
// the servers' parts mostly wait for them (MariaDB's DDL most), so go
// test's default, the number of CPUs (2 in CI), ran MariaDB's part of the
// isolation matrix alone while the CPU idled.
//
// The matrices (TestEquivalence, TestIsolation, the analyst's two,
// TestLifecycleOracle, TestRulesOnEveryEngine) run at the same time, not
// one after the other: each runs its engines in parallel and lasted as
// long as its slowest, MariaDB, while SQLite's parts of the next waited
// (the package used 31 s of CPU in 100 s). Each opens databases of its
// own: a fresh database per pool on the servers, SQLite in memory or in
// a temporary file, a database of its own on chDB (chdbDatabase).
const engineParallel = 6

// closeEngines closes what the package's tests opened for the whole
// process (chDB, clickhouse_chdb_test.go), after they ran.
var closeEngines []func()

func TestMain(m *testing.M) {
	testdb.SetParallel(engineParallel)
	code := m.Run()
	for _, close := range closeEngines {
		close()
	}
	os.Exit(code)
}
