package budgettest_test

import (
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
)

// sleepingParallel is how many parallel tests the package runs at once
// unless -parallel says otherwise: the suite's checks of windows sleep
// through them (no CPU at all), so go test's default, the number of CPUs
// (2 in CI), ran the sleeps in turn.
const sleepingParallel = 8

func TestMain(m *testing.M) { testdb.RunParallel(m, sleepingParallel) }
