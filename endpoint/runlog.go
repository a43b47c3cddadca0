package endpoint

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// MemoryRunLog is a RunLog in memory, the Service's default: per endpoint
// at most maxPerEndpoint entries (the oldest go first), none older than
// maxAge at the time of a List. Make one with NewMemoryRunLog.
type MemoryRunLog struct {
	// Now is the clock that ages entries; nil means time.Now. A Service
	// that makes its default log sets its own clock here.
	Now    func() time.Time
	maxAge time.Duration
	max    int
	mu     sync.Mutex
	seq    uint64
	logs   map[logKey]*ring
}

type logKey struct{ project, id string }

// ring holds an endpoint's latest entries in append order.
type ring struct {
	buf   []driver.RunLogEntry
	start int // index of the oldest entry once buf is full
}

// NewMemoryRunLog returns an empty MemoryRunLog; a non-positive maxAge or
// maxPerEndpoint means DefaultLogMaxAge or DefaultLogMaxPerEndpoint.
func NewMemoryRunLog(maxAge time.Duration, maxPerEndpoint int) *MemoryRunLog {
	if maxAge <= 0 {
		maxAge = driver.DefaultLogMaxAge
	}
	if maxPerEndpoint <= 0 {
		maxPerEndpoint = driver.DefaultLogMaxPerEndpoint
	}
	return &MemoryRunLog{maxAge: maxAge, max: maxPerEndpoint, logs: make(map[logKey]*ring)}
}

var _ driver.RunLog = (*MemoryRunLog)(nil)

// Append implements RunLog.
func (l *MemoryRunLog) Append(_ context.Context, e driver.RunLogEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	e.Seq = l.seq
	k := logKey{e.ProjectID, e.EndpointID}
	r := l.logs[k]
	if r == nil {
		r = &ring{}
		l.logs[k] = r
	}
	if len(r.buf) < l.max {
		r.buf = append(r.buf, e)
		return nil
	}
	r.buf[r.start] = e
	r.start = (r.start + 1) % len(r.buf)
	return nil
}

// List implements RunLog. Entries older than the age bound are left out.
func (l *MemoryRunLog) List(_ context.Context, project, endpointID string, page driver.LogPage) ([]driver.RunLogEntry, string, error) {
	var (
		beforeAt  int64
		beforeSeq uint64
	)
	if page.Before != "" {
		var err error
		if beforeAt, beforeSeq, err = driver.ParseCursor(page.Before); err != nil {
			return nil, "", err
		}
	}
	l.mu.Lock()
	r := l.logs[logKey{project, endpointID}]
	var all []driver.RunLogEntry
	if r != nil {
		all = make([]driver.RunLogEntry, 0, len(r.buf))
		all = append(all, r.buf[r.start:]...)
		all = append(all, r.buf[:r.start]...)
	}
	l.mu.Unlock()
	now := time.Now()
	if l.Now != nil {
		now = l.Now()
	}
	cutoff := now.Add(-l.maxAge)
	slices.SortFunc(all, func(a, b driver.RunLogEntry) int { return compareEntries(b, a) })
	var out []driver.RunLogEntry
	for _, e := range all {
		if e.At.Before(cutoff) {
			break
		}
		if page.Before != "" && !olderThan(e, beforeAt, beforeSeq) {
			continue
		}
		if page.Limit > 0 && len(out) == page.Limit {
			return out, driver.Cursor(out[len(out)-1]), nil
		}
		out = append(out, e)
	}
	return out, "", nil
}

// compareEntries orders entries by At, then Seq.
func compareEntries(a, b driver.RunLogEntry) int {
	if c := a.At.Compare(b.At); c != 0 {
		return c
	}
	switch {
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// olderThan reports whether e comes after the cursor (at, seq) in newest-
// first order.
func olderThan(e driver.RunLogEntry, at int64, seq uint64) bool {
	n := e.At.UnixNano()
	return n < at || n == at && e.Seq < seq
}

// DeleteEndpoint implements RunLog.
func (l *MemoryRunLog) DeleteEndpoint(_ context.Context, project, endpointID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.logs, logKey{project, endpointID})
	return nil
}

// runRecord follows one run from Run's start to its end, for the run log
// and the Observer.
type runRecord struct {
	id           string
	project      string
	name         string
	start        time.Time // wall clock, for the duration
	at           time.Time // the Service's clock
	refresh      string
	token        bool
	tokenKeyID   string
	keyID        string
	ep           *driver.Endpoint
	version      int
	cached       bool
	materialized bool
	inlineReason string
	fallbackErr  error
	rows         int
	stats        *Statistics
}

func (s *Service) beginRun(project, name string, req RunRequest) *runRecord {
	r := &runRecord{
		id: newExecutionID(), project: project, name: name,
		start: time.Now(), at: s.now(), refresh: req.Refresh,
	}
	if r.refresh == "" {
		r.refresh = RefreshCache
	}
	if req.Token != nil {
		r.token, r.tokenKeyID = true, req.Token.KeyID
	}
	r.keyID = req.KeyID
	return r
}

// endRun records a run that ends with res or err in the run log (when its
// endpoint was found) and reports it to the Observer; it returns res and
// err as they are. A failure to record is reported to the Observer, never
// to the caller, whose answer is ready.
func (s *Service) endRun(ctx context.Context, r *runRecord, res *RunResult, err error) (*RunResult, error) {
	took := time.Since(r.start)
	status, code := 200, ""
	if err != nil {
		status = StatusOf(err)
		var e *Error
		if errors.As(err, &e) {
			code = e.Code
		}
	}
	ev := RunEvent{
		Project: r.project, Endpoint: r.name, Version: r.version, ExecutionID: r.id,
		Duration: took, Status: status, Code: code, Err: err,
		Refresh: r.refresh, Cached: r.cached, Materialized: r.materialized, Token: r.token, Rows: -1,
		InlineReason: r.inlineReason, ReadErr: r.fallbackErr, RequestID: RequestID(ctx),
	}
	if r.ep != nil {
		e := driver.RunLogEntry{
			ExecutionID: r.id, ProjectID: r.ep.ProjectID, EndpointID: r.ep.ID,
			At: r.at, Version: r.version, DurationMS: ms(took),
			Status: status, ErrorCode: code, Refresh: r.refresh,
			Cached: r.cached, Materialized: r.materialized,
			Token: r.token, TokenKeyID: r.tokenKeyID, KeyID: r.keyID,
		}
		if err == nil {
			if r.rows >= 0 {
				rows := r.rows
				e.Rows = &rows
				ev.Rows = rows
			}
			if r.stats != nil {
				e.RowsRead, e.BytesRead = r.stats.RowsRead, r.stats.BytesRead
			}
		}
		// Written in the background (runlog_writer.go): a run never
		// waits for the log's store.
		if lerr := s.logs.offer(logWrite{entry: &e}); lerr != nil {
			ev.LogErr = lerr
		}
	}
	s.observer.ObserveRun(ctx, ev)
	return res, err
}

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
		out[i] = runLogEntryOf(e)
	}
	return out, next, nil
}
