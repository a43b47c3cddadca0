package driver

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"time"
)

// RunLogEntry is one run as the run log keeps it: what ran, how long it
// took and what it cost, how it ended, and by which credential. It never
// holds the run's variable values, nor a token: an embed token's run
// records the token's key id only.
type RunLogEntry struct {
	// ExecutionID is the run's execution_id.
	ExecutionID string
	ProjectID   string
	EndpointID  string
	// Seq orders entries of the same instant; the log assigns it.
	Seq uint64
	// At is when the run started.
	At      time.Time
	Version int
	// DurationMS is the whole run, as the Service saw it.
	DurationMS float64
	// Rows is how many rows (SQL) or series (insight) the answer held; nil
	// for a failed run.
	Rows *int
	// RowsRead and BytesRead are what the engine reported reading, nil
	// when it reports nothing (see endpoint.Statistics).
	RowsRead  *int64
	BytesRead *int64
	// Status is the HTTP status of the run's answer, 200 for success, and
	// ErrorCode the code of its error.
	Status    int
	ErrorCode string
	// Refresh is the refresh mode asked for; Cached tells that no query
	// ran (a cached or shared answer); Materialized that the answer came
	// from the stored table.
	Refresh      string
	Cached       bool
	Materialized bool
	// Token tells that the run came with an embed token, and TokenKeyID
	// is that token's kid.
	Token      bool
	TokenKeyID string
	// KeyID is the id of the stored API key (apikey.Keys) the run was
	// authenticated with, "" for another credential; never the key.
	KeyID string
}

// LogPage asks a RunLog for part of an endpoint's log: at most Limit
// entries older than the entry named by Before (the Next of the previous
// page; "" for the newest).
type LogPage struct {
	Limit  int
	Before string
}

// RunLog keeps a bounded record of each endpoint's runs
// (endpoint.Config.RunLog).
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

// BatchRunLog is a RunLog that appends several entries at once, as the
// Service's background writer hands them over: in one transaction, say,
// rather than one per entry. AppendBatch is Append of each entry, in
// order; on an error, some of them may have been kept. The slice is the
// caller's again once AppendBatch returns (the writer reuses it): keep
// copies of the entries, never the slice.
type BatchRunLog interface {
	RunLog
	AppendBatch(ctx context.Context, entries []RunLogEntry) error
}

// Cursor is the LogPage.Before that continues a listing after e.
func Cursor(e RunLogEntry) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(e.At.UnixNano()))
	binary.BigEndian.PutUint64(b[8:], e.Seq)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ErrBadCursor is returned for a LogPage.Before that no List gave.
var ErrBadCursor = errors.New("driver: invalid log cursor")

// ParseCursor reads a cursor made by Cursor: the instant (Unix
// nanoseconds) and sequence number of the last entry of the previous page.
func ParseCursor(c string) (atNanos int64, seq uint64, err error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) != 16 {
		return 0, 0, ErrBadCursor
	}
	return int64(binary.BigEndian.Uint64(b[:8])), binary.BigEndian.Uint64(b[8:]), nil
}

// Defaults of memstore.RunLog and of the run logs of package sqlstore.
const (
	// DefaultLogMaxAge is how long an entry is kept.
	DefaultLogMaxAge = 30 * 24 * time.Hour
	// DefaultLogMaxPerEndpoint is how many entries are kept per endpoint.
	DefaultLogMaxPerEndpoint = 1000
)
