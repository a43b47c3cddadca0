package endpoint_test

import (
	"context"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/stretchr/testify/require"
)

// TestHibernation: a materialization no run read for Config.HibernateAfter
// is refreshed neither by RefreshStale nor by the scheduler, its status
// says so, and the next run answers inline and wakes it: the scheduler
// then refreshes it at once, and runs read the table again.
func TestHibernation(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	q := e.query(dailyPurchases, "country", "from", "to")
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
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})
	e.clock.Advance(365 * 24 * time.Hour)
	if n, err := e.svc.RefreshStale(context.Background()); err != nil || n != 1 {
		t.Fatalf("RefreshStale with hibernation off = %d, %v", n, err)
	}
}
