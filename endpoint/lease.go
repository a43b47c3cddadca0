package endpoint

import (
	"context"
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/sql/scope"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// DefaultLeaseDuration is Config.LeaseDuration's default.
const DefaultLeaseDuration = time.Minute

// leasePoll is how often a refresh that must wait for another process's
// lease tries again.
const leasePoll = 50 * time.Millisecond

// refreshLease names the lease of the refreshes of an endpoint.
func refreshLease(project, id string) string {
	return "refresh:" + project + ":" + id
}

// takeLease takes the refresh lease of the endpoint with id for this
// Service, when the store has leases: waiting for it when wait is set,
// giving up at once otherwise (ok false). While it is held, it is renewed
// every third of its duration; the context returned is cancelled when a
// renewal finds the lease lost, so that a refresh stops rather than
// overlap another holder's. release ends the renewals and the lease.
func (s *Service) takeLease(ctx context.Context, project, id string, wait bool) (held context.Context, release func(), ok bool, err error) {
	if s.leases == nil {
		return ctx, func() {}, true, nil
	}
	name := refreshLease(project, id)
	dur := s.cfg.LeaseDuration
	for {
		now := s.now()
		got, err := s.leases.AcquireLease(ctx, name, s.holder, now, now.Add(dur))
		if err != nil {
			return nil, nil, false, storeError(fmt.Errorf("taking the refresh lease: %w", err), nil)
		}
		if got {
			break
		}
		if !wait {
			return nil, nil, false, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil, false, contextError(ctx.Err())
		case <-time.After(leasePoll):
		}
	}
	held, cancel := context.WithCancel(ctx)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(dur / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				now := s.now()
				got, err := s.leases.AcquireLease(held, name, s.holder, now, now.Add(dur))
				if err == nil && !got {
					cancel()
					return
				}
			}
		}
	}()
	release = func() {
		close(stop)
		<-done
		cancel()
		_ = s.leases.ReleaseLease(context.WithoutCancel(ctx), name, s.holder)
	}
	return held, release, true, nil
}

// refreshGuarded refreshes the endpoint with id (named name) so that no
// other refresh of it runs at the same time: in this Service (its refresh
// lock) and in any Service sharing the store (a lease); it then waits for a
// turn among Config.MaxRefreshes. With wait it waits for a refresh under
// way to end and then refreshes; without, it returns ran false at once
// when one is under way. still, when not nil, is asked again about the
// endpoint as the store holds it once the lease is held: a refresh that
// another process completed meanwhile is not run twice. The Observer is
// told of every refresh that ran.
func (s *Service) refreshGuarded(ctx context.Context, project, id, name string, wait bool, trigger string, still func(context.Context, *driver.Endpoint, time.Time) bool) (ran bool, err error) {
	lock := s.refreshing.get(id)
	if ok, err := s.lockRefresh(ctx, lock, name, wait); !ok {
		return false, err
	}
	defer func() { <-lock }()
	run := s.runs.begin(id, trigger, s.now())
	defer s.runs.end(id, run)
	held, release, ok, err := s.takeLease(ctx, project, id, wait)
	switch {
	case err != nil && ctx.Err() != nil:
		return false, s.refreshWaitError(name, ctx.Err())
	case err != nil || !ok:
		return false, err
	}
	defer release()
	if still != nil {
		e, err := s.liveByName(held, project, name)
		if err != nil || e.ID != id || !still(held, &e, s.now()) {
			return false, nil
		}
	}
	if err := acquire(held, s.refreshSlots); err != nil {
		return false, s.refreshWaitError(name, err)
	}
	defer func() { <-s.refreshSlots }()
	start := time.Now()
	err = s.refresh(held, project, id, name, run)
	if err == nil && trigger == "saved" {
		// Before the lock goes: a Materialize waiting for it finds the
		// table of the save built (savedStill).
		s.saved.built(id, run.key)
	}
	s.observeRefresh(ctx, project, name, trigger, time.Since(start), err)
	return true, err
}

// lockRefresh takes lock, the refresh lock of the endpoint named name:
// with wait it waits for it, without it reports false at once when another
// refresh holds it.
func (s *Service) lockRefresh(ctx context.Context, lock chan struct{}, name string, wait bool) (bool, error) {
	if wait {
		if err := acquire(ctx, lock); err != nil {
			return false, s.refreshWaitError(name, err)
		}
		return true, nil
	}
	select {
	case lock <- struct{}{}:
		return true, nil
	default:
		return false, nil
	}
}

// observeRefresh tells the Observer of a refresh that ran, with the rows of
// the table it built when it succeeded.
func (s *Service) observeRefresh(ctx context.Context, project, name, trigger string, took time.Duration, err error) {
	ev := RefreshEvent{Project: project, Endpoint: name, Trigger: trigger, Duration: took, Rows: -1, Err: err}
	if err == nil {
		if e, gerr := s.liveByName(context.WithoutCancel(ctx), project, name); gerr == nil {
			if e.MaterializationState.Rows != nil {
				ev.Rows = *e.MaterializationState.Rows
			}
			ev.EdgeIndex, ev.EdgeIndexWarning = e.MaterializationState.EdgeIndex, e.MaterializationState.EdgeIndexNote
		}
	}
	s.observer.ObserveRefresh(ctx, ev)
}

// countRows counts the rows of a stored table just built; nil when the
// count fails, which does not fail the refresh.
func (s *Service) countRows(ctx context.Context, table string) *int64 {
	return s.countOf(ctx, scope.Count(s.cfg.Executor.Engine(), table, 0))
}

// countOf runs st, a statement of the library's own that answers one
// count, and returns it; nil when it fails or answers anything else.
func (s *Service) countOf(ctx context.Context, st scope.Statement) *int64 {
	res, err := s.queryOwn(ctx, st)
	if err != nil || len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return nil
	}
	n, ok := asInt64(res.Rows[0][0])
	if !ok {
		return nil
	}
	return &n
}
