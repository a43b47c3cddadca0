//go:build unix

package sqlexec_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used, user and system:
// on a machine shared with other work, CPU time per operation is steadier
// than wall time, since time spent waiting for a core is not counted.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
