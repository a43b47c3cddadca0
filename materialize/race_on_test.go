//go:build race

package materialize

import "testing"

// skipUnderRace skips a sweep (TestReadEqualsInline, TestTailEqualsInline,
// the attack sweeps) under the race detector. The package starts no
// goroutine, and a sweep runs in one, so the detector has nothing to find
// in it; and it slows SQLite, modernc.org/sqlite, written in Go, about
// twentyfold: the sweeps took 11 of CI's 17 race-step minutes, and their
// first three shapes each still took 10 minutes on a loaded machine. The
// sweeps run without it: a sample in the README's command, in full with
// -tags long. The package's other tests run under it.
func skipUnderRace(t *testing.T) {
	t.Helper()
	t.Skip("a sweep in one goroutine: nothing for the race detector; go test without -race runs it")
}
