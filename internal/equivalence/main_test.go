package equivalence

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// engineParallel is how many parallel tests (one engine's part of a
// test each) the package runs at once unless -parallel says otherwise:
// the servers' parts mostly wait for them (MariaDB's DDL most), so go
// test's default, the number of CPUs (2 in CI), ran MariaDB's part of the
// isolation matrix alone while the CPU idled.
const engineParallel = 6

// closeEngines closes what the package's tests opened for the whole
// process (chDB, clickhouse_chdb_test.go), after they ran.
var closeEngines []func()

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(max(engineParallel, runtime.GOMAXPROCS(0)))); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	for _, close := range closeEngines {
		close()
	}
	os.Exit(code)
}
