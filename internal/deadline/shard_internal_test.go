package deadline

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRunDeadlineEndsTheRun: a run past its limit is cancelled and reports
// what context.WithTimeout's context would: the deadline,
// context.DeadlineExceeded as its error and its cause, to the contexts
// derived from it too.
func TestRunDeadlineEndsTheRun(t *testing.T) {
	d := &shard{timeout: 30 * time.Millisecond}
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
	d := &shard{timeout: time.Hour}
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
	d := &shard{timeout: 20 * time.Millisecond}
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

// TestRunWatchesItsCaller: a run is not registered with its caller's
// context when it starts, but a caller's cancellation still ends it: at
// once in what Err reports, and its Done closes once the watch registers
// it (within watchEvery), or at once after that; a run that ends before
// the watch is never registered with its caller.
func TestRunWatchesItsCaller(t *testing.T) {
	waitDone := func(t *testing.T, c context.Context) {
		t.Helper()
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the run was not cancelled with its caller")
		}
	}
	t.Run("cancelled before the watch", func(t *testing.T) {
		d := &shard{timeout: time.Hour, watchEvery: 5 * time.Millisecond}
		parent, cancel := context.WithCancelCause(context.Background())
		c := d.start(parent)
		defer d.stop(c)
		cause := errors.New("the client went away")
		cancel(cause)
		waitDone(t, c)
		if !errors.Is(c.Err(), context.Canceled) || context.Cause(c) != cause {
			t.Fatalf("Err() = %v, Cause = %v; want context.Canceled and the caller's cause", c.Err(), context.Cause(c))
		}
	})
	t.Run("Err sees the caller at once", func(t *testing.T) {
		d := &shard{timeout: time.Hour, watchEvery: time.Hour}
		parent, cancel := context.WithCancel(context.Background())
		c := d.start(parent)
		defer d.stop(c)
		cancel()
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("Err() = %v right after the caller's cancel, want context.Canceled", c.Err())
		}
		select {
		case <-c.Done(): // Err ended the run
		default:
			t.Fatal("Err reported the caller's cancel but the run's Done is open")
		}
	})
	t.Run("cancelled after the watch", func(t *testing.T) {
		d := &shard{timeout: time.Hour, watchEvery: time.Millisecond}
		parent, cancel := context.WithCancel(context.Background())
		c := d.start(parent)
		defer d.stop(c)
		for registered := false; !registered; time.Sleep(time.Millisecond) {
			d.mu.Lock()
			registered = c.unwatch != nil
			d.mu.Unlock()
		}
		cancel()
		waitDone(t, c)
	})
	t.Run("cancelled before the start", func(t *testing.T) {
		d := &shard{timeout: time.Hour, watchEvery: time.Hour}
		parent, cancel := context.WithCancel(context.Background())
		cancel()
		c := d.start(parent)
		defer d.stop(c)
		select {
		case <-c.Done():
		default:
			t.Fatal("a run of a cancelled caller started open")
		}
	})
	t.Run("a short run is never registered", func(t *testing.T) {
		d := &shard{timeout: time.Hour, watchEvery: time.Hour}
		parent, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := d.start(parent)
		d.stop(c)
		if c.unwatch != nil {
			t.Fatal("a run that ended before the watch was registered with its caller")
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.unwatched != nil {
			t.Fatal("a stopped run is still waiting for the watch")
		}
	})
	t.Run("many", func(t *testing.T) {
		d := &shard{timeout: time.Hour, watchEvery: 2 * time.Millisecond}
		var wg sync.WaitGroup
		errs := make(chan error, 300)
		for i := range 300 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				parent, cancel := context.WithCancel(context.Background())
				defer cancel()
				c := d.start(parent)
				defer d.stop(c)
				time.Sleep(time.Duration(i%7) * time.Millisecond)
				if i%3 != 0 {
					return
				}
				cancel()
				select {
				case <-c.Done():
					if !errors.Is(c.Err(), context.Canceled) {
						errs <- c.Err()
					}
				case <-time.After(10 * time.Second):
					errs <- errors.New("not cancelled with its caller")
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.head != nil || d.tail != nil || d.unwatched != nil {
			t.Fatal("ended runs are still listed")
		}
	})
}

// BenchmarkRunDeadline compares a run's time limit by shard with
// context.WithTimeout, under a cancelable caller's context as net/http
// gives a handler.
func BenchmarkRunDeadline(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("shard", func(b *testing.B) {
		b.ReportAllocs()
		d := &shard{timeout: 30 * time.Second}
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

// TestRunErrIsStable: once a run's Err is not nil it stays the same, as
// the context package promises, whatever ends the run first and whatever
// happens to its caller afterwards: a run stopped in time stays
// context.Canceled when its caller's deadline passes later, one past its
// limit stays context.DeadlineExceeded when its caller is cancelled later,
// and one whose caller was cancelled stays context.Canceled past its limit.
func TestRunErrIsStable(t *testing.T) {
	t.Run("stopped, then the caller's deadline", func(t *testing.T) {
		d := &shard{timeout: time.Hour}
		parent, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		c := d.start(parent)
		d.stop(c)
		first := c.Err()
		<-parent.Done()
		if first != context.Canceled || c.Err() != first || context.Cause(c) != first {
			t.Fatalf("Err() = %v after stop, then %v (cause %v) once the caller's deadline passed", first, c.Err(), context.Cause(c))
		}
	})
	t.Run("past its limit, then the caller cancels", func(t *testing.T) {
		d := &shard{timeout: 5 * time.Millisecond}
		parent, cancel := context.WithCancel(context.Background())
		c := d.start(parent)
		defer d.stop(c)
		<-c.Done()
		first := c.Err()
		cancel()
		if first != context.DeadlineExceeded || c.Err() != first {
			t.Fatalf("Err() = %v past the limit, then %v once the caller cancelled", first, c.Err())
		}
	})
	t.Run("the caller cancels, then the limit passes", func(t *testing.T) {
		d := &shard{timeout: 5 * time.Millisecond, watchEvery: time.Hour}
		parent, cancel := context.WithCancelCause(context.Background())
		c := d.start(parent)
		defer d.stop(c)
		cause := errors.New("the client went away")
		cancel(cause)
		time.Sleep(20 * time.Millisecond) // past the limit, not yet watched
		if c.Err() != context.Canceled || context.Cause(c) != cause {
			t.Fatalf("Err() = %v, Cause %v; want the caller's context.Canceled and cause", c.Err(), context.Cause(c))
		}
	})
}

// TestRunContextValues: a run's context and the contexts derived from it
// see the caller's values, and a context derived from the run ends with it
// (its deadline is the run's, or the caller's earlier one).
func TestRunContextValues(t *testing.T) {
	type key struct{}
	d := &shard{timeout: time.Hour, watchEvery: time.Millisecond}
	soon := time.Now().Add(time.Minute)
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), key{}, "v"), soon)
	defer cancel()
	c := d.start(parent)
	child, cancelChild := context.WithCancel(context.WithValue(c, key{}, "w"))
	defer cancelChild()
	if c.Value(key{}) != "v" || child.Value(key{}) != "w" || context.WithoutCancel(c).Value(key{}) != "v" {
		t.Fatalf("values: run %v, child %v", c.Value(key{}), child.Value(key{}))
	}
	if dl, ok := child.Deadline(); !ok || !dl.Equal(soon) {
		t.Fatalf("the child's deadline %v, %v; want the caller's %v", dl, ok, soon)
	}
	d.stop(c)
	select {
	case <-child.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a context derived from the run outlived it")
	}
	if !errors.Is(child.Err(), context.Canceled) {
		t.Fatalf("the child's Err() = %v, want context.Canceled", child.Err())
	}
}

// TestRunErrStableUnderLoad: runs ended at once by their limit, their
// caller's cancellation, their caller's deadline and stop, in every order,
// while another goroutine reads Err: each run's Err, once not nil, never
// changes, and agrees with its Cause where the run itself gave the cause.
func TestRunErrStableUnderLoad(t *testing.T) {
	d := &shard{timeout: 3 * time.Millisecond, watchEvery: time.Millisecond}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parent, cancel := context.WithTimeout(context.Background(), time.Duration(i%5)*time.Millisecond)
			defer cancel()
			c := d.start(parent)
			seen := make(chan struct{})
			go func() {
				defer close(seen)
				var first error
				for {
					err := c.Err()
					if first == nil {
						first = err
					} else if err != first {
						errs <- errors.Join(first, err)
						return
					}
					if first != nil && !errors.Is(context.Cause(c), first) && context.Cause(c) != context.Cause(parent) {
						errs <- errors.Join(errors.New("cause"), first, context.Cause(c))
						return
					}
					select {
					case <-c.Done():
						if first != nil {
							return
						}
					default:
						runtime.Gosched()
					}
				}
			}()
			time.Sleep(time.Duration(i%4) * time.Millisecond)
			if i%3 == 0 {
				cancel()
			}
			d.stop(c)
			<-seen
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// opaqueContext hides its cancellation from the context package (as a
// context of a type of its own does), so that watching it takes a
// goroutine.
type opaqueContext struct{ context.Context }

func (opaqueContext) Value(any) any { return nil }

// TestRunWatchLeavesNoGoroutine: the goroutines that watching a caller's
// context of a type of its own takes end when the runs stop.
func TestRunWatchLeavesNoGoroutine(t *testing.T) {
	d := &shard{timeout: time.Hour, watchEvery: time.Millisecond}
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The goroutines counted are those watching an opaque parent
	// (context's propagateCancel), not the process's: other tests'
	// goroutines come and go meanwhile.
	before := watchers()
	var runs []*Context
	for range 100 {
		runs = append(runs, d.start(opaqueContext{parent}))
	}
	for watched := false; !watched; time.Sleep(time.Millisecond) {
		d.mu.Lock()
		watched = runs[len(runs)-1].unwatch != nil
		d.mu.Unlock()
	}
	if n := watchers(); n < before+100 {
		t.Fatalf("%d goroutines watch while 100 runs watch an opaque context, %d before: the test no longer exercises them", n, before)
	}
	for _, c := range runs {
		d.stop(c)
	}
	deadline := time.Now().Add(10 * time.Second)
	for watchers() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines watch after the runs stopped, %d before", watchers(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

// watchers counts the goroutines of the process that context started to
// watch a parent of a type of its own.
func watchers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "context.(*cancelCtx).propagateCancel")
		}
		buf = make([]byte, 2*len(buf))
	}
}
