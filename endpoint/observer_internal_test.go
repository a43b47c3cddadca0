package endpoint

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSpacedWarning: one warning a period, counting the occurrences in
// between; a clock that goes back warns at once.
func TestSpacedWarning(t *testing.T) {
	w := &spacedWarning{every: time.Second}
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	steps := []struct {
		at   time.Duration
		n    int64
		warn bool
	}{
		{0, 1, true},
		{100 * time.Millisecond, 0, false},
		{900 * time.Millisecond, 0, false},
		{time.Second, 3, true},
		{1500 * time.Millisecond, 0, false},
		{500 * time.Millisecond, 2, true},
	}
	for i, s := range steps {
		n, warn := w.due(t0.Add(s.at))
		require.Equal(t, s.n, n, "step %d at %v: due = %d, %v; want %d, %v", i, s.at, n, warn, s.n, s.warn)
		require.Equal(t, s.warn, warn, "step %d at %v: due = %d, %v; want %d, %v", i, s.at, n, warn, s.n, s.warn)
	}
}
