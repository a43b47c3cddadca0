package main

import (
	"os"
	"testing"

	"github.com/endpointkit/endpointkit/internal/exampleserver"
	"github.com/endpointkit/endpointkit/internal/testdb"
)

// serveEnv, set to 1, makes the test binary run the server's main instead
// of the tests: the tests that drive the server as a process of its own
// (the fleet's two servers, MCP over stdio) start this binary, which holds
// the server's code, rather than building it (go build linked a binary
// of its own for each run of the package: 5 to 20 s of the package's
// time in CI).
const serveEnv = "ENDPOINTKIT_TEST_SERVE"

// packageParallel is how many parallel tests the package runs at once
// unless -parallel says otherwise: its parallel tests (the browser tests'
// six pages, see onPages, and the materialize progress's, the demo load
// of a server process) mostly wait for Chromium, a page's timers and the
// server, so go test's default, the number of CPUs (2 in CI), ran the
// browser tests two by two, for 60 of the package's 90 s in CI, while the
// CPU idled.
const packageParallel = 8

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		main()
		os.Exit(0)
	}
	self, err := os.Executable()
	exampleserver.Binary = func() (string, error) { return self, err }
	// The processes the tests start serve (the tests start no other copy
	// of this binary).
	if err := os.Setenv(serveEnv, "1"); err != nil {
		panic(err)
	}
	testdb.SetParallel(packageParallel)
	code := m.Run()
	stopBrowser()
	os.Exit(code)
}
