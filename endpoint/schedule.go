package endpoint

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/refreshes"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// Defaults of the scheduler's settings in Config.
const (
	// DefaultScheduleInterval is how often the scheduler looks for
	// materialized endpoints that are due.
	DefaultScheduleInterval = 30 * time.Second
	// DefaultRefreshJitter is the share of an endpoint's freshness period
	// by which its refresh may come early.
	DefaultRefreshJitter = 0.1
	// DefaultScheduleConcurrency is how many refreshes the scheduler runs
	// at once.
	DefaultScheduleConcurrency = 2
	// failureRetry bounds how long the scheduler waits after a failed
	// refresh before trying again (less for a shorter freshness period).
	failureRetry = 5 * time.Minute
)

// ErrScheduling is returned by Schedule when the Service's scheduler is
// running already.
var ErrScheduling = errors.New("endpoint: the scheduler is running already")

// refreshRequest asks the scheduler to refresh one endpoint at once, for
// trigger: "saved" (requestRefreshIfPending) or "woken" (a run of a
// hibernating materialization).
type refreshRequest struct{ project, id, name, trigger string }

// refreshRequestQueue is how many refresh requests wait for a busy
// scheduler; past it a request is dropped, and the scheduler's next look
// finds the endpoint pending.
const refreshRequestQueue = 256

// requestRefreshIfPending asks a running scheduler to refresh e at once
// when it is materialized and has no table for its current version and
// settings: the first refresh after a create or update, so that the table
// is ready seconds later rather than at the next look. Without a running
// scheduler the request waits in a short queue (or is dropped); the
// scheduler refreshes pending endpoints when it starts anyway. c is e's
// current version compiled.
func (s *Service) requestRefreshIfPending(e *driver.Endpoint, c *compiled) {
	st := &e.MaterializationState
	if !e.IsMaterialized || c == nil || st.Table != "" && st.Built == tableKey(e, c) {
		return
	}
	select {
	case s.refreshRequests <- refreshRequest{e.ProjectID, e.ID, e.Name, "saved"}:
	default:
	}
}

// Schedule keeps the stored tables of materialized endpoints fresh until
// ctx is done: every Config.ScheduleInterval it lists them (of every
// project) and refreshes each that is due — pending (no table for its
// current version and settings), or whose table is older than its
// freshness period less a jitter (up to Config.RefreshJitter of the
// period, fixed per endpoint and table, so that endpoints created together
// do not all refresh together), or, for a live tail whose runs read the
// source from the start of its table's day, that has reached the last
// start of a day within its period (cutAligned, not jittered) — and at
// once each that a create or update made pending. After a failed refresh
// it waits the freshness period or five minutes, whichever is less,
// before trying that version again.
// Refreshes run at most Config.ScheduleConcurrency at a time, each under
// the endpoint's lease (see Leaser), so that Services sharing a store never
// refresh an endpoint twice at once.
//
// Schedule returns nil once ctx is done and the refreshes under way have
// ended (they are cancelled with ctx), or ErrScheduling when this Service
// is scheduling already. A host starts it in a goroutine next to its
// server and stops it with the context.
func (s *Service) Schedule(ctx context.Context) error {
	if !s.scheduling.CompareAndSwap(false, true) {
		return ErrScheduling
	}
	defer s.scheduling.Store(false)
	var (
		wg    sync.WaitGroup
		fl    = refreshes.UnderWay{}
		slots = make(chan struct{}, s.cfg.ScheduleConcurrency)
	)
	start := func(project, id, name, trigger string) {
		if !fl.Begin(id, trigger) {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ; trigger != ""; trigger = fl.Next(id) {
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					fl.End(id)
					return
				}
				still := s.due
				if trigger == triggerWoken {
					still = s.dueAwake
				}
				_, _ = s.refreshGuarded(ctx, project, id, name, false, trigger, still)
				<-slots
			}
		}()
	}
	look := func() {
		list, err := s.cfg.Endpoints.ListMaterialized(ctx)
		if err != nil {
			return
		}
		list = s.live(ctx, list)
		now := s.now()
		for i := range list {
			if e := &list[i]; s.due(ctx, e, now) {
				start(e.ProjectID, e.ID, e.Name, "scheduled")
			}
		}
	}
	t := time.NewTicker(s.cfg.ScheduleInterval)
	defer t.Stop()
	look()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case k := <-s.refreshRequests:
			start(k.project, k.id, k.name, k.trigger)
		case <-t.C:
			look()
		}
	}
}

// dueAwake reports whether the scheduler should refresh e at now, were it
// not hibernating (see due). An endpoint whose current version does not
// compile is due: its refresh fails and says why, and the back-off then
// applies.
func (s *Service) dueAwake(ctx context.Context, e *driver.Endpoint, now time.Time) bool {
	st := &e.MaterializationState
	c, err := s.compiledVersion(ctx, e, e.CurrentVersion)
	if err != nil {
		return st.Status != StatusFailed || st.FailedAt == nil || !now.Before(st.FailedAt.Add(min(freshness(e), failureRetry)))
	}
	key := tableKey(e, c)
	period := freshness(e)
	if st.Status == StatusFailed && st.Attempt == key && st.FailedAt != nil &&
		now.Before(st.FailedAt.Add(min(period, failureRetry))) {
		return false
	}
	if st.Table == "" || st.At == nil || st.Built != key {
		return true
	}
	return !now.Before(s.refreshDueAt(ctx, e, c, *st.At))
}

// refreshDueAt is when the scheduler refreshes e's table built at at, of
// its current version compiled as c: once its freshness period has passed,
// less the jitter, or at the start of its cut's bucket (see cutAligned).
func (s *Service) refreshDueAt(ctx context.Context, e *driver.Endpoint, c *compiled, at time.Time) time.Time {
	period := freshness(e)
	if start, ok := s.cutAligned(ctx, e, c, at, period); ok {
		return start
	}
	early := time.Duration(float64(period) * s.cfg.RefreshJitter * jitterOf(e.ID, at))
	return at.Add(period - early)
}

// cutAligned returns when the scheduler refreshes a table built at at of
// an endpoint whose runs read the source from the start of the build
// instant's day (a live tail over a table summarized by the day, see
// materialize.Plan.TailCutBucket): at the last start of a day before the
// table's freshness ends, when one comes after at. Its runs
// then read the tail alone, not the bucket's older rows too: a day's table
// built at 02:00 is refreshed at the next midnight rather than at 02:00
// (less the jitter), and from then on at every midnight, as often as
// before for a period of whole days. A period of whole days and a part
// is cut to the whole days (47 hours: every midnight), and a period under
// a day adds a refresh at each midnight (23 hours: two a day). ok is
// false for every other endpoint, and when the freshness ends before the
// next bucket starts (an hour's freshness of a day's table built at
// 10:00), where the jittered period applies.
func (s *Service) cutAligned(ctx context.Context, e *driver.Endpoint, c *compiled, at time.Time, period time.Duration) (time.Time, bool) {
	if e.MaterializationTailColumn == "" {
		return time.Time{}, false
	}
	v := s.verdict(ctx, c, e.MaterializationBuckets, e.MaterializationTailColumn)
	if !v.ok || v.plan == nil {
		return time.Time{}, false
	}
	// Only a day's cut: aligned to hours, the endpoints built in one hour
	// would stay due at one instant, without the jitter, to save at most
	// an hour of the source's rows a run.
	if bucket, ok := v.plan.TailCutBucket(); !ok || bucket != engine.Day {
		return time.Time{}, false
	}
	start := engine.Day.Floor(at.Add(period))
	return start, start.After(at)
}

// cutDue reports whether e's table, compiled as c, is due at now at the
// start of its cut's day (cutAligned), before its freshness has passed.
func (s *Service) cutDue(ctx context.Context, e *driver.Endpoint, c *compiled, now time.Time) bool {
	st := &e.MaterializationState
	if st.At == nil {
		return false
	}
	start, ok := s.cutAligned(ctx, e, c, *st.At, freshness(e))
	return ok && !now.Before(start)
}

// jitterOf is a number in [0, 1) fixed by an endpoint and the instant of
// its table: every process computes the same one, and it changes with
// every refresh.
func jitterOf(id string, at time.Time) float64 {
	h := sha256.New()
	h.Write([]byte(id))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(at.UnixNano()))
	h.Write(b[:])
	sum := h.Sum(nil)
	return float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53)
}

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
	if t := s.executed.Latest(e.ID); t.After(last) {
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

// live drops the soft-deleted endpoints of list, in place, and deletes
// for good those past their retention (best effort: one that fails is
// tried again at the next listing, and is logged). Every listing of
// endpoints goes through it, so that deleted ones are invisible.
func (s *Service) live(ctx context.Context, list []driver.Endpoint) []driver.Endpoint {
	now := s.now()
	out := list[:0]
	for _, e := range list {
		switch {
		case e.DeletedAt == nil:
			out = append(out, e)
		case s.expired(&e, now):
			s.purgeDeleted(ctx, e)
		}
	}
	return out
}

// expired reports whether the soft-deleted e is past its retention at now.
func (s *Service) expired(e *driver.Endpoint, now time.Time) bool {
	return e.DeletedAt != nil && !now.Before(e.DeletedAt.Add(s.cfg.DeletedRetention))
}

// purgeDeleted deletes the soft-deleted e for good: its record, versions,
// run log and stored tables.
func (s *Service) purgeDeleted(ctx context.Context, e driver.Endpoint) {
	ctx = context.WithoutCancel(ctx)
	err := s.cfg.Endpoints.Delete(ctx, e.ProjectID, e.ID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		s.cfg.Observer.ObserveRefresh(ctx, RefreshEvent{Project: e.ProjectID, Endpoint: nameBeforeDelete(&e), Trigger: "purge", Rows: -1, Err: err})
		return
	}
	s.executed.Forget(e.ID)
	_ = s.runLog.DeleteEndpoint(ctx, e.ProjectID, e.ID)
	s.dropTables(ctx, &e)
}
