package exportbench

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var held []byte

// TestPeakGrowthSeesWhatFHolds: 32 MiB held while f runs shows in the
// heap's peak growth (the sampler takes one sample at least, and held is
// still held until PeakGrowth returns), and the resident memory is read
// (on Linux).
func TestPeakGrowthSeesWhatFHolds(t *testing.T) {
	heap, _ := PeakGrowth(func() {
		held = make([]byte, 32<<20)
		for i := range held {
			held[i] = 1
		}
	})
	held = nil
	assert.GreaterOrEqual(t, heap, uint64(32<<20))
	if runtime.GOOS == "linux" {
		assert.NotZero(t, RSS())
	}
}

// TestPeakGrowthSamplesWithoutAllocating: reading the resident memory
// allocates nothing, so the sampler adds no garbage to what it measures.
func TestPeakGrowthSamplesWithoutAllocating(t *testing.T) {
	s := openStatm()
	defer s.close()
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = s.rss() }))
}

func TestFormatCSV(t *testing.T) {
	rec := make([]string, 7)
	FormatCSV(rec, []any{nil, int64(-3), 1.25, "a, \"b\"", []byte("x"), time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), true})
	require.Equal(t, []string{"", "-3", "1.25", "a, \"b\"", "x", "2025-01-02T03:04:05Z", "true"}, rec)
}

func TestDiscardCounts(t *testing.T) {
	d := NewDiscard()
	d.Header().Set("X-A", "1")
	d.WriteHeader(201)
	n, err := d.Write([]byte("abc"))
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Equal(t, 201, d.Status)
	assert.EqualValues(t, 3, d.N)
	assert.Equal(t, "1", d.Head.Get("X-A"))
}
