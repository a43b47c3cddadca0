package endpoint

import (
	"context"
	"errors"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

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
	typeErr      error
	rows         int
	stats        *Statistics
	// log is the run's log entry, and the counts it points to, made by
	// endRun in the record's own allocation: the counts are copied from
	// the answer's statistics, which are its caller's to write to.
	log struct {
		e                   driver.RunLogEntry
		rows                int
		rowsRead, bytesRead int64
	}
}

func (s *Service) beginRun(project, name string, req RunRequest) *runRecord {
	start := time.Now()
	at := systemInstant(start) // the Service's clock (systemNow), read once with start
	if s.cfg.Now != nil {
		at = s.now()
	}
	r := &runRecord{
		id: newExecutionID(), project: project, name: name,
		start: start, at: at, refresh: req.Refresh,
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
		Refresh: r.refresh, Cached: r.cached, Materialized: r.materialized, Token: r.token, KeyID: r.keyID, Rows: -1,
		InlineReason: r.inlineReason, ReadErr: r.fallbackErr, TypeErr: r.typeErr, RequestID: RequestID(ctx),
	}
	if r.ep != nil {
		q := &r.log
		q.e = driver.RunLogEntry{
			ExecutionID: r.id, ProjectID: r.ep.ProjectID, EndpointID: r.ep.ID,
			At: r.at, Version: r.version, DurationMS: ms(took),
			Status: status, ErrorCode: code, Refresh: r.refresh,
			Cached: r.cached, Materialized: r.materialized,
			Token: r.token, TokenKeyID: r.tokenKeyID, KeyID: r.keyID,
		}
		e := &q.e
		if err == nil {
			if r.rows >= 0 {
				q.rows = r.rows
				e.Rows = &q.rows
				ev.Rows = r.rows
			}
			// A cached run (from the result cache, or one that joined
			// another's flight) read nothing of the engine: its counts
			// are the computing run's, logged once, by that run.
			if st := r.stats; st != nil && !r.cached {
				e.RowsRead, e.BytesRead = ownValue(&q.rowsRead, st.RowsRead), ownValue(&q.bytesRead, st.BytesRead)
			}
		}
		// Written in the background (runlog_writer.go): a run never
		// waits for the log's store.
		if lerr := s.logs.offer(logWrite{entry: e}); lerr != nil {
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

// ownValue returns slot holding *p, nil when p is nil: a pointer to a
// copy of p's value, in memory of the caller's (slot).
func ownValue[T any](slot, p *T) *T {
	if p == nil {
		return nil
	}
	*slot = *p
	return slot
}
