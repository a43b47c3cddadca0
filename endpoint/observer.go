package endpoint

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Observer is told of every run and every refresh of a Service
// (Config.Observer), to count and time them: metrics, traces, logs. The
// Service calls it synchronously at the end of each, so an implementation
// must be quick and safe for concurrent use, and must not call the Service
// back. Events never carry variable values. Package endpoint/metrics
// adapts it to Prometheus; SlogObserver, the default, logs.
type Observer interface {
	ObserveRun(ctx context.Context, ev RunEvent)
	ObserveRefresh(ctx context.Context, ev RefreshEvent)
}

// RunEvent is one run, refused or not.
type RunEvent struct {
	Project, Endpoint string
	// Version is the version that ran, 0 when the run was refused before
	// one was chosen.
	Version     int
	ExecutionID string
	Duration    time.Duration
	// Status is the HTTP status of the answer (200 for success) and Code
	// the code of its error ("" for success); Err is the error itself.
	Status int
	Code   string
	Err    error
	// Refresh is the refresh mode; Cached that no query ran; Materialized
	// that the stored table answered; Token that an embed token ran it.
	Refresh      string
	Cached       bool
	Materialized bool
	Token        bool
	// KeyID is the id of the stored API key the run was authenticated
	// with (RunRequest.KeyID), "" for another credential; never the key.
	KeyID string
	// Rows is the number of rows or series answered, -1 for a failed run.
	Rows int
	// InlineReason is why a run of a materialized endpoint ran inline
	// (RunResult.InlineReason); ReadErr is the database's refusal of the
	// stored table's read when that is why, set on the run that made the
	// read only. A ReadErr is a fault to look into: SlogObserver logs it
	// as a warning and package metrics counts it.
	InlineReason string
	ReadErr      error
	// TypeErr names a value of the answer that its column's type could not
	// hold (an engine whose values' types vary by row, as SQLite's do):
	// the value was answered as the engine gave it. Set on the run that
	// computed the answer; SlogObserver logs it as a warning.
	TypeErr error
	// CacheErr is why the answer, computed with the result cache on, was
	// not kept there (ErrAnswerNotCached in its chain): it weighed more
	// than Config.MaxCachedAnswerBytes (a long export, say), JSON cannot
	// carry a value of it, or the cache failed. Set on the run that
	// computed the answer; SlogObserver logs it at Info at least.
	CacheErr error
	// RequestID is the id of the request the run came with (see
	// WithRequestID), "" when none.
	RequestID string
	// LogErr is the run log's failure to record the run, if any.
	LogErr error
}

// RefreshEvent is one refresh of a materialized endpoint's stored table.
type RefreshEvent struct {
	Project, Endpoint string
	// Trigger says what started it: "manual" (Materialize), "stale"
	// (RefreshStale), "scheduled" (the scheduler) or "saved" (the first
	// refresh after a create or update, run by the scheduler).
	Trigger  string
	Duration time.Duration
	// Rows is the row count of the new table, -1 when unknown or failed.
	Rows int64
	Err  error
	// EdgeIndex is what the refresh found of the reads of the source that
	// runs make beside the new table (MaterializationReport.EdgeIndex), ""
	// when none or failed; EdgeIndexWarning says why, unless each uses an
	// index. SlogObserver logs EdgeIndexNotUsed and EdgeIndexCheckFailed as
	// warnings, and package metrics counts them.
	EdgeIndex, EdgeIndexWarning string
}

// SaveCheckObserver is an Observer that is also told of each save whose
// query the engine could not check (SaveCheckEvent): the query was saved
// unchecked. SlogObserver logs it as a warning and package endpoint/metrics
// counts it; an Observer that is not a SaveCheckObserver is not told.
type SaveCheckObserver interface {
	ObserveSaveCheck(ctx context.Context, ev SaveCheckEvent)
}

// SaveCheckEvent is one save (create or update) of a SQL query that the
// engine failed on a value while checking it (a constant it folded, such
// as 1/0, or a sample value of a variable): the query was saved without
// its columns, and the save's answer carries Endpoint.CheckWarning.
type SaveCheckEvent struct {
	Project, Endpoint string
	// Err is the engine's refusal of the check.
	Err error
}

// SlogObserver is an Observer that logs to a *slog.Logger (slog.Default()
// when nil): runs at Debug, runs whose answer was not kept in the result
// cache (RunEvent.CacheErr) at Info, failed runs with a 5xx at Warn,
// refreshes at Info and failed refreshes at Warn. It is the Service's Observer when
// Config.Observer is nil.
type SlogObserver struct {
	Logger *slog.Logger
}

func (o SlogObserver) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

// ObserveRun implements Observer. A run whose only trouble is a run log
// entry dropped because the writer's buffer was full (ErrRunLogFull) is a
// warning at most once a second, saying how many were dropped since the
// last such line: under the overload that fills the buffer, one line per
// run would add to it. Every drop is counted in RunEvent.LogErr for other
// observers (endpoint/metrics counts each).
func (o SlogObserver) ObserveRun(ctx context.Context, ev RunEvent) {
	l := o.logger()
	level := slog.LevelDebug
	if ev.Status >= 500 || ev.LogErr != nil || ev.ReadErr != nil || ev.TypeErr != nil {
		level = slog.LevelWarn
	}
	if level == slog.LevelDebug && ev.CacheErr != nil {
		level = slog.LevelInfo
	}
	var dropped int64
	if level == slog.LevelWarn && ev.Status < 500 && ev.ReadErr == nil && ev.TypeErr == nil && errors.Is(ev.LogErr, ErrRunLogFull) {
		var ok bool
		if dropped, ok = fullLogWarnings.due(time.Now()); !ok {
			return
		}
	}
	if !l.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("project", ev.Project), slog.String("endpoint", ev.Endpoint),
		slog.Int("version", ev.Version), slog.String("execution_id", ev.ExecutionID),
		slog.Duration("duration", ev.Duration), slog.Int("status", ev.Status),
		slog.String("refresh", ev.Refresh), slog.Bool("cached", ev.Cached),
		slog.Bool("materialized", ev.Materialized), slog.Int("rows", ev.Rows),
	}
	if ev.Code != "" {
		attrs = append(attrs, slog.String("code", ev.Code))
	}
	if ev.KeyID != "" {
		attrs = append(attrs, slog.String("key_id", ev.KeyID))
	}
	if ev.Err != nil && ev.Status >= 500 {
		attrs = append(attrs, slog.Any("error", ev.Err))
	}
	if ev.LogErr != nil {
		attrs = append(attrs, slog.Any("run_log_error", ev.LogErr))
	}
	if dropped > 0 {
		attrs = append(attrs, slog.Int64("run_log_entries_dropped", dropped))
	}
	if ev.InlineReason != "" {
		attrs = append(attrs, slog.String("inline_reason", ev.InlineReason))
	}
	if ev.ReadErr != nil {
		attrs = append(attrs, slog.Any("stored_read_error", ev.ReadErr))
	}
	if ev.TypeErr != nil {
		attrs = append(attrs, slog.Any("type_error", ev.TypeErr))
	}
	if ev.CacheErr != nil {
		attrs = append(attrs, slog.Any("not_cached", ev.CacheErr))
	}
	if ev.RequestID != "" {
		attrs = append(attrs, slog.String("request_id", ev.RequestID))
	}
	l.LogAttrs(ctx, level, "endpoint run", attrs...)
}

// ObserveRunLog implements LogObserver: a failed background write of the
// run log or of last_executed_at is a warning.
func (o SlogObserver) ObserveRunLog(ctx context.Context, ev RunLogEvent) {
	if ev.Err == nil {
		return
	}
	o.logger().LogAttrs(ctx, slog.LevelWarn, "endpoint run log write failed",
		slog.Int("entries", ev.Entries), slog.Int("marks", ev.Marks), slog.Any("error", ev.Err))
}

// ObserveSaveCheck implements SaveCheckObserver: a query saved unchecked
// is a warning.
func (o SlogObserver) ObserveSaveCheck(ctx context.Context, ev SaveCheckEvent) {
	o.logger().LogAttrs(ctx, slog.LevelWarn, "endpoint query saved unchecked: the engine failed on a value while checking it",
		slog.String("project", ev.Project), slog.String("endpoint", ev.Endpoint), slog.Any("error", ev.Err))
}

// ObserveRefresh implements Observer.
func (o SlogObserver) ObserveRefresh(ctx context.Context, ev RefreshEvent) {
	level := slog.LevelInfo
	if ev.Err != nil || ev.EdgeIndex == EdgeIndexNotUsed || ev.EdgeIndex == EdgeIndexCheckFailed {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("project", ev.Project), slog.String("endpoint", ev.Endpoint),
		slog.String("trigger", ev.Trigger), slog.Duration("duration", ev.Duration),
		slog.Int64("rows", ev.Rows),
	}
	if ev.Err != nil {
		attrs = append(attrs, slog.Any("error", ev.Err))
	}
	if ev.EdgeIndex != "" {
		attrs = append(attrs, slog.String("edge_index", ev.EdgeIndex))
	}
	if ev.EdgeIndexWarning != "" {
		attrs = append(attrs, slog.String("edge_index_warning", ev.EdgeIndexWarning))
	}
	o.logger().LogAttrs(ctx, level, "endpoint refresh", attrs...)
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the request a call serves,
// which the Service passes to the Observer with each run (RunEvent) so that
// a log line can be tied to the request; package httpapi sets it.
func WithRequestID(ctx context.Context, id string) context.Context {
	return &valueContext[requestIDKey, string]{Context: ctx, v: id}
}

// RequestID returns the id WithRequestID put in ctx, "" when none.
func RequestID(ctx context.Context) string {
	if id, _ := ctx.Value(requestIDKey{}).(*string); id != nil {
		return *id
	}
	return ""
}

// MultiObserver returns an Observer that tells each of obs in turn (nil
// ones are skipped): a log and metrics, say.
func MultiObserver(obs ...Observer) Observer {
	var list multiObserver
	for _, o := range obs {
		if o != nil {
			list = append(list, o)
		}
	}
	return list
}

type multiObserver []Observer

func (m multiObserver) ObserveRun(ctx context.Context, ev RunEvent) {
	for _, o := range m {
		o.ObserveRun(ctx, ev)
	}
}

// ObserveRunLog tells the observers that are LogObservers.
func (m multiObserver) ObserveRunLog(ctx context.Context, ev RunLogEvent) {
	for _, o := range m {
		if lo, ok := o.(LogObserver); ok {
			lo.ObserveRunLog(ctx, ev)
		}
	}
}

// ObserveSaveCheck tells the observers that are SaveCheckObservers.
func (m multiObserver) ObserveSaveCheck(ctx context.Context, ev SaveCheckEvent) {
	for _, o := range m {
		if so, ok := o.(SaveCheckObserver); ok {
			so.ObserveSaveCheck(ctx, ev)
		}
	}
}

func (m multiObserver) ObserveRefresh(ctx context.Context, ev RefreshEvent) {
	for _, o := range m {
		o.ObserveRefresh(ctx, ev)
	}
}

// fullLogWarnings spaces the warnings of runs whose log entry was dropped
// for a full buffer, process-wide: they come together, under overload.
var fullLogWarnings = &spacedWarning{every: time.Second}

// spacedWarning lets a warning through at most once per every, counting
// the occurrences in between.
type spacedWarning struct {
	every time.Duration
	mu    sync.Mutex
	last  time.Time
	count int64
}

// due counts one occurrence at now and reports whether to warn, with the
// occurrences since the last warning, this one included.
func (w *spacedWarning) due(now time.Time) (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.count++
	if !w.last.IsZero() && now.Sub(w.last) < w.every && !now.Before(w.last) {
		return 0, false
	}
	n := w.count
	w.last, w.count = now, 0
	return n, true
}

// observeSaveCheck tells the Service's Observer, when it is a
// SaveCheckObserver, of a query saved unchecked.
func (s *Service) observeSaveCheck(ctx context.Context, ev SaveCheckEvent) {
	if so, ok := s.observer.(SaveCheckObserver); ok {
		so.ObserveSaveCheck(ctx, ev)
	}
}
