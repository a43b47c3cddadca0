package endpoint

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// ErrRunLogFull is the RunEvent.LogErr of a run whose log entry was dropped
// because the run log's buffer (Config.RunLogBuffer) was full: the log's
// store fell behind the runs. The run itself is answered.
var ErrRunLogFull = errors.New("endpoint: run log buffer full (run_log_buffer); the entry was dropped")

// ErrClosed is returned by the Service's writes after Close.
var ErrClosed = errors.New("endpoint: the Service is closed")

// RunLogEvent reports a batch of writes of the background writer: the run
// log entries and last_executed_at marks written, and the error of those
// that failed.
type RunLogEvent struct {
	Entries, Marks int
	Err            error
}

// LogObserver is an Observer that is also told of the background writes
// of the run log and of last_executed_at (see Config.RunLogBuffer):
// SlogObserver logs the failed ones, package endpoint/metrics counts them.
type LogObserver interface {
	ObserveRunLog(ctx context.Context, ev RunLogEvent)
}

// logWrite is one item for the background writer: a run log entry, a
// last_executed_at mark, or a flush (done is closed once everything before
// it is written).
type logWrite struct {
	entry *driver.RunLogEntry
	mark  *executedMark
	done  chan struct{}
}

type executedMark struct {
	project, id string
	at, prev    time.Time
}

// logWriter writes run log entries and last_executed_at marks off the run
// path: a run queues them without waiting (dropping them, counted, when the
// buffer is full), and one goroutine writes what has queued, in order and in
// batches (driver.BatchRunLog when the log has it). Readers of the log
// (Service.Logs) and Close flush it first.
type logWriter struct {
	s        *Service
	ch       chan logWrite
	wake     chan struct{}
	interval time.Duration
	start    sync.Once
	stopped  chan struct{}
	closing  atomic.Bool
	mu       sync.RWMutex // held for reading by senders, for writing by Close
	// entries is the writer goroutine's own buffer for a batch's entries.
	entries []driver.RunLogEntry
}

// maxLogBatch bounds the items the writer takes at once. A batch is one
// transaction of the log's store, whose commit (a sync of the file on
// SQLite) costs the same for 10 entries as for 1,000: sqlstore's
// BenchmarkRunLogAppendBatch spends about 0.5 us of CPU an entry in
// batches of 1,024, 1 in batches of 256 and 4 in batches of 64 (a commit
// costs some 150-200 us, most of it the sync). Half the default
// buffer wakes the writer, so that a busy server writes two such batches
// at a time.
const maxLogBatch = 1024

func newLogWriter(s *Service, size int, interval time.Duration) *logWriter {
	if interval <= 0 {
		interval = DefaultRunLogInterval
	}
	return &logWriter{s: s, ch: make(chan logWrite, size), wake: make(chan struct{}, 1), interval: interval, stopped: make(chan struct{})}
}

// offer queues item without waiting: ErrRunLogFull when the buffer is
// full, ErrClosed after Close.
func (w *logWriter) offer(item logWrite) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closing.Load() {
		return ErrClosed
	}
	w.start.Do(func() { go w.loop() })
	select {
	case w.ch <- item:
		if len(w.ch) > cap(w.ch)/2 {
			w.nudge() // written before the buffer fills
		}
		return nil
	default:
		return ErrRunLogFull
	}
}

// flush waits until everything queued before it is written, or ctx ends.
func (w *logWriter) flush(ctx context.Context) error {
	done := make(chan struct{})
	w.mu.RLock()
	if w.closing.Load() {
		w.mu.RUnlock()
		<-w.wait()
		return nil
	}
	w.start.Do(func() { go w.loop() })
	select {
	case w.ch <- logWrite{done: done}:
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	w.mu.RUnlock()
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
func (w *logWriter) wait() <-chan struct{} {
	w.start.Do(func() { close(w.stopped) })
	return w.stopped
}

// close stops taking items, writes what is queued and stops the writer.
func (w *logWriter) close(ctx context.Context) error {
	w.mu.Lock()
	already := w.closing.Swap(true)
	if !already {
		close(w.ch)
	}
	w.mu.Unlock()
	w.nudge()
	select {
	case <-w.wait():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop writes what has queued every interval (Config.RunLogInterval), or
// at once when nudged (a flush, Close, a buffer half full), until the
// queue is closed. A run never wakes it: queuing an entry costs the run a
// channel send, nothing more.
func (w *logWriter) loop() {
	defer close(w.stopped)
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	batch := make([]logWrite, 0, maxLogBatch)
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

// drain writes everything queued, in batches of at most maxLogBatch; it
// reports whether the queue is closed (Close).
func (w *logWriter) drain(batch *[]logWrite) (closed bool) {
	for {
		b := (*batch)[:0]
		for len(b) < maxLogBatch && !closed {
			select {
			case it, ok := <-w.ch:
				if !ok {
					closed = true
					break
				}
				b = append(b, it)
			default:
				if len(b) > 0 {
					w.write(b)
				}
				*batch = b
				return false
			}
		}
		if len(b) > 0 {
			w.write(b)
		}
		*batch = b
		if closed {
			return true
		}
	}
}

// nudge wakes the writer now rather than at its next interval.
func (w *logWriter) nudge() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// write writes one batch: the entries (in one call of a BatchRunLog), the
// latest mark of each endpoint, then releases the flushes.
func (w *logWriter) write(batch []logWrite) {
	ctx := context.Background()
	// The entries are copied into a slice the writer keeps from batch to
	// batch (a BatchRunLog keeps no slice it is given), cleared after so
	// that it holds no entry's pointers.
	entries := w.entries[:0]
	defer func() {
		clear(entries)
		w.entries = entries[:0]
	}()
	var (
		marks = map[string]*executedMark{}
		order []string
		errs  []error
	)
	for _, it := range batch {
		switch {
		case it.entry != nil:
			entries = append(entries, *it.entry)
		case it.mark != nil:
			if _, ok := marks[it.mark.id]; !ok {
				order = append(order, it.mark.id)
			}
			marks[it.mark.id] = it.mark
		}
	}
	if len(entries) > 0 {
		if err := w.appendAll(ctx, entries); err != nil {
			errs = append(errs, err)
		}
	}
	for _, id := range order {
		m := marks[id]
		if err := w.s.cfg.Endpoints.MarkExecuted(ctx, m.project, m.id, m.at); err != nil {
			w.s.executed.release(m.id, m.at, m.prev)
			errs = append(errs, err)
		}
	}
	if len(entries) > 0 || len(order) > 0 {
		if o, ok := w.s.observer.(LogObserver); ok {
			o.ObserveRunLog(ctx, RunLogEvent{Entries: len(entries), Marks: len(order), Err: errors.Join(errs...)})
		}
	}
	for _, it := range batch {
		if it.done != nil {
			close(it.done)
		}
	}
}

// appendAll appends entries in order, in one call when the log can.
func (w *logWriter) appendAll(ctx context.Context, entries []driver.RunLogEntry) error {
	if b, ok := w.s.runLog.(driver.BatchRunLog); ok {
		return b.AppendBatch(ctx, entries)
	}
	var errs []error
	for _, e := range entries {
		if err := w.s.runLog.Append(ctx, e); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Flush waits until the run log entries and last_executed_at marks that
// runs queued so far are written (Get, List and Logs flush first, so that
// they show every run that ended before them). It returns ctx's error if
// ctx ends first.
func (s *Service) Flush(ctx context.Context) error {
	return s.logs.flush(ctx)
}

// Close writes the run log entries and last_executed_at marks still queued
// and stops the background writer; call it when the Service's work ends
// (after the HTTP server's Shutdown). Runs after Close are still answered;
// their log entries are dropped, each run's RunEvent.LogErr saying
// ErrClosed. It returns ctx's error if ctx ends first.
func (s *Service) Close(ctx context.Context) error {
	return s.logs.close(ctx)
}
