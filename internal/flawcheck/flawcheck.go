// Package flawcheck proves that a conformance suite catches a broken
// implementation: it runs one test of the test binary again, in a child
// process, with a flaw named in an environment variable (the test builds
// the implementation with that flaw and runs the suite on it), and
// requires the suite to have failed, in the check the flaw breaks. The
// child process keeps the suite's failures from failing the parent.
package flawcheck

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Child reports whether this process is a child RequireCaught started
// (env is set): the parent test then skips.
func Child(env string) bool { return os.Getenv(env) != "" }

// RequireCaught runs the subtest check of the test named test of this
// binary, alone (the suite's other checks prove nothing of the flaw and
// may sleep through windows), in a child process with env set to flaw, and requires the child to exit with code 1
// (a failed test, not a crash) and to have failed test's subtest check.
// what names the implementation in the messages ("a store", "a counter").
func RequireCaught(t *testing.T, test, env, flaw, check, what string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$/^"+regexp.QuoteMeta(strings.ReplaceAll(check, " ", "_"))+"$", "-test.count=1", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), env+"="+flaw)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the suite on %s with flaw %q: %v (want exit code 1)\n%s", what, flaw, err, out)
	require.Equal(t, 1, exit.ExitCode(), "the suite on %s with flaw %q: %v (want exit code 1)\n%s", what, flaw, err, out)
	want := "--- FAIL: " + test + "/" + check + " "
	assert.Contains(t, string(out), want, "flaw %q: want a failure in %s, got:\n%s", flaw, check, out)
}
