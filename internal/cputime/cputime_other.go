//go:build !unix

package cputime

import "time"

// Process is not measured on this platform: it returns false.
func Process() (time.Duration, bool) { return 0, false }
