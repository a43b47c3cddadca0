package endpoint

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"time"
)

// RunLogEntry is one run as the run log keeps it: what ran, how long it
// took and what it cost, how it ended, and by which credential. It never
// holds the run's variable values, nor a token: an embed token's run
// records the token's key id only.
type RunLogEntry struct {
	// ExecutionID is the run's execution_id.
	ExecutionID string `json:"execution_id"`
	ProjectID   string `json:"-"`
	EndpointID  string `json:"-"`
	// Seq orders entries of the same instant; the log assigns it.
	Seq uint64 `json:"-"`
	// At is when the run started.
	At      time.Time `json:"at"`
	Version int       `json:"version"`
	// DurationMS is the whole run, as the Service saw it.
	DurationMS float64 `json:"duration_ms"`
	// Rows is how many rows (SQL) or series (insight) the answer held; nil
	// for a failed run.
	Rows *int `json:"rows"`
	// RowsRead and BytesRead are what the engine reported reading, nil
	// when it reports nothing (see Statistics).
	RowsRead  *int64 `json:"rows_read"`
	BytesRead *int64 `json:"bytes_read"`
	// Status is the HTTP status of the run's answer, 200 for success, and
	// ErrorCode the code of its error.
	Status    int    `json:"status"`
	ErrorCode string `json:"error_code,omitempty"`
	// Refresh is the refresh mode asked for; Cached tells that no query
	// ran (a cached or shared answer); Materialized that the answer came
	// from the stored table.
	Refresh      string `json:"refresh"`
	Cached       bool   `json:"is_cached"`
	Materialized bool   `json:"endpoint_materialized"`
	// Token tells that the run came with an embed token, and TokenKeyID
	// is that token's kid.
	Token      bool   `json:"token"`
	TokenKeyID string `json:"token_kid,omitempty"`
}

// LogPage asks a RunLog for part of an endpoint's log: at most Limit
// entries older than the entry named by Before (the Next of the previous
// page; "" for the newest).
type LogPage struct {
	Limit  int
	Before string
}

// RunLog keeps a bounded record of each endpoint's runs
// (Config.RunLog).
//
// Guidelines for implementers: Append keeps e (assigning e.Seq so that
// entries of one endpoint with the same At have an order); List returns an
// endpoint's entries newest first (by At, then Seq), at most page.Limit of
// them, after the cursor page.Before, and the cursor of the next page ("" at
// the end; Cursor makes one from an entry). Retention is the log's
// business: it drops entries older than its age bound and beyond its count
// per endpoint, and says so in its documentation. DeleteEndpoint forgets
// an endpoint's entries. Projects are isolated. Every method is safe for
// concurrent use. The conformance suite in endpoint/storetest (RunRunLog)
// states the contract as tests.
type RunLog interface {
	Append(ctx context.Context, e RunLogEntry) error
	List(ctx context.Context, project, endpointID string, page LogPage) (entries []RunLogEntry, next string, err error)
	DeleteEndpoint(ctx context.Context, project, endpointID string) error
}

// Cursor is the LogPage.Before that continues a listing after e.
func Cursor(e RunLogEntry) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(e.At.UnixNano()))
	binary.BigEndian.PutUint64(b[8:], e.Seq)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ErrBadCursor is returned for a LogPage.Before that no List gave.
var ErrBadCursor = errors.New("endpoint: invalid log cursor")

// ParseCursor reads a cursor made by Cursor: the instant (Unix
// nanoseconds) and sequence number of the last entry of the previous page.
func ParseCursor(c string) (atNanos int64, seq uint64, err error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) != 16 {
		return 0, 0, ErrBadCursor
	}
	return int64(binary.BigEndian.Uint64(b[:8])), binary.BigEndian.Uint64(b[8:]), nil
}

// Defaults of MemoryRunLog and of the run logs of package sqlstore.
const (
	// DefaultLogMaxAge is how long an entry is kept.
	DefaultLogMaxAge = 30 * 24 * time.Hour
	// DefaultLogMaxPerEndpoint is how many entries are kept per endpoint.
	DefaultLogMaxPerEndpoint = 1000
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
	buf   []RunLogEntry
	start int // index of the oldest entry once buf is full
}

// NewMemoryRunLog returns an empty MemoryRunLog; a non-positive maxAge or
// maxPerEndpoint means DefaultLogMaxAge or DefaultLogMaxPerEndpoint.
func NewMemoryRunLog(maxAge time.Duration, maxPerEndpoint int) *MemoryRunLog {
	if maxAge <= 0 {
		maxAge = DefaultLogMaxAge
	}
	if maxPerEndpoint <= 0 {
		maxPerEndpoint = DefaultLogMaxPerEndpoint
	}
	return &MemoryRunLog{maxAge: maxAge, max: maxPerEndpoint, logs: make(map[logKey]*ring)}
}

var _ RunLog = (*MemoryRunLog)(nil)

// Append implements RunLog.
func (l *MemoryRunLog) Append(_ context.Context, e RunLogEntry) error {
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
func (l *MemoryRunLog) List(_ context.Context, project, endpointID string, page LogPage) ([]RunLogEntry, string, error) {
	var (
		beforeAt  int64
		beforeSeq uint64
	)
	if page.Before != "" {
		var err error
		if beforeAt, beforeSeq, err = ParseCursor(page.Before); err != nil {
			return nil, "", err
		}
	}
	l.mu.Lock()
	r := l.logs[logKey{project, endpointID}]
	var all []RunLogEntry
	if r != nil {
		all = make([]RunLogEntry, 0, len(r.buf))
		all = append(all, r.buf[r.start:]...)
		all = append(all, r.buf[:r.start]...)
	}
	l.mu.Unlock()
	now := time.Now()
	if l.Now != nil {
		now = l.Now()
	}
	cutoff := now.Add(-l.maxAge)
	slices.SortFunc(all, func(a, b RunLogEntry) int { return compareEntries(b, a) })
	var out []RunLogEntry
	for _, e := range all {
		if e.At.Before(cutoff) {
			break
		}
		if page.Before != "" && !olderThan(e, beforeAt, beforeSeq) {
			continue
		}
		if page.Limit > 0 && len(out) == page.Limit {
			return out, Cursor(out[len(out)-1]), nil
		}
		out = append(out, e)
	}
	return out, "", nil
}

// compareEntries orders entries by At, then Seq.
func compareEntries(a, b RunLogEntry) int {
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
func olderThan(e RunLogEntry, at int64, seq uint64) bool {
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
	ep           *Endpoint
	version      int
	cached       bool
	materialized bool
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
	}
	if r.ep != nil {
		e := RunLogEntry{
			ExecutionID: r.id, ProjectID: r.ep.ProjectID, EndpointID: r.ep.ID,
			At: r.at, Version: r.version, DurationMS: ms(took),
			Status: status, ErrorCode: code, Refresh: r.refresh,
			Cached: r.cached, Materialized: r.materialized,
			Token: r.token, TokenKeyID: r.tokenKeyID,
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
		if lerr := s.runLog.Append(context.WithoutCancel(ctx), e); lerr != nil {
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
		if _, _, err := ParseCursor(before); err != nil {
			return nil, "", invalidf(CodeInvalidInput, "before", "Invalid cursor '%s': pass the 'next' of a previous page.", cut(before))
		}
	}
	e, err := s.get(ctx, project, name)
	if err != nil {
		return nil, "", err
	}
	list, next, err := s.runLog.List(ctx, project, e.ID, LogPage{Limit: limit, Before: before})
	if err != nil {
		return nil, "", storeError(err, nil)
	}
	if list == nil {
		list = []RunLogEntry{}
	}
	return list, next, nil
}
