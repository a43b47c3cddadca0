package budgettest_test

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// sleepingParallel is how many parallel tests the package runs at once
// unless -parallel says otherwise: the suite's checks of windows sleep
// through them (no CPU at all), so go test's default, the number of CPUs
// (2 in CI), ran the sleeps in turn.
const sleepingParallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(max(sleepingParallel, runtime.GOMAXPROCS(0)))); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
