//go:build chdb

package chdb

import (
	"os"
	"testing"
)

// TestMain closes the process's chDB once the tests are done: left open,
// a process built with -race hangs on exit.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	os.Exit(code)
}
