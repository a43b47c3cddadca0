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
	if err != nil || n != 2 {
		t.Fatalf("RefreshStale of two pending endpoints = %d, %v", n, err)
	}
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 0 {
		t.Fatalf("RefreshStale of fresh endpoints = %d, %v", n, err)
	}
	vars := runVars("US", "2025-05-01", "2025-05-08")
	if !e.mustRun(t, "daily", vars).EndpointMaterialized {
		t.Fatal("a fresh table did not serve")
	}
	e.clock.Advance(10*time.Minute + time.Second)
	if e.mustRun(t, "daily", vars).EndpointMaterialized {
		t.Fatal("a stale table served")
	}
	if !e.mustRun(t, "other", vars).EndpointMaterialized {
		t.Fatal("the default freshness is an hour")
	}
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 1 {
		t.Fatalf("RefreshStale of one stale endpoint = %d, %v", n, err)
	}
	res := e.mustRun(t, "daily", vars)
	if !res.EndpointMaterialized || !res.EndpointMaterializedAt.Equal(e.clock.Now()) {
		t.Fatalf("after the refresh: %v at %v", res.EndpointMaterialized, res.EndpointMaterializedAt)
	}
	if got := e.tables(t); len(got) != 2 {
		t.Fatalf("tables %v, want one per materialized endpoint", got)
	}
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
		if !strings.Contains(fmt.Sprint(errors.Unwrap(err)), "disk I/O") {
			t.Fatalf("the cause is not reachable: %v", errors.Unwrap(err))
		}
	}
	m := e.get(t, "daily").Materialization
	if m.Status != endpoint.StatusFailed || m.Error != "the query could not be executed against the database" ||
		m.LastMaterializedAt == nil || !m.LastMaterializedAt.Equal(built) {
		t.Fatalf("after a failed refresh: %+v", m)
	}
	after := e.mustRun(t, "daily", vars)
	if !after.EndpointMaterialized || !reflect.DeepEqual(after.Results, before.Results) {
		t.Fatalf("the last good table stopped serving: %+v", after)
	}
	if m := e.get(t, "never").Materialization; m.Status != endpoint.StatusFailed || m.LastMaterializedAt != nil {
		t.Fatalf("never refreshed: %+v", m)
	}
	if e.mustRun(t, "never", vars).EndpointMaterialized {
		t.Fatal("an endpoint without a table read one")
	}
	if n, err := e.svc.RefreshStale(context.Background()); n != 0 || err == nil {
		t.Fatalf("RefreshStale with a fresh and a failing endpoint = %d, %v", n, err)
	}
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
	if got := e.tables(t); !reflect.DeepEqual(got, []string{v1}) {
		t.Fatalf("tables %v, want [%s]", got, v1)
	}
	vars := runVars("FR", "2025-04-01", "2025-05-01")
	weekly := e.query(strings.Replace(dailyPurchases, "date(timestamp)", "strftime('%Y-%W', timestamp)", 1), "country", "from", "to")
	up, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{Query: weekly})
	if err != nil {
		t.Fatal(err)
	}
	if up.Materialization.Status != endpoint.StatusPending || up.Materialization.LastMaterializedAt != nil {
		t.Fatalf("a new version: %+v", up.Materialization)
	}
	if res := e.mustRun(t, "daily", vars); res.EndpointMaterialized || res.EndpointVersion != 2 {
		t.Fatalf("version 2 before its refresh: %+v", res)
	}
	one := 1
	if res, err := e.svc.Run(ctx, "1", "daily", endpoint.RunRequest{Variables: vars, Version: &one}); err != nil || res.EndpointMaterialized {
		t.Fatalf("version 1: %+v, %v", res, err)
	}
	if got := e.tables(t); !reflect.DeepEqual(got, []string{v1}) {
		t.Fatalf("the old table went before the new one was built: %v", got)
	}
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
	if len(e.tables(t)) != 1 {
		t.Fatalf("tables %v", e.tables(t))
	}
	if err := e.svc.Delete(ctx, "1", "daily"); err != nil {
		t.Fatal(err)
	}
	if got := e.tables(t); len(got) != 0 {
		t.Fatalf("tables left after delete: %v", got)
	}
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
	if n := x.overlaps.Load(); n != 0 {
		t.Fatalf("%d refreshes overlapped another", n)
	}
	if m := e.get(t, "daily").Materialization; m.Status != endpoint.StatusCompleted {
		t.Fatalf("status %s", m.Status)
	}
}
