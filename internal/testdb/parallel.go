package testdb

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// SetParallel sets go test's -parallel to n, or to the number of CPUs if
// that is more, unless the command line gives -parallel. It is for the
// TestMain of a package whose parallel tests wait (for a database server,
// a child process, a window of time to pass) rather than compute: go
// test's default, the number of CPUs (2 in CI), would run those waits in
// turn. Call it before m.Run.
func SetParallel(n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return
	}
	if err := flag.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0)))); err != nil {
		panic("testdb: go test has no -test.parallel flag: " + err.Error())
	}
}

// RunParallel is the whole TestMain of such a package: it sets -parallel
// as SetParallel(n) does, runs the tests and exits with their status.
func RunParallel(m *testing.M, n int) {
	SetParallel(n)
	os.Exit(m.Run())
}
