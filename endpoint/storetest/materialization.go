package storetest

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// sameSettings fails t when got's materialization settings differ from
// want's.
func sameSettings(t *testing.T, what string, got, want driver.Endpoint) {
	t.Helper()
	if got.DataFreshnessSeconds != want.DataFreshnessSeconds {
		t.Fatalf("%s: data freshness = %d, want %d", what, got.DataFreshnessSeconds, want.DataFreshnessSeconds)
	}
	if got.MaterializationFreshness != want.MaterializationFreshness ||
		!maps.Equal(got.MaterializationBuckets, want.MaterializationBuckets) ||
		got.MaterializationTailColumn != want.MaterializationTailColumn ||
		!slices.Equal(got.OptionalBreakdowns, want.OptionalBreakdowns) {
		t.Fatalf("%s: settings = (%v, %v, %q, %v), want (%v, %v, %q, %v)", what,
			time.Duration(got.MaterializationFreshness), got.MaterializationBuckets, got.MaterializationTailColumn, got.OptionalBreakdowns,
			time.Duration(want.MaterializationFreshness), want.MaterializationBuckets, want.MaterializationTailColumn, want.OptionalBreakdowns)
	}
}

// sameState fails t when got differs from want.
func sameState(t *testing.T, what string, got, want driver.MaterializationState) {
	t.Helper()
	if got.Status != want.Status || got.Attempt != want.Attempt || got.Error != want.Error ||
		got.Table != want.Table || got.Built != want.Built || (got.At == nil) != (want.At == nil) ||
		(got.Rows == nil) != (want.Rows == nil) || got.Rows != nil && *got.Rows != *want.Rows ||
		got.Took != want.Took || (got.FailedAt == nil) != (want.FailedAt == nil) {
		t.Fatalf("%s: state = %+v, want %+v", what, got, want)
	}
	if got.At != nil {
		sameTime(t, what+": At", *got.At, *want.At)
	}
	if got.FailedAt != nil {
		sameTime(t, what+": FailedAt", *got.FailedAt, *want.FailedAt)
	}
}

// testMaterializationSettings: Create and Update store the settings as
// given, Get returns them.
func testMaterializationSettings(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "daily")
	e.IsMaterialized = true
	e.DataFreshnessSeconds = 3600
	e.MaterializationFreshness = 90 * time.Minute
	e.MaterializationBuckets = map[string]engine.Bucket{"from": engine.Hour, "to": engine.Week}
	e.MaterializationTailColumn = "timestamp"
	mustCreate(t, s, e, v)
	got := mustGet(t, s, "1", "daily")
	sameEndpoint(t, "Get after Create", got, e)
	sameSettings(t, "Get after Create", got, e)

	e.MaterializationFreshness = time.Minute + 500*time.Millisecond
	e.DataFreshnessSeconds = 604800
	e.MaterializationBuckets = nil
	e.MaterializationTailColumn = ""
	e.OptionalBreakdowns = []string{"$browser", "country"}
	if err := s.Update(ctx, e, nil); err != nil {
		t.Fatalf("Update: %v", err)
	}
	sameSettings(t, "Get after Update", mustGet(t, s, "1", "daily"), e)
}

// testSetMaterialization: the state is written by Create (as given) and
// SetMaterialization only; Update, with or without a new version, keeps
// the stored state whatever e holds.
func testSetMaterialization(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "daily")
	e.IsMaterialized = true
	e.MaterializationState = driver.MaterializationState{Status: driver.StatusPending, Attempt: "v1"}
	mustCreate(t, s, e, v)
	sameState(t, "Get after Create", mustGet(t, s, "1", "daily").MaterializationState, e.MaterializationState)

	at := base.Add(time.Hour)
	failed := base.Add(2 * time.Hour)
	rows := int64(1234)
	st := driver.MaterializationState{
		Status: driver.StatusFailed, Attempt: "v1;a", Error: "the query could not be executed",
		Table: "endpointkit_mat_x_v1", Built: "v1;", At: &at,
		Rows: &rows, Took: 1500 * time.Millisecond, FailedAt: &failed,
	}
	if err := s.SetMaterialization(ctx, "1", e.ID, st); err != nil {
		t.Fatalf("SetMaterialization: %v", err)
	}
	got := mustGet(t, s, "1", "daily")
	sameState(t, "Get after SetMaterialization", got.MaterializationState, st)
	sameEndpoint(t, "SetMaterialization changes nothing else", got, e)

	// The caller's state is not aliased.
	want := st
	wantAt, wantFailed, wantRows := at, failed, rows
	want.At, want.FailedAt, want.Rows = &wantAt, &wantFailed, &wantRows
	*st.At = at.Add(time.Hour)
	*st.FailedAt = at.Add(time.Hour)
	*st.Rows = 1
	*got.MaterializationState.At = at.Add(2 * time.Hour)
	*got.MaterializationState.FailedAt = at.Add(2 * time.Hour)
	*got.MaterializationState.Rows = 2
	sameState(t, "after modifying values given and returned", mustGet(t, s, "1", "daily").MaterializationState, want)

	e.Description = "edited"
	e.MaterializationState = driver.MaterializationState{Status: driver.StatusRunning}
	if err := s.Update(ctx, e, nil); err != nil {
		t.Fatalf("Update: %v", err)
	}
	sameState(t, "Get after Update", mustGet(t, s, "1", "daily").MaterializationState, want)
	e2, next := nextVersion(e, "SELECT 2")
	if err := s.Update(ctx, e2, next); err != nil {
		t.Fatalf("Update with a version: %v", err)
	}
	got = mustGet(t, s, "1", "daily")
	sameState(t, "Get after Update with a version", got.MaterializationState, want)
	if got.Description != "edited" || got.CurrentVersion != 2 {
		t.Fatalf("Update lost: %+v", got)
	}

	if err := s.SetMaterialization(ctx, "1", e.ID, driver.MaterializationState{}); err != nil {
		t.Fatalf("SetMaterialization(zero): %v", err)
	}
	sameState(t, "Get after clearing", mustGet(t, s, "1", "daily").MaterializationState, driver.MaterializationState{})

	wantErr(t, "SetMaterialization of an unknown id", s.SetMaterialization(ctx, "1", "nope", st), driver.ErrNotFound)
	wantErr(t, "SetMaterialization through another project", s.SetMaterialization(ctx, "2", e.ID, st), driver.ErrNotFound)
}

// testListMaterialized: every project's materialized endpoints, with their
// project, ordered by project and name; others are left out.
func testListMaterialized(t *testing.T, s driver.Store) {
	ctx := context.Background()
	got, err := s.ListMaterialized(ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("ListMaterialized of an empty store = %v, %v", got, err)
	}
	type row struct{ project, name string }
	for _, r := range []struct {
		row
		materialized bool
	}{
		{row{"2", "b"}, true}, {row{"1", "z"}, true}, {row{"1", "a"}, true},
		{row{"1", "m"}, false}, {row{"3", "c"}, false},
	} {
		e, v := fixture(r.project, r.name)
		e.IsMaterialized = r.materialized
		mustCreate(t, s, e, v)
	}
	// Turning it off through Update takes an endpoint out.
	off := mustGet(t, s, "1", "z")
	off.IsMaterialized = false
	if err := s.Update(ctx, off, nil); err != nil {
		t.Fatalf("Update: %v", err)
	}
	got, err = s.ListMaterialized(ctx)
	if err != nil {
		t.Fatalf("ListMaterialized: %v", err)
	}
	var rows []row
	for _, e := range got {
		if !e.IsMaterialized {
			t.Fatalf("ListMaterialized returned %q, which is not materialized", e.Name)
		}
		rows = append(rows, row{e.ProjectID, e.Name})
	}
	if want := []row{{"1", "a"}, {"2", "b"}}; !slices.Equal(rows, want) {
		t.Fatalf("ListMaterialized = %v, want %v", rows, want)
	}
	sameEndpoint(t, "ListMaterialized", got[1], mustGet(t, s, "2", "b"))
}
