package endpoint_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/stretchr/testify/require"
)

// TestMaterializationStaleRunsInline: past its freshness period a table no
// longer serves; RefreshStale rebuilds exactly the stale and pending
// endpoints.
func TestMaterializationStaleRunsInline(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	q := e.query(dailyPurchases, "country", "from", "to")
	freshness := endpoint.Seconds(10 * time.Minute)
	e.createMat(t, "daily", q, endpoint.CreateRequest{MaterializationFreshness: freshness})
	e.createMat(t, "other", q, endpoint.CreateRequest{})
	e.create(t, "plain", q)
	ctx := context.Background()
	n, err := e.svc.RefreshStale(ctx)
	require.NoError(t, err, "RefreshStale of two pending endpoints = %d, %v", n, err)
	require.Equal(t, 2, n, "RefreshStale of two pending endpoints = %d, %v", n, err)
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 0 {
		t.Fatalf("RefreshStale of fresh endpoints = %d, %v", n, err)
	}
	vars := runVars("US", "2025-05-01", "2025-05-08")
	require.True(t, e.mustRun(t, "daily", vars).EndpointMaterialized, "a fresh table did not serve")
	e.clock.Advance(10*time.Minute + time.Second)
	require.False(t, e.mustRun(t, "daily", vars).EndpointMaterialized, "a stale table served")
	require.True(t, e.mustRun(t, "other", vars).EndpointMaterialized, "the default freshness is an hour")
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 1 {
		t.Fatalf("RefreshStale of one stale endpoint = %d, %v", n, err)
	}
	res := e.mustRun(t, "daily", vars)
	require.True(t, res.EndpointMaterialized, "after the refresh: %v at %v", res.EndpointMaterialized, res.EndpointMaterializedAt)
	require.True(t, res.EndpointMaterializedAt.Equal(e.clock.Now()), "after the refresh: %v at %v", res.EndpointMaterialized, res.EndpointMaterializedAt)
	require.Len(t, e.tables(t), 2, "tables")
}

// TestMaterializationFailureKeepsLastTable: a failed refresh reports
// failed with an error that leaks nothing, and the last good table keeps
// serving; a failed first refresh leaves runs inline.
func TestMaterializationFailureKeepsLastTable(t *testing.T) {
	e, x := newMatEnv(t, 2000)
	q := e.query(dailyPurchases, "country", "from", "to")
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.createMat(t, "never", q, endpoint.CreateRequest{})
	e.materialize(t, "daily")
	built := *e.get(t, "daily").Materialization.LastMaterializedAt
	vars := runVars("DE", "2025-04-01", "2025-05-01")
	before := e.mustRun(t, "daily", vars)

	x.fail.Store(true)
	e.clock.Advance(time.Minute)
	for _, name := range []string{"daily", "never"} {
		err := e.svc.Materialize(context.Background(), "1", name)
		wantError(t, err, 502, endpoint.CodeMaterializationFailed,
			"Materialization of endpoint '"+name+"' failed: the query could not be executed against the database", "")
		require.Contains(t, fmt.Sprint(errors.Unwrap(err)), "disk I/O", "the cause is not reachable: %v", errors.Unwrap(err))
	}
	m := e.get(t, "daily").Materialization
	if m.Status != endpoint.StatusFailed || m.Error != "the query could not be executed against the database" ||
		m.LastMaterializedAt == nil || !m.LastMaterializedAt.Equal(built) {
		t.Fatalf("after a failed refresh: %+v", m)
	}
	after := e.mustRun(t, "daily", vars)
	require.True(t, after.EndpointMaterialized, "the last good table stopped serving: %+v", after)
	require.Equal(t, before.Results, after.Results, "the last good table stopped serving: %+v", after)
	if m := e.get(t, "never").Materialization; m.Status != endpoint.StatusFailed || m.LastMaterializedAt != nil {
		t.Fatalf("never refreshed: %+v", m)
	}
	require.False(t, e.mustRun(t, "never", vars).EndpointMaterialized, "an endpoint without a table read one")
	n, err := e.svc.RefreshStale(context.Background())
	require.Equal(t, 0, n, "RefreshStale with a fresh and a failing endpoint = %d, %v", n, err)
	require.Error(t, err, "RefreshStale with a fresh and a failing endpoint = %d, %v", n, err)
	x.fail.Store(false)
	e.materialize(t, "never")
	if m := e.get(t, "never").Materialization; m.Status != endpoint.StatusCompleted || m.Error != "" {
		t.Fatalf("after a good refresh: %+v", m)
	}
}

// TestMaterializationVersions: a new version runs inline until its own
// table is built; the previous table is dropped only then; older versions
// always run inline; turning materialization off or deleting the endpoint
// drops its table.
func TestMaterializationVersions(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	ctx := context.Background()
	ep := e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})
	e.materialize(t, "daily")
	v1 := materialize.TableName(ep.ID, 1)
	got := e.tables(t)
	require.Equal(t, []string{v1}, got, "tables %v, want [%s]", got, v1)
	vars := runVars("FR", "2025-04-01", "2025-05-01")
	weekly := e.query(strings.Replace(dailyPurchases, "date(timestamp)", "strftime('%Y-%W', timestamp)", 1), "country", "from", "to")
	up, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{Query: weekly})
	require.NoError(t, err)
	require.Equal(t, endpoint.StatusPending, up.Materialization.Status, "a new version: %+v", up.Materialization)
	require.Nil(t, up.Materialization.LastMaterializedAt, "a new version: %+v", up.Materialization)
	res := e.mustRun(t, "daily", vars)
	require.False(t, res.EndpointMaterialized, "version 2 before its refresh: %+v", res)
	require.Equal(t, 2, res.EndpointVersion, "version 2 before its refresh: %+v", res)
	one := 1
	if res, err := e.svc.Run(ctx, "1", "daily", endpoint.RunRequest{Variables: vars, Version: &one}); err != nil || res.EndpointMaterialized {
		t.Fatalf("version 1: %+v, %v", res, err)
	}
	require.Equal(t, []string{v1}, e.tables(t), "the old table went before the new one was built")
	e.materialize(t, "daily")
	v2 := materialize.TableName(ep.ID, 2)
	if got := e.tables(t); !reflect.DeepEqual(got, []string{v2}) {
		t.Fatalf("tables %v, want [%s]", got, v2)
	}
	if res := e.mustRun(t, "daily", vars); !res.EndpointMaterialized || len(res.Results.([][]any)) == 0 {
		t.Fatalf("version 2 after its refresh: %+v", res)
	}
	if res, err := e.svc.Run(ctx, "1", "daily", endpoint.RunRequest{Variables: vars, Version: &one}); err != nil || res.EndpointMaterialized {
		t.Fatalf("version 1 after version 2's refresh: %+v, %v", res, err)
	}

	no := false
	off, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{IsMaterialized: &no})
	if err != nil || off.Materialization.Status != "" || len(e.tables(t)) != 0 {
		t.Fatalf("turned off: %+v, %v, tables %v", off.Materialization, err, e.tables(t))
	}
	yes := true
	if _, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{IsMaterialized: &yes}); err != nil {
		t.Fatal(err)
	}
	e.materialize(t, "daily")
	require.Len(t, e.tables(t), 1, "tables")
	require.NoError(t, e.svc.Delete(ctx, "1", "daily"))
	require.Empty(t, e.tables(t), "tables left after delete")
}

// TestMaterializeOneAtATime: concurrent refreshes of one endpoint, by
// Materialize and RefreshStale, never overlap, and runs during them
// answer correctly from the table or inline.
func TestMaterializeOneAtATime(t *testing.T) {
	e, x := newMatEnv(t, 2000)
	q := e.query(dailyPurchases, "country", "from", "to")
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	vars := runVars("US", "2025-04-01", "2025-05-01")
	want := e.mustRun(t, "inline", vars).Results
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			switch i % 3 {
			case 0:
				err = e.svc.Materialize(context.Background(), "1", "daily")
			case 1:
				_, err = e.svc.RefreshStale(context.Background())
			default:
				var res *endpoint.RunResult
				if res, err = e.svc.Run(context.Background(), "1", "daily", endpoint.RunRequest{Variables: vars}); err == nil && !sameJSON(res.Results, want) {
					err = fmt.Errorf("run during refreshes: %v, want %v", res.Results, want)
				}
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.Equal(t, int32(0), x.overlaps.Load())
	m := e.get(t, "daily").Materialization
	require.Equal(t, endpoint.StatusCompleted, m.Status, "status")
}
