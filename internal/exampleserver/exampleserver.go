// Package exampleserver builds the example server (examples/server) once
// per test binary and runs it as a process on a free port, for the tests
// that drive the real binary: the fleet and MCP tests of examples/server
// and the shell examples of the documents (internal/docs).
package exampleserver

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Package is the import path Binary builds.
const Package = "github.com/endpointkit/endpointkit/examples/server"

// StartTimeout is how long Start waits for the server to serve.
const StartTimeout = 3 * time.Minute

// Binary builds examples/server once per test binary and returns the
// path of the executable; the go command must be on PATH and the test run
// inside the module.
var Binary = sync.OnceValues(func() (string, error) {
	dir, err := binaryDir()
	if err != nil {
		return "", err
	}
	// go build leaves an executable that is up to date as it is: a run of
	// the tests after one that built the same code (or another package's
	// tests of the same run) relinks nothing, where a new temporary
	// directory each time linked the server anew, 5 to 10 s of CPU each
	// in the README's run (internal/docs and this package's test). The
	// directory's lock keeps two test binaries from building into it at
	// once; where there is none, each builds into a directory of its own.
	if unlock, err := lockDir(dir); err == nil {
		defer unlock()
	} else if dir, err = os.MkdirTemp("", "endpointkit-server-"); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "server")
	out, err := exec.Command("go", "build", "-o", bin, Package).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", Package, err, out)
	}
	return bin, nil
})

// binaryDir is where Binary builds: a directory of the user's cache of
// its own for each copy of the module (a worktree's code is not
// another's), or a new temporary one when there is no cache directory.
func binaryDir() (string, error) {
	cache, err := os.UserCacheDir()
	root, rerr := moduleRoot()
	if err != nil || rerr != nil {
		return os.MkdirTemp("", "endpointkit-server-")
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cache, "endpointkit", "exampleserver", hex.EncodeToString(sum[:8]))
	return dir, os.MkdirAll(dir, 0o755)
}

// moduleRoot is the directory of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}

// served is the line by which the server says it serves, and its base URL.
var served = regexp.MustCompile(`server on (http://\S+)`)

// Start runs the example server with args on a free port of 127.0.0.1 and
// returns its base URL once it serves; it is interrupted, and waited for,
// when t ends. The test fails, with the server's stderr, if it does not
// serve within StartTimeout.
func Start(t testing.TB, args ...string) string {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var stderr syncBuilder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	base := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := served.FindStringSubmatch(sc.Text()); m != nil {
				base <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case b := <-base:
		return b
	case <-time.After(StartTimeout):
		t.Fatalf("the example server did not serve within %s:\n%s", StartTimeout, stderr.String())
	}
	return ""
}

// syncBuilder is a strings.Builder the process writes and the test reads
// at once.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
