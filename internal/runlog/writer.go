// Package runlog writes what runs queue (their log entries, and the like)
// off the run path: a run queues an item without waiting, and one
// goroutine writes what has queued, in order and in batches.
//
// Queuing takes no lock: a channel send and two atomic operations, the
// count of senders under way that Close waits out before it closes the
// queue.
package runlog

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// ErrFull is Offer's error when the queue is full: the writes fell behind
// the runs. The item is dropped.
var ErrFull = errors.New("runlog: the queue is full")

// ErrClosed is Offer's error after Close.
var ErrClosed = errors.New("runlog: the writer is closed")

// MaxBatch bounds the items a batch holds. A batch is one write of the
// caller's: for the run log, one transaction of the log's store, whose
// commit (a sync of the file on SQLite) costs the same for 10 entries as
// for 1,000: sqlstore's BenchmarkRunLogAppendBatch spends about 0.5 us of
// CPU an entry in batches of 1,024, 1 in batches of 256 and 4 in batches
// of 64 (a commit costs some 150-200 us, most of it the sync). A full
// batch queued wakes the writer (or more than half the queue, when that is
// less), so
// that a busy server writes full batches and the writer, when the machine
// is slow to run it, has the rest of the queue to catch up in before an
// item is dropped: with the queue of 4,096 a Service keeps by default,
// three quarters of it rather than half.
const MaxBatch = 1024

// Writer queues items of type T and writes them in the background, in
// batches of at most MaxBatch, every interval or at once when nudged (a
// Flush, Close, a full batch queued). Its zero value is not ready: use New.
type Writer[T any] struct {
	ch chan item[T]
	// nudgeAt is how many queued items wake the writer: MaxBatch, or
	// more than half the queue when that is less.
	nudgeAt  int
	wake     chan struct{}
	interval time.Duration
	write    func([]T)
	start    sync.Once
	stopped  chan struct{}
	closing  atomic.Bool
	// senders counts the sends under way (Offer, Flush), which Close
	// waits out before it closes ch.
	senders atomic.Int64
	// values is the writer goroutine's own buffer for a batch's items.
	values []T
}

// item is a queued value, or a flush (done, closed once everything
// queued before it is written).
type item[T any] struct {
	v    T
	done chan struct{}
}

// New returns a Writer of a queue of size items that calls write with
// each batch, from one goroutine, in the order the items were queued.
// write must not keep the slice it is given. interval <= 0 is one second.
func New[T any](size int, interval time.Duration, write func([]T)) *Writer[T] {
	if interval <= 0 {
		interval = time.Second
	}
	return &Writer[T]{ch: make(chan item[T], size), nudgeAt: max(min(MaxBatch, size/2+1), 1),
		wake: make(chan struct{}, 1), interval: interval, write: write, stopped: make(chan struct{})}
}

// Offer queues v without waiting: ErrFull when the queue is full,
// ErrClosed after Close.
func (w *Writer[T]) Offer(v T) error {
	w.senders.Add(1)
	defer w.senders.Add(-1)
	if w.closing.Load() {
		return ErrClosed
	}
	w.start.Do(func() { go w.loop() })
	select {
	case w.ch <- item[T]{v: v}:
		if len(w.ch) >= w.nudgeAt {
			w.nudge() // written before the queue fills
		}
		return nil
	default:
		return ErrFull
	}
}

// Flush waits until everything queued before it is written, or ctx ends
// (its error). After Close it waits for the writer to stop.
func (w *Writer[T]) Flush(ctx context.Context) error {
	done := make(chan struct{})
	w.senders.Add(1)
	if w.closing.Load() {
		w.senders.Add(-1)
		<-w.wait()
		return nil
	}
	w.start.Do(func() { go w.loop() })
	w.nudge() // the queue may be full: make room
	select {
	case w.ch <- item[T]{done: done}:
	case <-ctx.Done():
		w.senders.Add(-1)
		return ctx.Err()
	}
	w.senders.Add(-1)
	w.nudge()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait returns a channel closed when the writer has stopped (or never
// started).
func (w *Writer[T]) wait() <-chan struct{} {
	w.start.Do(func() { close(w.stopped) })
	return w.stopped
}

// Close stops taking items, writes what is queued and stops the writer;
// it returns ctx's error if ctx ends first. Calling it again waits for
// the writer to stop.
func (w *Writer[T]) Close(ctx context.Context) error {
	if !w.closing.Swap(true) {
		// A send that began before closing was set may still be under
		// way: it ends (the writer drains the queue meanwhile) before
		// the queue closes. A send that begins after sees closing.
		for w.senders.Load() != 0 {
			w.nudge()
			runtime.Gosched()
		}
		close(w.ch)
	}
	w.nudge()
	select {
	case <-w.wait():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop writes what has queued every interval, or at once when nudged,
// until the queue is closed.
func (w *Writer[T]) loop() {
	defer close(w.stopped)
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	batch := make([]item[T], 0, MaxBatch)
	for {
		select {
		case <-tick.C:
		case <-w.wake:
		}
		if w.drain(&batch) {
			return
		}
	}
}

// drain writes everything queued, in batches of at most MaxBatch; it
// reports whether the queue is closed.
func (w *Writer[T]) drain(batch *[]item[T]) (closed bool) {
	for {
		b := (*batch)[:0]
		for len(b) < MaxBatch && !closed {
			select {
			case it, ok := <-w.ch:
				if !ok {
					closed = true
					break
				}
				b = append(b, it)
			default:
				if len(b) > 0 {
					w.writeBatch(b)
				}
				*batch = b
				return false
			}
		}
		if len(b) > 0 {
			w.writeBatch(b)
		}
		*batch = b
		if closed {
			return true
		}
	}
}

// writeBatch writes the values of batch, then releases its flushes. The
// values are copied into a slice the writer keeps from batch to batch,
// cleared after so that it holds nothing of theirs.
func (w *Writer[T]) writeBatch(batch []item[T]) {
	values := w.values[:0]
	for _, it := range batch {
		if it.done == nil {
			values = append(values, it.v)
		}
	}
	if len(values) > 0 {
		w.write(values)
	}
	clear(values)
	w.values = values[:0]
	for _, it := range batch {
		if it.done != nil {
			close(it.done)
		}
	}
	clear(batch) // the items' values, which batch's array keeps
}

// nudge wakes the writer now rather than at its next interval.
func (w *Writer[T]) nudge() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
