package endpoint_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newSchedEnv is newMatEnv with a Service that schedules every 5 ms and
// reports to obs; the memory store leases.
func newSchedEnv(t *testing.T, obs endpoint.Observer) (*env, *refreshWatch) {
	t.Helper()
	e, x := newMatEnv(t, 1000)
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps.Store, Variables: e.vstore, Executor: x, Now: e.clock.Now,
		Observer: obs, ScheduleInterval: 5 * time.Millisecond})
	require.NoError(t, err)
	e.svc = svc
	return e, x
}

// startSchedule runs svc.Schedule until the test ends.
func startSchedule(t *testing.T, svc *endpoint.Service) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Schedule(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err, "Schedule")
		case <-time.After(10 * time.Second):
			t.Error("Schedule did not return after its context ended")
		}
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		require.False(t, time.Now().After(deadline), "timed out waiting for %s", what)
		time.Sleep(2 * time.Millisecond)
	}
}

func (e *env) status(t *testing.T, name string) endpoint.MaterializationReport {
	t.Helper()
	r, err := e.svc.MaterializationStatus(context.Background(), "1", name)
	require.NoError(t, err)
	return r
}

func isStatus(r endpoint.MaterializationReport, s endpoint.MaterializationStatus) bool {
	return r.Status != nil && *r.Status == s
}

// scheduleHourly replaces e's Service by one that observes with obs and
// looks every hour, and starts its scheduler: only kicks refresh soon.
func scheduleHourly(t *testing.T, e *env, obs endpoint.Observer) *endpoint.Service {
	t.Helper()
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps.Store, Variables: e.vstore, Executor: execOf(e), Now: e.clock.Now,
		Observer: obs, ScheduleInterval: time.Hour})
	require.NoError(t, err)
	e.svc = svc
	startSchedule(t, svc)
	return svc
}

// TestScheduleRefreshesOnSave: with the scheduler running, a create that
// makes an endpoint materialized, and an update that changes its query,
// start a refresh at once, long before the next look would; the scheduler
// stops with its context and refuses to run twice.
func TestScheduleRefreshesOnSave(t *testing.T) {
	obs := &recorder{}
	e, _ := newSchedEnv(t, obs)
	svc := scheduleHourly(t, e, obs)
	q := e.daily()
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	eventually(t, "the refresh after create", func() bool { return isStatus(e.status(t, "daily"), endpoint.StatusCompleted) })
	// The scheduler runs (it refreshed): a second one is refused.
	require.ErrorIs(t, svc.Schedule(context.Background()), endpoint.ErrScheduling, "a second Schedule")
	r := e.status(t, "daily")
	if !r.Serving || r.Version != 1 || r.Rows == nil || *r.Rows == 0 || r.LastSuccessAt == nil || r.LastError != nil {
		t.Fatalf("status after the first refresh: %+v", r)
	}
	// The scheduler's first look may come after the create (it starts in
	// a goroutine); then the look refreshes it, otherwise the kick. Its
	// event may come a moment after the status says completed.
	eventually(t, "the first refresh's event", func() bool { return len(obs.refreshEvents()) >= 1 })
	ev := obs.refreshEvents()
	if len(ev) != 1 || ev[0].Trigger != "saved" && ev[0].Trigger != "scheduled" || ev[0].Err != nil || ev[0].Rows != *r.Rows {
		t.Fatalf("refresh events %+v", ev)
	}

	q2 := e.query(dailyPurchases+" LIMIT 1000", "country", "from", "to")
	_, err := svc.Update(context.Background(), "1", "daily", endpoint.UpdateRequest{Query: q2})
	require.NoError(t, err)
	eventually(t, "the refresh after update", func() bool {
		r := e.status(t, "daily")
		return isStatus(r, endpoint.StatusCompleted) && r.Version == 2
	})
	require.True(t, e.mustRun(t, "daily", runVars("US", "2025-05-01", "2025-05-08")).EndpointMaterialized, "version 2 did not read its table")
	// The next look is an hour away: the update's kick refreshed it. The
	// refresh is told to the observer after its state is stored, so the
	// event may come a moment after the status says completed.
	eventually(t, "the second refresh's event", func() bool { return len(obs.refreshEvents()) >= 2 })
	if ev := obs.refreshEvents(); len(ev) != 2 || ev[1].Trigger != "saved" {
		t.Fatalf("refresh events %+v", ev)
	}
}

// heldRecorder records events, and holds the scheduler's first refresh
// (inside it, after the table is built) until release is closed.
type heldRecorder struct {
	recorder
	built   chan struct{}
	release chan struct{}
	once    sync.Once
}

func (r *heldRecorder) ObserveRefresh(ctx context.Context, ev endpoint.RefreshEvent) {
	r.recorder.ObserveRefresh(ctx, ev)
	r.once.Do(func() {
		close(r.built)
		<-r.release
	})
}

// TestScheduleKickDuringRefresh: an update whose kick reaches the
// scheduler while it still refreshes the version before (the table built,
// the refresh not yet ended) is refreshed right after it, not at the next
// look an hour later. The kick was dropped before.
func TestScheduleKickDuringRefresh(t *testing.T) {
	obs := &heldRecorder{built: make(chan struct{}), release: make(chan struct{})}
	e, _ := newSchedEnv(t, obs)
	svc := scheduleHourly(t, e, obs)
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	<-obs.built
	q2 := e.query(dailyPurchases+" LIMIT 1000", "country", "from", "to")
	_, err := svc.Update(context.Background(), "1", "daily", endpoint.UpdateRequest{Query: q2})
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond) // the scheduler takes the kick meanwhile
	close(obs.release)
	eventually(t, "the refresh after update", func() bool {
		r := e.status(t, "daily")
		return isStatus(r, endpoint.StatusCompleted) && r.Version == 2
	})
}

// TestScheduleEveryFreshnessPeriod: after its first refresh an endpoint is
// refreshed again when its table reaches its freshness period, early by
// at most the jitter (a tenth of the period by default), never before.
func TestScheduleEveryFreshnessPeriod(t *testing.T) {
	obs := &recorder{}
	e, _ := newSchedEnv(t, obs)
	hour := 3600
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{DataFreshnessSeconds: &hour})
	startSchedule(t, e.svc)
	eventually(t, "the first refresh", func() bool { return isStatus(e.status(t, "daily"), endpoint.StatusCompleted) })
	built := *e.status(t, "daily").LastSuccessAt

	e.clock.Advance(54*time.Minute - time.Second) // before the earliest jittered instant
	time.Sleep(50 * time.Millisecond)             // ten looks
	if got := *e.status(t, "daily").LastSuccessAt; !got.Equal(built) {
		t.Fatalf("refreshed at %v, before 90%% of its period", got.Sub(built))
	}
	next := e.status(t, "daily").NextRefreshAt
	if next.Before(built.Add(54*time.Minute)) || next.After(built.Add(time.Hour)) {
		t.Fatalf("next refresh at %v after the last, want within the jitter", next.Sub(built))
	}
	e.clock.Advance(6*time.Minute + time.Second) // a full period
	eventually(t, "the periodic refresh", func() bool {
		return e.status(t, "daily").LastSuccessAt.After(built)
	})
	ev := obs.refreshEvents()
	require.Len(t, ev, 2, "refresh events %+v", ev)
	require.Equal(t, "scheduled", ev[1].Trigger, "refresh events %+v", ev)
}

// TestScheduleAlignsTailToItsCut: a live tail whose runs read the source
// from the start of its table's day (a summarized table of distinct users
// per day) is refreshed by the scheduler at the next midnight, not a day
// after its build less the jitter, and from then on at every midnight,
// once a day; the same query without a tail keeps the jittered period.
// The status's next_refresh_at says so for both.
func TestScheduleAlignsTailToItsCut(t *testing.T) {
	obs := &recorder{}
	e, x := newMatEnv(t, 1000)
	looks := &lookCounter{Store: e.eps.Store}
	svc, err := endpoint.New(endpoint.Config{Endpoints: looks, Variables: e.vstore, Executor: x, Now: e.clock.Now,
		Observer: obs, ScheduleInterval: 5 * time.Millisecond})
	require.NoError(t, err)
	e.svc = svc
	q := e.query(propertyDistinct, "country", "from", "to")
	e.createMat(t, "tail", q, endpoint.CreateRequest{MaterializationTail: "timestamp"})
	e.createMat(t, "plain", q, endpoint.CreateRequest{})
	startSchedule(t, e.svc)
	eventually(t, "the first refreshes", func() bool {
		return isStatus(e.status(t, "tail"), endpoint.StatusCompleted) && isStatus(e.status(t, "plain"), endpoint.StatusCompleted)
	})
	built := *e.status(t, "tail").LastSuccessAt
	midnight := time.Date(built.Year(), built.Month(), built.Day()+1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, midnight, *e.status(t, "tail").NextRefreshAt, "the tail's next refresh, built at %v", built)
	plain := e.status(t, "plain")
	require.False(t, plain.NextRefreshAt.Equal(midnight), "the table without a tail is refreshed at midnight")
	require.False(t, plain.NextRefreshAt.Before(plain.LastSuccessAt.Add(21*time.Hour+36*time.Minute)),
		"the table without a tail is refreshed at %v, before its period less the jitter", plain.NextRefreshAt)

	e.clock.Advance(midnight.Sub(e.clock.Now()) - time.Second)
	looks.await(t, 3) // the second of them looked at this instant, the third began after it
	require.Len(t, obs.refreshEvents(), 2, "refreshed before midnight")
	require.Equal(t, built, *e.status(t, "tail").LastSuccessAt, "refreshed before midnight")
	require.False(t, isStatus(e.status(t, "tail"), endpoint.StatusRunning), "refreshing before midnight")
	e.clock.Advance(2 * time.Second)
	eventually(t, "the refresh at midnight", func() bool { return e.status(t, "tail").LastSuccessAt.After(built) })
	require.Equal(t, midnight.Add(24*time.Hour), *e.status(t, "tail").NextRefreshAt, "the next refresh after midnight's")
	require.Equal(t, *plain.LastSuccessAt, *e.status(t, "plain").LastSuccessAt, "the table without a tail was refreshed at midnight")
	ev := obs.refreshEvents()
	require.Len(t, ev, 3, "refresh events %+v", ev)
	require.Equal(t, "scheduled", ev[2].Trigger, "refresh events %+v", ev)
}

// lookCounter counts the scheduler's looks (its listings of the
// materialized endpoints).
type lookCounter struct {
	driver.Store
	n atomic.Int64
}

func (s *lookCounter) ListMaterialized(ctx context.Context) ([]driver.Endpoint, error) {
	s.n.Add(1)
	return s.Store.ListMaterialized(ctx)
}

// await waits until the scheduler has begun n more looks: each but the
// last has ended, since a look begins once the one before it ended.
func (s *lookCounter) await(t *testing.T, n int64) {
	t.Helper()
	want := s.n.Load() + n
	eventually(t, "the scheduler's looks", func() bool { return s.n.Load() >= want })
}

// TestScheduleBacksOffAfterFailure: a failed refresh is not tried again at
// every look, but after five minutes (less for a shorter freshness).
func TestScheduleBacksOffAfterFailure(t *testing.T) {
	obs := &recorder{}
	e, x := newSchedEnv(t, obs)
	x.fail.Store(true)
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	startSchedule(t, e.svc)
	eventually(t, "the failed refresh", func() bool { return isStatus(e.status(t, "daily"), endpoint.StatusFailed) })
	r := e.status(t, "daily")
	if r.LastError == nil || *r.LastError != "the query could not be executed against the database" || r.LastErrorAt == nil ||
		!r.NextRefreshAt.Equal(r.LastErrorAt.Add(5*time.Minute)) {
		t.Fatalf("status after a failure: %+v", r)
	}
	time.Sleep(50 * time.Millisecond)
	require.Len(t, obs.refreshEvents(), 1)
	x.fail.Store(false)
	e.clock.Advance(5 * time.Minute)
	eventually(t, "the retry", func() bool { return isStatus(e.status(t, "daily"), endpoint.StatusCompleted) })
}

// TestRefreshLeaseTwoServices: two Services on one store (two processes)
// never refresh one endpoint at once, however they are asked; each
// refresh completes.
func TestRefreshLeaseTwoServices(t *testing.T) {
	e, _ := newSchedEnv(t, nil)
	x := watchRefreshes(execOf(e))
	var err error
	e.svc, err = endpoint.New(endpoint.Config{Endpoints: e.eps.Store, Variables: e.vstore, Executor: x, Now: e.clock.Now,
		ScheduleInterval: 5 * time.Millisecond})
	require.NoError(t, err)
	other, err := endpoint.New(endpoint.Config{Endpoints: e.eps.Store, Variables: e.vstore, Executor: x, Now: e.clock.Now,
		ScheduleInterval: 5 * time.Millisecond})
	require.NoError(t, err)
	q := e.daily()
	for _, name := range []string{"a", "b", "c"} {
		e.createMat(t, name, q, endpoint.CreateRequest{})
	}
	var wg sync.WaitGroup
	for i := range 12 {
		svc := e.svc
		if i%2 == 1 {
			svc = other
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, svc.Materialize(context.Background(), "1", []string{"a", "b", "c"}[i%3]))
		}()
	}
	wg.Wait()
	// And both schedulers at once, on endpoints made stale.
	e.clock.Advance(25 * time.Hour)
	startSchedule(t, e.svc)
	startSchedule(t, other)
	eventually(t, "the scheduled refreshes", func() bool {
		for _, name := range []string{"a", "b", "c"} {
			if !e.status(t, name).Serving {
				return false
			}
		}
		return true
	})
	require.Equal(t, int32(0), x.overlaps.Load())
}

// TestRefreshLeaseTakeover: a lease whose holder died blocks refreshes
// until it expires; then another Service takes over.
func TestRefreshLeaseTakeover(t *testing.T) {
	e, _ := newSchedEnv(t, nil)
	ep := e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	store := e.eps.Store.(*memstore.Store)
	ctx := context.Background()
	// A process took the lease and died: nobody renews it.
	if ok, err := store.AcquireLease(ctx, "refresh:1:"+ep.ID, "dead", e.clock.Now(), e.clock.Now().Add(endpoint.DefaultLeaseDuration)); err != nil || !ok {
		t.Fatalf("AcquireLease: %v, %v", ok, err)
	}
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 0 {
		t.Fatalf("RefreshStale under another's lease = %d, %v", n, err)
	}
	short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	err := e.svc.Materialize(short, "1", "daily")
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "Materialize under another's lease")
	require.False(t, isStatus(e.status(t, "daily"), endpoint.StatusCompleted), "refreshed under another's lease")
	e.clock.Advance(endpoint.DefaultLeaseDuration)
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 1 {
		t.Fatalf("RefreshStale after the lease expired = %d, %v", n, err)
	}
	// The lease was released after the refresh.
	if ok, err := store.AcquireLease(ctx, "refresh:1:"+ep.ID, "next", e.clock.Now(), e.clock.Now().Add(time.Minute)); err != nil || !ok {
		t.Fatalf("the lease was kept after the refresh: %v, %v", ok, err)
	}
}

// TestHibernation: a materialization no run read for Config.HibernateAfter
// is refreshed neither by RefreshStale nor by the scheduler, its status
// says so, and the next run answers inline and wakes it: the scheduler
// then refreshes it at once, and runs read the table again.
func TestHibernation(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	q := e.daily()
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	ctx := context.Background()
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 1 {
		t.Fatalf("RefreshStale = %d, %v", n, err)
	}
	vars := runVars("US", "2025-05-01", "2025-05-08")

	e.clock.Advance(endpoint.DefaultHibernateAfter + time.Hour)
	st, err := e.svc.MaterializationStatus(ctx, "1", "daily")
	if err != nil || !st.Hibernating || st.HibernatingSince == nil || st.NextRefreshAt != nil {
		t.Fatalf("status after %s unread: %+v, %v; want hibernating with no next refresh", endpoint.DefaultHibernateAfter, st, err)
	}
	require.True(t, e.get(t, "daily").Materialization.Hibernating, "the endpoint's materialization does not say hibernating")
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 0 {
		t.Fatalf("RefreshStale refreshed %d hibernating endpoints (err %v)", n, err)
	}

	// A scheduler that looks now skips it; the run's wake-up kick makes
	// it refresh at once.
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.svc.Schedule(sctx) }()
	defer func() { stop(); <-done }()

	res := e.mustRun(t, "daily", vars)
	require.False(t, res.EndpointMaterialized, "the waking run: materialized %v, reason %q; want inline, saying hibernating", res.EndpointMaterialized, res.InlineReason)
	require.Contains(t, res.InlineReason, "hibernating", "the waking run: materialized %v, reason %q; want inline, saying hibernating", res.EndpointMaterialized, res.InlineReason)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ep := e.get(t, "daily")
		if at := ep.Materialization.LastMaterializedAt; at != nil && at.Equal(e.clock.Now()) {
			require.False(t, ep.Materialization.Hibernating, "a woken materialization still says hibernating")
			break
		}
		require.False(t, time.Now().After(deadline), "the woken materialization was not refreshed: %+v", ep.Materialization)
		time.Sleep(20 * time.Millisecond)
	}
	require.True(t, e.mustRun(t, "daily", vars).EndpointMaterialized, "after waking, runs do not read the table")
}

// TestHibernationOff: a negative HibernateAfter keeps refreshing.
func TestHibernationOff(t *testing.T) {
	e, x := newMatEnv(t, 500)
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: x, Now: e.clock.Now, HibernateAfter: -1})
	require.NoError(t, err)
	e.svc = svc
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	e.clock.Advance(365 * 24 * time.Hour)
	if n, err := e.svc.RefreshStale(context.Background()); err != nil || n != 1 {
		t.Fatalf("RefreshStale with hibernation off = %d, %v", n, err)
	}
}
