package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessCounts checks that busy work shows in the CPU time, and
// sleeping does not (much).
func TestProcessCounts(t *testing.T) {
	t0, ok := Process()
	if !ok {
		if runtime.GOOS != "windows" && runtime.GOOS != "plan9" && runtime.GOOS != "js" && runtime.GOOS != "wasip1" {
			t.Fatal("no CPU time on a Unix system")
		}
		t.Skip("no CPU time on", runtime.GOOS)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	t1, _ := Process()
	if busy := t1 - t0; busy < 20*time.Millisecond {
		t.Errorf("50 ms of busy work counted %v of CPU time", busy)
	}
	time.Sleep(50 * time.Millisecond)
	t2, _ := Process()
	if slept := t2 - t1; slept > 40*time.Millisecond {
		t.Errorf("50 ms of sleep counted %v of CPU time", slept)
	}
	_ = x
}
