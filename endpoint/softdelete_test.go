package endpoint_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
)

// TestSoftDeleteRetention: a soft-deleted materialized endpoint is not
// refreshed and keeps its table for the retention period; Restore is a
// 409 while its name is taken; past the retention the next listing
// deletes it for good (record, versions, table), and Restore is a 404.
func TestSoftDeleteRetention(t *testing.T) {
	e, _ := newMatEnv(t, 500)
	ctx := context.Background()
	q := e.query(dailyPurchases, "country", "from", "to")
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 1 {
		t.Fatalf("RefreshStale = %d, %v", n, err)
	}
	gone, err := e.svc.SoftDelete(ctx, "1", "daily")
	if err != nil || gone.DeletedAt == nil || gone.Name != "daily" {
		t.Fatalf("SoftDelete = %+v, %v", gone, err)
	}
	if _, err := e.svc.Get(ctx, "1", "daily"); endpoint.StatusOf(err) != http.StatusNotFound {
		t.Fatalf("Get of a deleted endpoint: %v", err)
	}
	e.clock.Advance(2 * time.Hour) // past the table's freshness
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 0 {
		t.Fatalf("RefreshStale refreshed %d deleted endpoints (%v)", n, err)
	}
	if got := e.tables(t); len(got) != 1 {
		t.Fatalf("tables %v: a deleted endpoint keeps its table within the retention", got)
	}

	e.create(t, "daily", q)
	if _, err := e.svc.Restore(ctx, "1", "daily"); endpoint.StatusOf(err) != http.StatusConflict {
		t.Fatalf("Restore over a live name: %v, want 409", err)
	}
	if err := e.svc.Delete(ctx, "1", "daily"); err != nil {
		t.Fatal(err)
	}
	back, err := e.svc.Restore(ctx, "1", "daily")
	if err != nil || back.ID != gone.ID || !back.IsMaterialized {
		t.Fatalf("Restore = %+v, %v", back, err)
	}

	if _, err := e.svc.SoftDelete(ctx, "1", "daily"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(endpoint.DefaultDeletedRetention + time.Second)
	list, err := e.svc.List(ctx, "1")
	if err != nil || len(list) != 0 {
		t.Fatalf("List = %d endpoints, %v", len(list), err)
	}
	if got := e.tables(t); len(got) != 0 {
		t.Fatalf("tables %v remain after the retention", got)
	}
	if _, err := e.svc.Restore(ctx, "1", "daily"); !errors.Is(err, endpoint.ErrNotFound) {
		t.Fatalf("Restore past the retention: %v, want not found", err)
	}
	if _, err := e.eps.Versions(ctx, "1", gone.ID); !errors.Is(err, endpoint.ErrNotFound) {
		t.Fatalf("the versions of a purged endpoint remain: %v", err)
	}
}
