package memstore

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// RunLog is a RunLog in memory, the Service's default: per endpoint
// at most maxPerEndpoint entries (the oldest go first), none older than
// maxAge at the time of a List. Make one with NewRunLog.
type RunLog struct {
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

// NewRunLog returns an empty RunLog; a non-positive maxAge or
// maxPerEndpoint means DefaultLogMaxAge or DefaultLogMaxPerEndpoint.
func NewRunLog(maxAge time.Duration, maxPerEndpoint int) *RunLog {
	if maxAge <= 0 {
		maxAge = driver.DefaultLogMaxAge
	}
	if maxPerEndpoint <= 0 {
		maxPerEndpoint = driver.DefaultLogMaxPerEndpoint
	}
	return &RunLog{maxAge: maxAge, max: maxPerEndpoint, logs: make(map[logKey]*ring)}
}

var _ driver.RunLog = (*RunLog)(nil)

// Append implements RunLog.
func (l *RunLog) Append(_ context.Context, e driver.RunLogEntry) error {
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
func (l *RunLog) List(_ context.Context, project, endpointID string, page driver.LogPage) ([]driver.RunLogEntry, string, error) {
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
func (l *RunLog) DeleteEndpoint(_ context.Context, project, endpointID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.logs, logKey{project, endpointID})
	return nil
}
