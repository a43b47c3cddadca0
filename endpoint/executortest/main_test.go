package executortest_test

import (
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
)

// childParallel is how many parallel tests the package runs at once
// unless -parallel says otherwise: TestSuiteCatchesBrokenExecutors's
// broken executors each run the suite in a child process, and the two
// that ignore Timeout wait about 6 s for the suite's backstop, which at
// go test's default, the number of CPUs (2 in CI), held both places while
// the others waited.
const childParallel = 8

func TestMain(m *testing.M) { testdb.RunParallel(m, childParallel) }
