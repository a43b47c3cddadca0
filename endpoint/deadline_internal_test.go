package endpoint

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestRunDeadlineEndsTheRun: a run past its limit is cancelled and reports
// what context.WithTimeout's context would: the deadline,
// context.DeadlineExceeded as its error and its cause, to the contexts
// derived from it too.
func TestRunDeadlineEndsTheRun(t *testing.T) {
	d := &runDeadlines{timeout: 30 * time.Millisecond}
	before := time.Now()
	c := d.start(context.Background())
	defer d.stop(c)
	child, cancelChild := context.WithCancel(c)
	defer cancelChild()
	if dl, ok := c.Deadline(); !ok || dl.Before(before.Add(d.timeout)) || dl.After(time.Now().Add(d.timeout)) {
		t.Fatalf("Deadline() = %v, %v; want about %v", dl, ok, before.Add(d.timeout))
	}
	if c.Err() != nil {
		t.Fatalf("Err() = %v before the deadline", c.Err())
	}
	select {
	case <-child.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the run was not cancelled at its deadline")
	}
	<-c.Done()
	if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(c), context.DeadlineExceeded) || !errors.Is(context.Cause(child), context.DeadlineExceeded) {
		t.Fatalf("Err() = %v, Cause = %v, the child's cause %v; want context.DeadlineExceeded", c.Err(), context.Cause(c), context.Cause(child))
	}
	if since := time.Since(before); since < d.timeout {
		t.Fatalf("cancelled after %v, before its limit %v", since, d.timeout)
	}
}

// TestRunDeadlineStopAndParent: a run that ends in time is cancelled as
// context.WithTimeout's cancel function cancels it (context.Canceled), a
// caller's earlier deadline is the one reported, and a caller's
// cancellation is context.Canceled, not the limit's.
func TestRunDeadlineStopAndParent(t *testing.T) {
	d := &runDeadlines{timeout: time.Hour}
	c := d.start(context.Background())
	d.stop(c)
	d.stop(c) // twice is harmless
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("after stop: Err() = %v, want context.Canceled", c.Err())
	}
	soon := time.Now().Add(time.Minute)
	parent, cancel := context.WithDeadline(context.Background(), soon)
	c = d.start(parent)
	if dl, _ := c.Deadline(); !dl.Equal(soon) {
		t.Fatalf("Deadline() = %v, want the caller's %v", dl, soon)
	}
	cancel()
	<-c.Done()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("after the caller's cancel: Err() = %v, want context.Canceled", c.Err())
	}
	d.stop(c)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.head != nil || d.tail != nil {
		t.Fatal("stopped runs are still listed")
	}
}

// TestRunDeadlinesMany: of runs started at once, those that end in time
// are never cancelled by the limit and those that outlive it all are,
// however their starts and stops interleave with the timer.
func TestRunDeadlinesMany(t *testing.T) {
	d := &runDeadlines{timeout: 20 * time.Millisecond}
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for i := range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := d.start(context.Background())
			defer d.stop(c)
			if i%2 == 0 {
				// Ends in time.
				if err := c.Err(); err != nil {
					errs <- err
				}
				return
			}
			select {
			case <-c.Done():
				if !errors.Is(c.Err(), context.DeadlineExceeded) {
					errs <- c.Err()
				}
			case <-time.After(10 * time.Second):
				errs <- errors.New("not cancelled at its deadline")
			}
		}()
		if i%50 == 0 {
			time.Sleep(3 * time.Millisecond)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.head != nil || d.tail != nil {
		t.Fatal("ended runs are still listed")
	}
}

// BenchmarkRunDeadline compares a run's time limit by runDeadlines with
// context.WithTimeout, under a cancelable caller's context as net/http
// gives a handler.
func BenchmarkRunDeadline(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("runDeadlines", func(b *testing.B) {
		b.ReportAllocs()
		d := &runDeadlines{timeout: 30 * time.Second}
		for b.Loop() {
			c := d.start(parent)
			_ = c.Done()
			d.stop(c)
		}
	})
	b.Run("WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, cancel := context.WithTimeout(parent, 30*time.Second)
			_ = c.Done()
			cancel()
		}
	})
}
