package endpoint

import (
	"context"
	"errors"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/runlog"
)

// Logs returns a page of the run log of the endpoint named name, newest
// first, and the cursor of the next page ("" when there is none). limit is
// at most 1000; 0 means 100. A cursor that no page gave is a 400.
func (s *Service) Logs(ctx context.Context, project, name string, limit int, before string) ([]RunLogEntry, string, error) {
	if limit < 0 || limit > 1000 {
		return nil, "", invalidf(CodeInvalidInput, "limit", "limit must be between 1 and 1000, got %d.", limit)
	}
	if limit == 0 {
		limit = 100
	}
	if before != "" {
		if _, _, err := driver.ParseCursor(before); err != nil {
			return nil, "", invalidf(CodeInvalidInput, "before", "Invalid cursor '%s': pass the 'next' of a previous page.", cut(before))
		}
	}
	e, err := s.get(ctx, project, name)
	if err != nil {
		return nil, "", err
	}
	// What the runs so far queued is in the log before it is read.
	if err := s.Flush(ctx); err != nil {
		return nil, "", err
	}
	list, next, err := s.runLog.List(ctx, project, e.ID, driver.LogPage{Limit: limit, Before: before})
	if err != nil {
		return nil, "", storeError(err, nil)
	}
	out := make([]RunLogEntry, len(list))
	for i, e := range list {
		out[i] = ownCounts(runLogEntryOf(e))
	}
	return out, next, nil
}

// ownCounts returns e with counts of its own: a run log (the memory one)
// may hand out pointers to the counts it keeps, which a caller writing to
// its page would change for every later reader.
func ownCounts(e RunLogEntry) RunLogEntry {
	c := &struct {
		rows                int
		rowsRead, bytesRead int64
	}{}
	e.Rows, e.RowsRead, e.BytesRead = ownValue(&c.rows, e.Rows), ownValue(&c.rowsRead, e.RowsRead), ownValue(&c.bytesRead, e.BytesRead)
	return e
}

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

// logWrite is one item for the background writer: a run log entry or a
// last_executed_at mark.
type logWrite struct {
	entry *driver.RunLogEntry
	mark  *executedMark
}

type executedMark struct {
	project, id string
	at, prev    time.Time
}

// logWriter writes run log entries and last_executed_at marks off the run
// path (internal/runlog): a run queues them without waiting and without a
// lock (dropping them, counted, when the buffer is full), and one
// goroutine writes what has queued, in order and in batches
// (driver.BatchRunLog when the log has it). Readers of the log
// (Service.Logs) and Close flush it first.
type logWriter struct {
	w *runlog.Writer[logWrite]
	// sink is what the writer goroutine writes with.
	sink *logSink
}

// logSink writes the writer's batches, from its one goroutine.
type logSink struct {
	s *Service
	// entries is the writer goroutine's own buffer for a batch's entries.
	entries []driver.RunLogEntry
}

func newLogWriter(s *Service, size int, interval time.Duration) *logWriter {
	if interval <= 0 {
		interval = DefaultRunLogInterval
	}
	sink := &logSink{s: s}
	return &logWriter{w: runlog.New(size, interval, sink.write), sink: sink}
}

// offer queues item without waiting: ErrRunLogFull when the buffer is
// full, ErrClosed after Close.
func (w *logWriter) offer(item logWrite) error {
	switch err := w.w.Offer(item); err {
	case nil:
		return nil
	case runlog.ErrFull:
		return ErrRunLogFull
	case runlog.ErrClosed:
		return ErrClosed
	default:
		return err
	}
}

// flush waits until everything queued before it is written, or ctx ends.
func (w *logWriter) flush(ctx context.Context) error { return w.w.Flush(ctx) }

// close stops taking items, writes what is queued and stops the writer.
func (w *logWriter) close(ctx context.Context) error { return w.w.Close(ctx) }

// write writes one batch: the entries (in one call of a BatchRunLog), then
// the latest mark of each endpoint.
func (k *logSink) write(batch []logWrite) {
	ctx := context.Background()
	// The entries are copied into a slice the writer keeps from batch to
	// batch (a BatchRunLog keeps no slice it is given), cleared after so
	// that it holds no entry's pointers.
	entries := k.entries[:0]
	defer func() {
		clear(entries)
		k.entries = entries[:0]
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
		if err := k.appendAll(ctx, entries); err != nil {
			errs = append(errs, err)
		}
	}
	for _, id := range order {
		m := marks[id]
		if err := k.s.cfg.Endpoints.MarkExecuted(ctx, m.project, m.id, m.at); err != nil {
			k.s.executed.Release(m.id, m.at, m.prev)
			errs = append(errs, err)
		}
	}
	if len(entries) > 0 || len(order) > 0 {
		if o, ok := k.s.observer.(LogObserver); ok {
			o.ObserveRunLog(ctx, RunLogEvent{Entries: len(entries), Marks: len(order), Err: errors.Join(errs...)})
		}
	}
}

// appendAll appends entries in order, in one call when the log can.
func (k *logSink) appendAll(ctx context.Context, entries []driver.RunLogEntry) error {
	if b, ok := k.s.runLog.(driver.BatchRunLog); ok {
		return b.AppendBatch(ctx, entries)
	}
	var errs []error
	for _, e := range entries {
		if err := k.s.runLog.Append(ctx, e); err != nil {
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
