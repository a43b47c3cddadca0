package endpoint_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.Len(t, e.tables(t), 1, "tables")

	e.create(t, "daily", q)
	if _, err := e.svc.Restore(ctx, "1", "daily"); endpoint.StatusOf(err) != http.StatusConflict {
		t.Fatalf("Restore over a live name: %v, want 409", err)
	}
	require.NoError(t, e.svc.Delete(ctx, "1", "daily"))
	back, err := e.svc.Restore(ctx, "1", "daily")
	if err != nil || back.ID != gone.ID || !back.IsMaterialized {
		t.Fatalf("Restore = %+v, %v", back, err)
	}

	if _, err := e.svc.SoftDelete(ctx, "1", "daily"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(endpoint.DefaultDeletedRetention + time.Second)
	list, err := e.svc.List(ctx, "1")
	require.NoError(t, err, "List = %d endpoints, %v", len(list), err)
	require.Empty(t, list, "List = %d endpoints, %v", len(list), err)
	require.Empty(t, e.tables(t), "tables")
	if _, err := e.svc.Restore(ctx, "1", "daily"); !errors.Is(err, endpoint.ErrNotFound) {
		t.Fatalf("Restore past the retention: %v, want not found", err)
	}
	if _, err := e.eps.Versions(ctx, "1", gone.ID); !errors.Is(err, endpoint.ErrNotFound) {
		t.Fatalf("the versions of a purged endpoint remain: %v", err)
	}
}

// TestSoftDeletedIsInvisible: no method of the Service but Restore finds a
// soft-deleted endpoint, by its name or by the name a store of an older
// version kept it under (its name, a slash and its id); a rename through
// that name does not bring it back.
func TestSoftDeletedIsInvisible(t *testing.T) {
	e, _ := newMatEnv(t, 200)
	ctx := context.Background()
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})
	gone, err := e.svc.SoftDelete(ctx, "1", "daily")
	require.NoError(t, err)
	vars := map[string]any{"country": "US", "from": "2025-04-01", "to": "2025-05-01"}
	for _, name := range []string{"daily", "daily/" + gone.ID, "daily%2F" + gone.ID, "x/y"} {
		calls := map[string]func() error{
			"Get":      func() error { _, err := e.svc.Get(ctx, "1", name); return err },
			"Run":      func() error { _, err := e.svc.Run(ctx, "1", name, endpoint.RunRequest{Variables: vars}); return err },
			"Versions": func() error { _, err := e.svc.Versions(ctx, "1", name); return err },
			"Logs":     func() error { _, _, err := e.svc.Logs(ctx, "1", name, 10, ""); return err },
			"Update": func() error {
				_, err := e.svc.Update(ctx, "1", name, endpoint.UpdateRequest{Description: ptr("x")})
				return err
			},
			"Rename": func() error {
				_, err := e.svc.Update(ctx, "1", name, endpoint.UpdateRequest{Name: ptr("back")})
				return err
			},
			"Delete":                func() error { return e.svc.Delete(ctx, "1", name) },
			"SoftDelete":            func() error { _, err := e.svc.SoftDelete(ctx, "1", name); return err },
			"Materialize":           func() error { return e.svc.Materialize(ctx, "1", name) },
			"MaterializationStatus": func() error { _, err := e.svc.MaterializationStatus(ctx, "1", name); return err },
			"Version":               func() error { _, err := e.svc.Version(ctx, "1", name, 1); return err },
			"RunSchema":             func() error { _, err := e.svc.RunSchema(ctx, "1", name, 0); return err },
		}
		for method, call := range calls {
			err := call()
			if assert.ErrorIs(t, err, endpoint.ErrNotFound, "%s(%q) of a soft-deleted endpoint: %v, want a 404", method, name, err) {
				assert.Equal(t, http.StatusNotFound, endpoint.StatusOf(err), "%s(%q) of a soft-deleted endpoint: %v, want a 404", method, name, err)
			}
		}
		// The one admission finds no record to run: a 404, before any budget.
		ask := endpoint.Ask{Act: endpoint.ActRun, Endpoint: name, Run: &endpoint.RunRequest{}}
		_, err := e.svc.Admit(ctx, endpoint.Budgets{}, endpoint.Caller{Project: "1"}, ask)
		assert.ErrorIs(t, err, endpoint.ErrNotFound, "Admit of a run of soft-deleted %q", name)
	}
	if _, err := e.svc.Get(ctx, "1", "back"); !errors.Is(err, endpoint.ErrNotFound) {
		t.Errorf("a rename through the stored name brought the deleted endpoint back: %v", err)
	}
	list, err := e.svc.List(ctx, "1")
	if assert.NoError(t, err, "List = %+v, %v; want none", list, err) {
		assert.Empty(t, list, "List = %+v, %v; want none", list, err)
	}
	back, err := e.svc.Restore(ctx, "1", "daily")
	if err != nil || back.ID != gone.ID || back.Name != "daily" || back.DeletedAt != nil {
		t.Fatalf("Restore = %+v, %v", back, err)
	}
	if _, err := e.svc.Run(ctx, "1", "daily", endpoint.RunRequest{Variables: vars}); err != nil {
		t.Errorf("Run of the restored endpoint: %v", err)
	}
}

// TestSoftDeleteKeepsTheName: the store keeps a soft-deleted endpoint
// under its own name, its state being DeletedAt; the same name deleted
// twice is two records beside a live one, Restore brings back the latest
// and is a 409 while a live endpoint holds the name.
func TestSoftDeleteKeepsTheName(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	q := e.query("SELECT 1 AS one")
	first := e.create(t, "daily", q)
	if _, err := e.svc.SoftDelete(ctx, "1", "daily"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	second := e.create(t, "daily", q)
	if _, err := e.svc.SoftDelete(ctx, "1", "daily"); err != nil {
		t.Fatal(err)
	}
	live := e.create(t, "daily", q)
	stored, err := e.eps.List(ctx, "1")
	require.NoError(t, err, "stored = %+v, %v; want three records", stored, err)
	require.Len(t, stored, 3, "stored = %+v, %v; want three records", stored, err)
	for _, s := range stored {
		assert.Equal(t, "daily", s.Name, "record %s is stored as", s.ID)
		deleted := s.DeletedAt != nil
		assert.Equal(t, s.ID != live.ID, deleted, "record %s: deleted", s.ID)
	}
	if _, err := e.svc.Restore(ctx, "1", "daily"); endpoint.StatusOf(err) != http.StatusConflict {
		t.Fatalf("Restore over a live name: %v, want 409", err)
	}
	require.NoError(t, e.svc.Delete(ctx, "1", "daily"))
	back, err := e.svc.Restore(ctx, "1", "daily")
	require.NoError(t, err, "Restore = %s, %v; want the latest deleted, %s", back.ID, err, second.ID)
	require.Equal(t, second.ID, back.ID, "Restore = %s, %v; want the latest deleted, %s", back.ID, err, second.ID)
	if _, err := e.svc.Restore(ctx, "1", "daily"); endpoint.StatusOf(err) != http.StatusConflict {
		t.Fatalf("Restore of the older record over the restored one: %v, want 409", err)
	}
	if got, err := e.svc.Get(ctx, "1", "daily"); err != nil || got.ID != second.ID || got.ID == first.ID {
		t.Fatalf("Get = %s, %v", got.ID, err)
	}
}
