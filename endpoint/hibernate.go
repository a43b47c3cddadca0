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

// due reports whether the scheduler should refresh e at now: never while
// it hibernates, otherwise as dueAwake says.
func (s *Service) due(ctx context.Context, e *driver.Endpoint, now time.Time) bool {
	if _, ok := s.hibernatingSince(e, now); ok {
		return false
	}
	return s.dueAwake(ctx, e, now)
}
