package sqlexec

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunWatch: a watched run whose context ends is interrupted once,
// within a few interruptEvery; one removed first never is; remove waits
// for an interrupt that is running; slots are reused, and the timer stops
// once no run is watched. Many runs at once under -race.
func TestRunWatch(t *testing.T) {
	var w runWatch
	ctx, cancel := context.WithCancel(context.Background())
	var fired atomic.Int32
	slot := w.add(ctx, func() { fired.Add(1) })
	cancel()
	deadline := time.Now().Add(time.Second)
	for fired.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(3 * interruptEvery)
	if n := fired.Load(); n != 1 {
		t.Fatalf("interrupted %d times, want once", n)
	}
	w.remove(slot)

	// Removed before its context ends: never interrupted.
	ctx2, cancel2 := context.WithCancel(context.Background())
	var late atomic.Bool
	w.remove(w.add(ctx2, func() { late.Store(true) }))
	cancel2()
	time.Sleep(3 * interruptEvery)
	if late.Load() {
		t.Fatal("a run removed before its context ended was interrupted")
	}

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
	if !returned.Load() {
		t.Fatal("remove returned while the interrupt ran")
	}

	w.mu.Lock()
	n, slots := w.n, len(w.slots)
	w.mu.Unlock()
	if n != 0 || slots != 1 {
		t.Fatalf("%d runs watched in %d slots, want 0 in 1 (reused)", n, slots)
	}
	time.Sleep(3 * interruptEvery)
	w.mu.Lock()
	armed := w.armed
	w.mu.Unlock()
	if armed {
		t.Fatal("the timer still runs with no run watched")
	}

	var wg sync.WaitGroup
	var hits atomic.Int32
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%4)*5*time.Millisecond)
			defer cancel()
			s := w.add(ctx, func() { hits.Add(1) })
			time.Sleep(time.Duration(i%3) * 10 * time.Millisecond)
			w.remove(s)
		}()
	}
	wg.Wait()
	if w.n != 0 {
		t.Fatalf("%d runs still watched", w.n)
	}
	t.Logf("%d of 200 runs interrupted", hits.Load())
}
