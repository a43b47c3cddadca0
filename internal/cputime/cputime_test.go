package cputime

import (
	"github.com/stretchr/testify/require"
	"runtime"
	"testing"
	"time"
)

// TestProcessCounts checks that work shows in the CPU time: it grows by
// 10 ms while the test works, however long the machine makes it wait (a
// wall-time bound of 10 s only ends a test that would otherwise not).
func TestProcessCounts(t *testing.T) {
	t0, ok := Process()
	if !ok {
		if runtime.GOOS != "windows" && runtime.GOOS != "plan9" && runtime.GOOS != "js" && runtime.GOOS != "wasip1" {
			t.Fatal("no CPU time on a Unix system")
		}
		t.Skip("no CPU time on", runtime.GOOS)
	}
	x := 0
	for deadline := time.Now().Add(10 * time.Second); ; {
		for range 1_000_000 {
			x++
		}
		t1, ok := Process()
		require.True(t, ok, "CPU time went from")
		require.GreaterOrEqual(t, t1, t0, "CPU time went from")
		if t1-t0 >= 10*time.Millisecond {
			sink = x // the loop's work is used, so it is not compiled away
			return
		}
		require.False(t, time.Now().After(deadline), "10 s of work counted %v of CPU time", t1-t0)
	}
}

var sink int
