package equivalence

import (
	"os"
	"runtime/debug"
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

// gcPercent is the package's GOGC unless the environment sets one: the
// matrices allocate much and keep little (answers compared and dropped),
// and at Go's default of 100 the collector took a fifth of the test
// binary's CPU (20 s of user time at 100, 16.5 s at 400, alternating, on
// this package alone); gcMemoryLimit keeps the heap the larger percentage
// allows bounded (it peaked at 1 GB of RSS, against 360 to 520 MB).
const (
	gcPercent     = 400
	gcMemoryLimit = 1536 << 20
)

func TestMain(m *testing.M) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
		if os.Getenv("GOMEMLIMIT") == "" {
			debug.SetMemoryLimit(gcMemoryLimit)
		}
	}
	testdb.SetParallel(engineParallel)
	code := m.Run()
	for _, close := range closeEngines {
		close()
	}
	os.Exit(code)
}
