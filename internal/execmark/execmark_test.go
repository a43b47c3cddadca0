package execmark

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarks(t *testing.T) {
	m := New(time.Second)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		at   time.Duration
		want bool
	}{
		{0, true},
		{500 * time.Millisecond, false},
		{999 * time.Millisecond, false},
		{time.Second, true},
		{1500 * time.Millisecond, false},
		{-time.Hour, true}, // a clock that went back writes (the store keeps the later time)
	}
	for _, s := range steps {
		_, ok := m.Due("a", t0.Add(s.at))
		require.Equal(t, s.want, ok, "due at %v", s.at)
	}
	if _, ok := m.Due("b", t0); !ok {
		t.Fatal("another endpoint is throttled by the first")
	}

	// A failed write is given back, so the next run retries.
	prev, ok := m.Due("c", t0)
	require.True(t, ok, "first run of c not due")
	m.Release("c", t0, prev)
	if _, ok := m.Due("c", t0.Add(time.Millisecond)); !ok {
		t.Fatal("run after a failed write not due")
	}
	prev, _ = m.Due("c", t0.Add(2*time.Second))
	m.Release("c", t0.Add(2*time.Second), prev)
	if _, ok := m.Due("c", t0.Add(500*time.Millisecond)); ok {
		t.Fatal("release did not restore the previous write time")
	}

	m.Forget("a")
	if _, ok := m.Due("a", t0.Add(-time.Hour+time.Millisecond)); !ok {
		t.Fatal("a forgotten endpoint is still throttled")
	}
}

// TestMarksConcurrent: of runs of one endpoint at the same moment
// from many goroutines, exactly one claims the write, and a released
// claim is claimed again once.
func TestMarksConcurrent(t *testing.T) {
	m := New(time.Second)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	claims := func(at time.Time) int64 {
		var n atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 100 {
					if _, ok := m.Due("a", at); ok {
						n.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		return n.Load()
	}
	assert.Equal(t, int64(1), claims(t0))
	m.Release("a", t0, time.Time{})
	assert.True(t, m.Latest("a").IsZero())
	assert.Equal(t, int64(1), claims(t0.Add(time.Millisecond)))
	assert.True(t, m.Latest("a").Equal(t0.Add(time.Millisecond)))
}
