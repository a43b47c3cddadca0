package endpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/google/uuid"
)

// answerOwned makes out, an answer that nothing but this run holds
// (computed by it, read from the result cache for it, or its copy of a
// flight's answer), the answer of this run: with its execution id, and
// cached telling that it did not compute it. rows is the number of rows
// or series it holds. Nothing of out is kept once it returns: the caller
// may write to any of it.
func (s *Service) answerOwned(ctx context.Context, ep *driver.Endpoint, out *RunResult, cached bool, rows int, now time.Time, rec *runRecord) *RunResult {
	out.ExecutionID = rec.id
	out.IsCached = cached
	out.EndpointVersionCreatedAt = nil
	if t, ok := s.versionCreated(ctx, ep, out.EndpointVersion); ok {
		// In the answer's own allocation.
		out.created = t
		out.EndpointVersionCreatedAt = &out.created
	}
	rec.cached, rec.materialized, rec.inlineReason = cached, out.EndpointMaterialized, out.InlineReason
	if !cached {
		// The failed read is reported by the run that made it only.
		rec.fallbackErr, rec.typeErr, rec.cacheErr = out.fallbackErr, out.typeErr, out.cacheErr
	}
	out.fallbackErr, out.typeErr, out.cacheErr = nil, nil, nil
	rec.rows = rows
	rec.stats = out.Statistics
	s.markExecuted(ep, now)
	return out
}

// versionKey names one version of one endpoint.
type versionKey struct {
	id      string
	version int
}

// versionCreated returns when version n of ep was saved, from a memo of
// this Service (versions never change) or the store; false when the store
// cannot say.
func (s *Service) versionCreated(ctx context.Context, ep *driver.Endpoint, n int) (time.Time, bool) {
	if n == 1 && ep.VersionsCount <= 1 {
		return ep.CreatedAt, true
	}
	k := versionKey{ep.ID, n}
	if t, _, ok, _ := s.versionTimes.get(k); ok {
		return t, true
	}
	gen := s.versionTimes.generation()
	v, err := s.cfg.Endpoints.Version(ctx, ep.ProjectID, ep.ID, n)
	if err != nil {
		return time.Time{}, false
	}
	s.versionTimes.put(k, v.CreatedAt, time.Time{}, gen)
	return v.CreatedAt, true
}

// executionIDs are the parts of a new execution id: random bits drawn once
// per process, and a count of the ids made since.
var executionIDs struct {
	prefix [8]byte
	n      atomic.Uint64
}

func init() { _, _ = rand.Read(executionIDs.prefix[:]) } // crypto/rand.Read never fails (it ends the program instead)

// newExecutionID returns a fresh execution id: a version 4 UUID, in one
// allocation (the text), that no other run of this process has had, nor
// (but by a chance of 2^-60 per pair of processes) of another: 60 random
// bits drawn once per process, then a count of the ids made since. An id
// names a run in the run log; it needs to be unique, not secret, so it
// costs a count, not the system's random source, per run.
func newExecutionID() string {
	var u uuid.UUID
	copy(u[:8], executionIDs.prefix[:])
	binary.BigEndian.PutUint64(u[8:], executionIDs.n.Add(1)) // its top 2 bits are the variant's: 2^62 ids
	u[6] = u[6]&0x0f | 0x40                                  // version 4
	u[8] = u[8]&0x3f | 0x80                                  // the variant of RFC 9562
	return u.String()
}

// MarshalJSON writes r as the HTTP API's JSON answer: the fields as
// tagged, and each value of a float column (ColumnKinds) as a float,
// 256.0 rather than 256 (see appendFloatJSON). r's values are not
// changed.
func (r RunResult) MarshalJSON() ([]byte, error) {
	type plain RunResult
	p := plain(r)
	p.Results = jsonResults(r.Results, r.kinds)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the caller's encoder escapes, or not, as it was told
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// markExecuted records a successful run of ep at now, written in the
// background (runlog.go). A failure to record does not fail the
// run, whose answer is already correct; the next run tries again.
func (s *Service) markExecuted(ep *driver.Endpoint, now time.Time) {
	prev, ok := s.executed.Due(ep.ID, now)
	if !ok {
		return
	}
	if err := s.logs.offer(logWrite{mark: &executedMark{project: ep.ProjectID, id: ep.ID, at: now, prev: prev}}); err != nil {
		s.executed.Release(ep.ID, now, prev)
	}
}
