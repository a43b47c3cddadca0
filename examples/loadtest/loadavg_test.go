package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLoadAverage: the load average is the three figures of /proc/loadavg
// where there is one, "unknown" elsewhere.
func TestLoadAverage(t *testing.T) {
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		assert.Equal(t, "unknown", loadAverage())
		return
	}
	assert.Regexp(t, `^\d+\.\d+ \d+\.\d+ \d+\.\d+$`, loadAverage())
}
