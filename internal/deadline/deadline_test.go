package deadline

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listed counts the runs the shards of t hold.
func listed(t *Timer) (n int, shardsUsed int) {
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		k := 0
		for c := s.head; c != nil; c = c.next {
			k++
		}
		s.mu.Unlock()
		n += k
		if k > 0 {
			shardsUsed++
		}
	}
	return n, shardsUsed
}

// TestTimerSpreadsRuns: runs started one after another go to every
// shard, each run is listed until Stop, and none after.
func TestTimerSpreadsRuns(t *testing.T) {
	tm := New(time.Hour, time.Hour)
	var runs []*Context
	for range 2 * Shards {
		runs = append(runs, tm.Start(context.Background()))
	}
	n, used := listed(tm)
	assert.Equal(t, 2*Shards, n)
	assert.Equal(t, Shards, used, "every shard takes runs")
	for _, c := range runs {
		tm.Stop(c)
		tm.Stop(c) // twice is harmless
		assert.ErrorIs(t, c.Err(), context.Canceled)
	}
	n, _ = listed(tm)
	assert.Zero(t, n)
}

// TestTimerLimitsEveryShard: runs started at once from many goroutines,
// whatever shard holds them, end at their limit with
// context.DeadlineExceeded, not before it; those stopped in time end
// with context.Canceled.
func TestTimerLimitsEveryShard(t *testing.T) {
	const limit = 20 * time.Millisecond
	tm := New(limit, 0)
	var wg sync.WaitGroup
	for i := range 4 * Shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			c := tm.Start(context.Background())
			defer tm.Stop(c)
			if i%2 == 0 {
				tm.Stop(c)
				assert.ErrorIs(t, c.Err(), context.Canceled)
				return
			}
			select {
			case <-c.Done():
			case <-time.After(10 * time.Second):
				assert.Fail(t, "a run was not ended at its limit")
				return
			}
			assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
			assert.GreaterOrEqual(t, time.Since(start), limit)
		}()
	}
	wg.Wait()
	n, _ := listed(tm)
	require.Zero(t, n)
}

// TestTimerFollowsTheCaller: a run whose caller goes away ends with the
// caller's error.
func TestTimerFollowsTheCaller(t *testing.T) {
	tm := New(time.Hour, time.Millisecond)
	parent, cancel := context.WithCancel(context.Background())
	c := tm.Start(parent)
	defer tm.Stop(c)
	cancel()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		require.Fail(t, "the run outlived its caller")
	}
	assert.ErrorIs(t, c.Err(), context.Canceled)
}
