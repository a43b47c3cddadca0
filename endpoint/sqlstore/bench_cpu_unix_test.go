//go:build unix

package sqlstore

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the process has used so
// far; a benchmark reports it per operation beside the wall clock, which a
// machine shared with other work makes noisy.
func processCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
