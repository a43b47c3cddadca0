package endpoint

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/google/uuid"
)

// ownedCopy returns a copy of res, with results as its Results, that
// shares nothing with res: its columns and types, and what its time and
// statistics pointers point to, are its own, in two allocations. Its
// execution id and version instant are left for answerOwned to set.
func ownedCopy(res *RunResult, results any) *RunResult {
	a := &struct {
		out                       RunResult
		refreshed, materializedAt time.Time
		stats                     Statistics
		rowsRead, bytesRead       int64
		debug                     DebugInfo
	}{out: *res}
	out := &a.out
	out.Results = results
	out.ExecutionID, out.EndpointVersionCreatedAt, out.fallbackErr, out.typeErr, out.encoded = "", nil, nil, nil, nil
	nc := len(res.Columns)
	names := make([]string, nc+len(res.Types))
	copy(names, res.Columns)
	copy(names[nc:], res.Types)
	out.Columns, out.Types = names[:nc:nc], names[nc:]
	if res.Columns == nil {
		out.Columns = nil
	}
	if res.Types == nil {
		out.Types = nil
	}
	out.LastRefresh = ownValue(&a.refreshed, res.LastRefresh)
	out.EndpointMaterializedAt = ownValue(&a.materializedAt, res.EndpointMaterializedAt)
	if out.Statistics = ownValue(&a.stats, res.Statistics); out.Statistics != nil {
		a.stats.RowsRead = ownValue(&a.rowsRead, a.stats.RowsRead)
		a.stats.BytesRead = ownValue(&a.bytesRead, a.stats.BytesRead)
	}
	out.Debug = ownValue(&a.debug, res.Debug)
	return out
}

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
		rec.fallbackErr, rec.typeErr = out.fallbackErr, out.typeErr
	}
	out.fallbackErr, out.typeErr = nil, nil
	rec.rows = rows
	rec.stats = out.Statistics
	s.markExecuted(ep, now)
	return out
}

// resultRows counts the rows (SQL) or series and cohorts (insight) of a
// computed answer, -1 when it cannot tell.
func resultRows(results any) int {
	switch r := results.(type) {
	case [][]any:
		return len(r)
	case *insight.Result:
		if r.Kind == insight.Retention {
			return len(r.Cohorts)
		}
		if r.Kind == insight.Lifecycle {
			return len(r.Lifecycle)
		}
		return len(r.Series)
	}
	return -1
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

// newExecutionID returns a fresh execution id: a random (version 4) UUID,
// as uuid.NewString makes, in one allocation (the text) where NewString
// makes two.
func newExecutionID() string {
	var u uuid.UUID
	_, _ = rand.Read(u[:])  // crypto/rand.Read never fails (it ends the program instead)
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // the variant of RFC 9562
	return u.String()
}
