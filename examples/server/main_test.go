package main

import (
	"os"
	"testing"

	"github.com/endpointkit/endpointkit/internal/exampleserver"
)

// serveEnv, set to 1, makes the test binary run the server's main instead
// of the tests: the tests that drive the server as a process of its own
// (the fleet's two servers, MCP over stdio) start this binary, which holds
// the server's code, rather than building it (go build linked a binary
// of its own for each run of the package: 5 to 20 s of the package's
// time in CI).
const serveEnv = "ENDPOINTKIT_TEST_SERVE"

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
	os.Exit(m.Run())
}
