package deadline

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ended reports whether c is done within ten seconds, the bound of every
// wait in these tests (a run that should end ends long before).
func ended(c context.Context) bool {
	select {
	case <-c.Done():
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

// unlisted reports whether the shard d lists no run: none in its list and
// none waiting for the watch.
func unlisted(d *shard) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.head == nil && d.tail == nil && d.unwatched == nil
}

// closed reports whether c is done now.
func closed(c context.Context) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

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
		wg.Go(func() {
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
		})
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
	dl, ok := c.Deadline()
	require.True(t, ok, "Deadline()")
	require.WithinRange(t, dl, before.Add(d.timeout), time.Now().Add(d.timeout), "Deadline()")
	require.NoError(t, c.Err(), "before the deadline")
	require.True(t, ended(child), "the run was not cancelled at its deadline")
	<-c.Done()
	assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	assert.ErrorIs(t, context.Cause(c), context.DeadlineExceeded)
	assert.ErrorIs(t, context.Cause(child), context.DeadlineExceeded, "the child's cause")
	assert.GreaterOrEqual(t, time.Since(before), d.timeout, "cancelled before its limit")
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
	require.ErrorIs(t, c.Err(), context.Canceled, "after stop")
	soon := time.Now().Add(time.Minute)
	parent, cancel := context.WithDeadline(context.Background(), soon)
	c = d.start(parent)
	dl, _ := c.Deadline()
	require.Equal(t, soon, dl, "Deadline() is the caller's")
	cancel()
	<-c.Done()
	require.ErrorIs(t, c.Err(), context.Canceled, "after the caller's cancel")
	d.stop(c)
	assert.True(t, unlisted(d), "stopped runs are still listed")
}

// TestRunDeadlinesMany: of runs started at once, those that end in time
// are never cancelled by the limit and those that outlive it all are,
// however their starts and stops interleave with the timer.
func TestRunDeadlinesMany(t *testing.T) {
	d := &shard{timeout: 20 * time.Millisecond}
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			c := d.start(context.Background())
			defer d.stop(c)
			if i%2 == 0 {
				assert.NoError(t, c.Err(), "a run that ends in time")
				return
			}
			if assert.True(t, ended(c), "not cancelled at its deadline") {
				assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
			}
		})
		if i%50 == 0 {
			time.Sleep(3 * time.Millisecond)
		}
	}
	wg.Wait()
	assert.True(t, unlisted(d), "ended runs are still listed")
}

// TestRunWatchesItsCaller: a run is not registered with its caller's
// context when it starts, but a caller's cancellation still ends it: at
// once in what Err reports, and its Done closes once the watch registers
// it (within watchEvery), or at once after that; a run that ends before
// the watch is never registered with its caller.
func TestRunWatchesItsCaller(t *testing.T) {
	t.Run("cancelled before the watch", func(t *testing.T) {
		d := &shard{timeout: time.Hour, watchEvery: 5 * time.Millisecond}
		parent, cancel := context.WithCancelCause(context.Background())
		c := d.start(parent)
		defer d.stop(c)
		cause := errors.New("the client went away")
		cancel(cause)
		require.True(t, ended(c), "the run was not cancelled with its caller")
		assert.ErrorIs(t, c.Err(), context.Canceled)
		assert.Equal(t, cause, context.Cause(c), "the caller's cause")
	})
	t.Run("Err sees the caller at once", func(t *testing.T) {
		d := &shard{timeout: time.Hour, watchEvery: time.Hour}
		parent, cancel := context.WithCancel(context.Background())
		c := d.start(parent)
		defer d.stop(c)
		cancel()
		require.ErrorIs(t, c.Err(), context.Canceled, "right after the caller's cancel")
		assert.True(t, closed(c), "Err reported the caller's cancel but the run's Done is open")
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
		assert.True(t, ended(c), "the run was not cancelled with its caller")
	})
	t.Run("cancelled before the start", func(t *testing.T) {
		d := &shard{timeout: time.Hour, watchEvery: time.Hour}
		parent, cancel := context.WithCancel(context.Background())
		cancel()
		c := d.start(parent)
		defer d.stop(c)
		assert.True(t, closed(c), "a run of a cancelled caller started open")
	})
	t.Run("a short run is never registered", func(t *testing.T) {
		d := &shard{timeout: time.Hour, watchEvery: time.Hour}
		parent, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := d.start(parent)
		d.stop(c)
		assert.Nil(t, c.unwatch, "a run that ended before the watch was registered with its caller")
		assert.True(t, unlisted(d), "a stopped run is still waiting for the watch")
	})
	t.Run("many", func(t *testing.T) {
		d := &shard{timeout: time.Hour, watchEvery: 2 * time.Millisecond}
		var wg sync.WaitGroup
		for i := range 300 {
			wg.Go(func() {
				parent, cancel := context.WithCancel(context.Background())
				defer cancel()
				c := d.start(parent)
				defer d.stop(c)
				time.Sleep(time.Duration(i%7) * time.Millisecond)
				if i%3 != 0 {
					return
				}
				cancel()
				if assert.True(t, ended(c), "not cancelled with its caller") {
					assert.ErrorIs(t, c.Err(), context.Canceled)
				}
			})
		}
		wg.Wait()
		assert.True(t, unlisted(d), "ended runs are still listed")
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
		assert.Equal(t, context.Canceled, first, "after stop")
		assert.Equal(t, first, c.Err(), "once the caller's deadline passed")
		assert.Equal(t, first, context.Cause(c), "the cause once the caller's deadline passed")
	})
	t.Run("past its limit, then the caller cancels", func(t *testing.T) {
		d := &shard{timeout: 5 * time.Millisecond}
		parent, cancel := context.WithCancel(context.Background())
		c := d.start(parent)
		defer d.stop(c)
		<-c.Done()
		first := c.Err()
		cancel()
		assert.Equal(t, context.DeadlineExceeded, first, "past the limit")
		assert.Equal(t, first, c.Err(), "once the caller cancelled")
	})
	t.Run("the caller cancels, then the limit passes", func(t *testing.T) {
		d := &shard{timeout: 5 * time.Millisecond, watchEvery: time.Hour}
		parent, cancel := context.WithCancelCause(context.Background())
		c := d.start(parent)
		defer d.stop(c)
		cause := errors.New("the client went away")
		cancel(cause)
		time.Sleep(20 * time.Millisecond) // past the limit, not yet watched
		assert.Equal(t, context.Canceled, c.Err(), "the caller's")
		assert.Equal(t, cause, context.Cause(c), "the caller's cause")
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
	assert.Equal(t, "v", c.Value(key{}), "the run's value")
	assert.Equal(t, "w", child.Value(key{}), "the child's value")
	assert.Equal(t, "v", context.WithoutCancel(c).Value(key{}), "the value without cancel")
	dl, ok := child.Deadline()
	assert.True(t, ok, "the child has a deadline")
	assert.Equal(t, soon, dl, "the child's deadline is the caller's")
	d.stop(c)
	require.True(t, ended(child), "a context derived from the run outlived it")
	assert.ErrorIs(t, child.Err(), context.Canceled, "the child's Err()")
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
		wg.Go(func() {
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
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
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
	require.GreaterOrEqual(t, watchers(), before+100, "goroutines watching while 100 runs watch an opaque context: the test no longer exercises them")
	for _, c := range runs {
		d.stop(c)
	}
	require.Eventually(t, func() bool { return watchers() <= before }, 10*time.Second, time.Millisecond,
		"goroutines still watch after the runs stopped (%d before)", before)
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
