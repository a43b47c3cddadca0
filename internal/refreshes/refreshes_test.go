package refreshes

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLocks: one lock per id, held while full; a second Acquire waits
// until it is given back or its context ends; Forget drops the lock.
func TestLocks(t *testing.T) {
	var l Locks
	a := l.Get("a")
	require.Equal(t, a, l.Get("a"), "one lock per id")
	assert.False(t, l.Busy("a"))
	assert.False(t, l.Busy("never"), "an id never locked is not busy")

	require.NoError(t, Acquire(context.Background(), a))
	assert.True(t, l.Busy("a"))
	assert.False(t, l.Busy("b"), "a lock holds its own id only")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, Acquire(ctx, a), context.Canceled, "a held lock is waited for while the context lasts")

	got := make(chan error, 1)
	go func() { got <- Acquire(context.Background(), a) }()
	<-a // give it back: the waiter takes it
	require.NoError(t, <-got)
	assert.True(t, l.Busy("a"))

	l.Forget("a")
	assert.False(t, l.Busy("a"))
	assert.NotEqual(t, a, l.Get("a"), "a forgotten id gets a new lock")
}

// TestRuns: a refresh's progress is read as it is written; End forgets
// only the refresh it is given; a nil Run takes writes.
func TestRuns(t *testing.T) {
	var rs Runs
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Nil(t, rs.Get("a"))
	r := rs.Begin("a", "manual", "waiting", t0)
	require.Same(t, r, rs.Get("a"))
	assert.Equal(t, "manual", r.Trigger)
	assert.Equal(t, t0, r.Started)

	phase, rows, bytes := r.Snapshot()
	assert.Equal(t, "waiting", phase)
	assert.Nil(t, rows)
	assert.Nil(t, bytes)

	n, b := int64(7), int64(4096)
	r.Set("counting")
	r.SetRows(&n)
	r.SetRows(nil) // unknown: keeps what is known
	r.SetBytes(&b)
	phase, rows, bytes = r.Snapshot()
	assert.Equal(t, "counting", phase)
	require.NotNil(t, rows)
	assert.Equal(t, int64(7), *rows)
	require.NotNil(t, bytes)
	assert.Equal(t, int64(4096), *bytes)

	later := rs.Begin("a", "scheduled", "waiting", t0.Add(time.Minute))
	rs.End("a", r)
	assert.Same(t, later, rs.Get("a"), "the end of an older refresh keeps the newer one")
	rs.End("a", later)
	assert.Nil(t, rs.Get("a"))

	var none *Run
	assert.NotPanics(t, func() {
		none.Set("building")
		none.SetRows(&n)
		none.SetBytes(&b)
	})
}

// TestSavings: a table a save built is claimed once, by its own key.
func TestSavings(t *testing.T) {
	var sv Savings
	assert.False(t, sv.Claim("a", "k1"), "nothing built")
	sv.Built("a", "k1")
	assert.False(t, sv.Claim("a", "k2"), "another key")
	assert.False(t, sv.Claim("a", "k1"), "a claim forgets the table, whichever key it names")
	sv.Built("a", "k1")
	assert.True(t, sv.Claim("a", "k1"))
	assert.False(t, sv.Claim("a", "k1"), "claimed once")
}

// TestUnderWay: a refresh of an endpoint under way is not started again;
// the latest request that came meanwhile is run after it, once.
func TestUnderWay(t *testing.T) {
	var f UnderWay
	require.True(t, f.Begin("a", "scheduled"))
	assert.True(t, f.Begin("b", "scheduled"), "another endpoint starts")
	assert.False(t, f.Begin("a", "saved"))
	assert.False(t, f.Begin("a", "woken"), "the latest request wins")
	assert.Equal(t, "woken", f.Next("a"))
	assert.False(t, f.Begin("a", "saved"), "still under way while it runs again")
	assert.Equal(t, "saved", f.Next("a"))
	assert.Equal(t, "", f.Next("a"), "no request meanwhile: the refresh is forgotten")
	assert.True(t, f.Begin("a", "scheduled"), "a forgotten refresh starts again")
	f.End("a")
	assert.True(t, f.Begin("a", "scheduled"), "End forgets it")
}

// TestUnderWayConcurrent: of many goroutines asking for the same
// endpoint at once, one starts it.
func TestUnderWayConcurrent(t *testing.T) {
	var f UnderWay
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		started int
	)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f.Begin("a", "scheduled") {
				mu.Lock()
				started++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, started)
}
