package sqlexec

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunWatch: a watched run whose context ends is interrupted once,
// within a few interruptEvery; one added to be interrupted again
// (addRun's again, a kept statement's run: SQLite drops an interrupt sent
// before the statement started) is interrupted at each look until it is
// removed, never after; one removed first never is; remove waits for an
// interrupt that is running; slots are reused, and the timer stops once no
// run is watched. Many runs at once under -race.
func TestRunWatch(t *testing.T) {
	var w runWatch
	ctx, cancel := context.WithCancel(context.Background())
	var fired atomic.Int32
	slot := w.add(ctx, func() { fired.Add(1) })
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for fired.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(3 * interruptEvery)
	require.Equal(t, int32(1), fired.Load(), "interrupted")
	require.NoError(t, w.remove(slot))

	ctxa, cancela := context.WithCancel(context.Background())
	var again atomic.Int32
	slota := w.addRun(ctxa, func() { again.Add(1) }, true)
	cancela()
	for again.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.GreaterOrEqual(t, again.Load(), int32(2), "a run added to be interrupted again, still watched after its interrupt, was not interrupted again")
	require.NoError(t, w.remove(slota))
	after := again.Load()
	time.Sleep(3 * interruptEvery)
	require.Equal(t, after, again.Load(), "a removed run was interrupted")

	// Removed before its context ends: never interrupted.
	ctx2, cancel2 := context.WithCancel(context.Background())
	var late atomic.Bool
	w.remove(w.add(ctx2, func() { late.Store(true) }))
	cancel2()
	time.Sleep(3 * interruptEvery)
	require.False(t, late.Load(), "a run removed before its context ended was interrupted")

	// remove returns only once a running interrupt has returned.
	ctx3, cancel3 := context.WithCancel(context.Background())
	started, release := make(chan struct{}), make(chan struct{})
	var returned atomic.Bool
	s3 := w.add(ctx3, func() {
		close(started)
		<-release
		returned.Store(true)
	})
	cancel3()
	<-started
	go func() {
		time.Sleep(20 * time.Millisecond)
		close(release)
	}()
	w.remove(s3)
	require.True(t, returned.Load(), "remove returned while the interrupt ran")

	w.mu.Lock()
	n, slots := w.n, len(w.slots)
	w.mu.Unlock()
	require.Equal(t, 0, n, "%d runs watched in %d slots, want 0 in 1 (reused)", n, slots)
	require.Equal(t, 1, slots, "%d runs watched in %d slots, want 0 in 1 (reused)", n, slots)
	// The timer disarms at its next tick with no run watched; a loaded
	// machine may run that tick late, so wait for it (a timer that never
	// disarms still fails).
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return !w.armed
	}, 10*time.Second, interruptEvery, "the timer still runs with no run watched")

	var wg sync.WaitGroup
	var hits atomic.Int32
	for i := range 200 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%4)*5*time.Millisecond)
			defer cancel()
			s := w.add(ctx, func() { hits.Add(1) })
			time.Sleep(time.Duration(i%3) * 10 * time.Millisecond)
			w.remove(s)
		})
	}
	wg.Wait()
	require.Equal(t, 0, w.n)
	t.Logf("%d of 200 runs interrupted", hits.Load())
}

// TestRunWatchInterruptPanics: an interrupt that panics, on the watch's
// timer goroutine, does not end the process: remove returns its panic as
// an error, and the watch goes on interrupting the runs after it.
func TestRunWatchInterruptPanics(t *testing.T) {
	var w runWatch
	ctx, cancel := context.WithCancel(context.Background())
	var tried atomic.Bool
	slot := w.add(ctx, func() { tried.Store(true); panic("boom") })
	cancel()
	waitFor(t, tried.Load)
	err := w.remove(slot)
	require.ErrorContains(t, err, "boom", "remove")
	ctx2, cancel2 := context.WithCancel(context.Background())
	var fired atomic.Bool
	slot2 := w.add(ctx2, func() { fired.Store(true) })
	cancel2()
	waitFor(t, fired.Load)
	require.NoError(t, w.remove(slot2))
}

// waitFor waits up to a second for cond.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); !cond(); time.Sleep(time.Millisecond) {
		require.False(t, time.Now().After(deadline), "not within a second")
	}
}

// interruptCode is an error of a driver with a SQLite result code.
type interruptCode int

func (e interruptCode) Error() string { return "interrupted (" + strconv.Itoa(int(e)) + ")" }
func (e interruptCode) Code() int     { return int(e) }

// TestInterruptFault: SQLite's SQLITE_INTERRUPT from a run whose context
// ended is the context's error (the Service answers 504), whichever
// statement of the run the interrupt reached; any other error, or an
// interrupt under a live context, is left as it is.
func TestInterruptFault(t *testing.T) {
	ended, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-ended.Done()
	live := context.Background()
	wrapped := fmt.Errorf("sqlexec: begin: %w", interruptCode(9))
	err := interruptFault(ended, wrapped)
	if assert.ErrorIs(t, err, context.DeadlineExceeded, "ended") {
		assert.ErrorIs(t, err, interruptCode(9), "ended")
	}
	for _, c := range []struct {
		ctx context.Context
		err error
	}{{live, wrapped}, {ended, interruptCode(1)}, {ended, errors.New("x")}, {ended, nil}} {
		if got := interruptFault(c.ctx, c.err); got != c.err {
			t.Errorf("interruptFault(%v): %v, want it unchanged", c.err, got)
		}
	}
	if err := queryFault(interruptFault(ended, wrapped)); errors.As(err, new(*driver.QueryError)) {
		t.Errorf("%v is a QueryError", err)
	}
}
