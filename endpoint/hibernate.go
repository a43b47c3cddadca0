package endpoint

import (
	"context"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// DefaultHibernateAfter is how long a materialization may go unread before
// it hibernates (see Config.HibernateAfter).
const DefaultHibernateAfter = 30 * 24 * time.Hour

// triggerWoken is the refresh trigger of a run that woke a hibernating
// materialization.
const triggerWoken = "woken"

// hibernatingSince reports whether the materialization of e sleeps at now,
// and since when: e is materialized and no run read it, nor was it saved,
// for Config.HibernateAfter. A hibernating materialization is not
// refreshed by the scheduler or RefreshStale, so that nothing is refreshed
// forever for nobody; its table grows stale and runs go inline. The first
// run that finds it so wakes it (noTable).
func (s *Service) hibernatingSince(e *driver.Endpoint, now time.Time) (time.Time, bool) {
	if !e.IsMaterialized || s.cfg.HibernateAfter <= 0 {
		return time.Time{}, false
	}
	last := e.UpdatedAt
	if e.LastExecutedAt != nil && e.LastExecutedAt.After(last) {
		last = *e.LastExecutedAt
	}
	// This Service's own runs count at once, before their marks reach
	// the store.
	if t := s.executed.latest(e.ID); t.After(last) {
		last = t
	}
	since := last.Add(s.cfg.HibernateAfter)
	return since, !now.Before(since)
}

// noTable is the fallback of a run of e that found no fresh stored table
// at now. When e's materialization was hibernating, the run wakes it: it
// asks the scheduler to refresh e at once, and says so.
func (s *Service) noTable(e *driver.Endpoint, now time.Time) *fallback {
	if _, ok := s.hibernatingSince(e, now); !ok {
		return noTable
	}
	select {
	case s.refreshRequests <- refreshRequest{e.ProjectID, e.ID, e.Name, triggerWoken}:
		return inlineBecause("the materialization was hibernating (no run read it for %s); this run woke it and a refresh is queued", s.cfg.HibernateAfter)
	default:
		// This run's last_executed_at wakes it at the scheduler's next
		// look.
		return inlineBecause("the materialization was hibernating (no run read it for %s); this run woke it and the scheduler refreshes it at its next look", s.cfg.HibernateAfter)
	}
}

// due reports whether the scheduler should refresh e at now: never while
// it hibernates, otherwise as dueAwake says.
func (s *Service) due(ctx context.Context, e *driver.Endpoint, now time.Time) bool {
	if _, ok := s.hibernatingSince(e, now); ok {
		return false
	}
	return s.dueAwake(ctx, e, now)
}
