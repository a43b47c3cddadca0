package endpoint

import (
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// executedMarks throttles the writes of last_executed_at: a busy endpoint
// would otherwise cost one store write per run. A run records its time only
// when the last recorded one, by this Service, is at least resolution
// older, so last_executed_at may lag the latest run by up to resolution.
type executedMarks struct {
	mu         sync.Mutex
	resolution time.Duration
	last       map[string]time.Time // endpoint id -> time last written
}

func newExecutedMarks(resolution time.Duration) *executedMarks {
	return &executedMarks{resolution: resolution, last: make(map[string]time.Time)}
}

// due reports whether a run of id at now should be written, and if so
// claims it, so that concurrent runs write once.
func (m *executedMarks) due(id string, now time.Time) (prev time.Time, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prev, seen := m.last[id]
	if seen && now.Sub(prev) < m.resolution && !now.Before(prev) {
		return prev, false
	}
	m.last[id] = now
	return prev, true
}

// release gives a claim back after a failed write, so the next run retries.
func (m *executedMarks) release(id string, claimed, prev time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last[id].Equal(claimed) {
		if prev.IsZero() {
			delete(m.last, id)
		} else {
			m.last[id] = prev
		}
	}
}

// latest returns when this Service last claimed a mark of id (zero when
// never).
func (m *executedMarks) latest(id string) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last[id]
}

// forget drops a deleted endpoint.
func (m *executedMarks) forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.last, id)
}

// markExecuted records a successful run of ep at now, written in the
// background (runlog_writer.go). A failure to record does not fail the
// run, whose answer is already correct; the next run tries again.
func (s *Service) markExecuted(ep *driver.Endpoint, now time.Time) {
	prev, ok := s.executed.due(ep.ID, now)
	if !ok {
		return
	}
	if err := s.logs.offer(logWrite{mark: &executedMark{project: ep.ProjectID, id: ep.ID, at: now, prev: prev}}); err != nil {
		s.executed.release(ep.ID, now, prev)
	}
}
