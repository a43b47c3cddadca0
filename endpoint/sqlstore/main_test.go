package sqlstore

import (
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
)

// waitingParallel is how many parallel tests the package runs at once
// unless -parallel says otherwise: they wait for the servers (each check
// of the engines' suites makes a MariaDB database of its own, whose DDL
// takes most of its time) and for budget windows to pass (budgettest's
// checks sleep through them), not for the CPU (3 s of CPU in 25 s of
// wall in CI), so go test's default, the number of CPUs (2 in CI), left
// them waiting in turn.
const waitingParallel = 8

func TestMain(m *testing.M) { testdb.RunParallel(m, waitingParallel) }
