// Package storetest is the conformance suite for driver.Store
// implementations. Every implementation runs it from its own tests:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) driver.Store { return newMyStore(t) })
//	}
//
// The suite checks the contract written on driver.Store: CRUD, versions,
// renames, the ErrNotFound and ErrConflict sentinels (duplicate names,
// duplicate or out-of-order version numbers, stale writers), project
// isolation, soft-deleted records (DeletedAt set) that keep their names,
// names unique among live records only, that values never alias the caller's, that a failed write
// changes nothing, and safety under concurrent use. A store that also
// implements driver.Leaser runs RunLeaser. RunResultCache and RunRunLog
// are the suites of driver.ResultCache and driver.RunLog. Times it stores are UTC
// with microsecond precision and are compared with time.Equal; queries are
// compared by their JSON encoding, so a store that keeps JSON text passes.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// Run runs the conformance suite as subtests of t. newStore is called once
// per subtest and must return an empty store.
func Run(t *testing.T, newStore func(t *testing.T) driver.Store) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s driver.Store)
	}{
		{"CreateGet", testCreateGet},
		{"GetNotFound", testGetNotFound},
		{"CreateConflict", testCreateConflict},
		{"List", testList},
		{"UpdateFields", testUpdateFields},
		{"UpdateNotFound", testUpdateNotFound},
		{"Rename", testRename},
		{"RenameConflictChangesNothing", testRenameConflict},
		{"Versions", testVersions},
		{"VersionConflicts", testVersionConflicts},
		{"StaleWriter", testStaleWriter},
		{"MarkExecuted", testMarkExecuted},
		{"Delete", testDelete},
		{"ProjectIsolation", testProjectIsolation},
		{"NoAliasing", testNoAliasing},
		{"InsightQuery", testInsightQuery},
		{"ConcurrentCreate", testConcurrentCreate},
		{"ConcurrentUpdate", testConcurrentUpdate},
		{"ConcurrentMixed", testConcurrentMixed},
		{"MaterializationSettings", testMaterializationSettings},
		{"SetMaterialization", testSetMaterialization},
		{"ListMaterialized", testListMaterialized},
		{"SoftDeletedKeepTheirName", testSoftDeleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
	// A store that leases (driver.Leaser) runs the lease suite too.
	if _, ok := newStore(t).(driver.Leaser); ok {
		t.Run("Leaser", func(t *testing.T) {
			RunLeaser(t, func(t *testing.T) driver.Leaser { return newStore(t).(driver.Leaser) })
		})
	}
}

// base is the creation time of fixture endpoints: UTC, microseconds.
var base = time.Date(2025, 3, 4, 5, 6, 7, 891011000, time.UTC)

// fixture returns an endpoint of project named name, with a SQL query
// using one variable, and its first version.
func fixture(project, name string) (driver.Endpoint, driver.Version) {
	varID, listID := uuid.NewString(), uuid.NewString()
	q := driver.Query{
		Kind: driver.KindSQL,
		SQL:  "SELECT count(*) FROM events WHERE country = {variables.country} AND plan IN {variables.plans}",
		Variables: map[string]driver.VariableRef{
			varID: {VariableID: varID, CodeName: "country", Value: json.RawMessage(`"US"`)},
			// Bytes as the editor sent them: a store keeps them so.
			listID: {VariableID: listID, CodeName: "plans", Value: json.RawMessage(`[ "free", "pro" ]`)},
		},
	}
	e := driver.Endpoint{
		ID:             uuid.NewString(),
		ProjectID:      project,
		Name:           name,
		Description:    "events of a country",
		Query:          q,
		IsActive:       true,
		CurrentVersion: 1,
		VersionsCount:  1,
		CreatedAt:      base,
		UpdatedAt:      base,
	}
	return e, driver.Version{EndpointID: e.ID, Number: 1, Query: q, CreatedAt: base}
}

// nextVersion returns e with a new query and the version that goes with it.
func nextVersion(e driver.Endpoint, sql string) (driver.Endpoint, *driver.Version) {
	e.Query = driver.Query{Kind: driver.KindSQL, SQL: sql}
	e.CurrentVersion++
	e.VersionsCount++
	e.UpdatedAt = e.UpdatedAt.Add(time.Minute)
	return e, &driver.Version{EndpointID: e.ID, Number: e.CurrentVersion, Query: e.Query, CreatedAt: e.UpdatedAt}
}

func mustCreate(t *testing.T, s driver.Store, e driver.Endpoint, v driver.Version) {
	t.Helper()
	if err := s.Create(context.Background(), e, v); err != nil {
		t.Fatalf("Create(%q): %v", e.Name, err)
	}
}

func mustGet(t *testing.T, s driver.Store, project, name string) driver.Endpoint {
	t.Helper()
	got, err := s.Get(context.Background(), project, name)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", project, name, err)
	}
	return got
}

func wantErr(t *testing.T, what string, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s: got error %v, want one wrapping %v", what, err, sentinel)
	}
}

// sameEndpoint fails t when got differs from want in any stored field.
func sameEndpoint(t *testing.T, what string, got, want driver.Endpoint) {
	t.Helper()
	if got.ID != want.ID || got.ProjectID != want.ProjectID || got.Name != want.Name ||
		got.Description != want.Description || got.IsActive != want.IsActive ||
		got.IsMaterialized != want.IsMaterialized || got.CurrentVersion != want.CurrentVersion ||
		got.VersionsCount != want.VersionsCount {
		t.Fatalf("%s: got %+v, want %+v", what, got, want)
	}
	sameTime(t, what+": CreatedAt", got.CreatedAt, want.CreatedAt)
	sameTime(t, what+": UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	switch {
	case (got.LastExecutedAt == nil) != (want.LastExecutedAt == nil):
		t.Fatalf("%s: LastExecutedAt = %v, want %v", what, got.LastExecutedAt, want.LastExecutedAt)
	case got.LastExecutedAt != nil:
		sameTime(t, what+": LastExecutedAt", *got.LastExecutedAt, *want.LastExecutedAt)
	}
	switch {
	case (got.DeletedAt == nil) != (want.DeletedAt == nil):
		t.Fatalf("%s: DeletedAt = %v, want %v", what, got.DeletedAt, want.DeletedAt)
	case got.DeletedAt != nil:
		sameTime(t, what+": DeletedAt", *got.DeletedAt, *want.DeletedAt)
	}
	sameQuery(t, what+": Query", got.Query, want.Query)
}

func sameTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// sameQuery fails t when got is not want field for field: a store gives
// back the bytes of the insight query and of each test value as it was
// given them, not a reformatting.
func sameQuery(t *testing.T, what string, got, want driver.Query) {
	t.Helper()
	if got.Kind != want.Kind || got.SQL != want.SQL || !bytes.Equal(got.Insight, want.Insight) ||
		len(got.Variables) != len(want.Variables) {
		t.Fatalf("%s = %+v, want %+v", what, got, want)
	}
	for id, w := range want.Variables {
		g, ok := got.Variables[id]
		if !ok || g.VariableID != w.VariableID || g.CodeName != w.CodeName || !bytes.Equal(g.Value, w.Value) {
			t.Fatalf("%s: variable %s = %+v (%s), want %+v (%s)", what, id, g, g.Value, w, w.Value)
		}
	}
}

func sameVersion(t *testing.T, what string, got, want driver.Version) {
	t.Helper()
	if got.Number != want.Number {
		t.Fatalf("%s: Number = %d, want %d", what, got.Number, want.Number)
	}
	if got.EndpointID != "" && got.EndpointID != want.EndpointID {
		t.Fatalf("%s: EndpointID = %q, want %q", what, got.EndpointID, want.EndpointID)
	}
	sameTime(t, what+": CreatedAt", got.CreatedAt, want.CreatedAt)
	sameQuery(t, what+": Query", got.Query, want.Query)
}

func testCreateGet(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "pageviews")
	mustCreate(t, s, e, v)
	sameEndpoint(t, "Get after Create", mustGet(t, s, "1", "pageviews"), e)

	got, err := s.Version(ctx, "1", e.ID, 1)
	if err != nil {
		t.Fatalf("Version(1): %v", err)
	}
	sameVersion(t, "Version(1)", got, v)

	// Empty optional fields round-trip as empty, not as something else.
	e2, v2 := fixture("1", "bare")
	e2.Description, e2.IsActive, e2.Query.Variables = "", false, nil
	v2.Query = e2.Query
	mustCreate(t, s, e2, v2)
	sameEndpoint(t, "Get of bare endpoint", mustGet(t, s, "1", "bare"), e2)
}

func testGetNotFound(t *testing.T, s driver.Store) {
	ctx := context.Background()
	_, err := s.Get(ctx, "1", "nope")
	wantErr(t, "Get of unknown name", err, driver.ErrNotFound)
	_, err = s.Version(ctx, "1", uuid.NewString(), 1)
	wantErr(t, "Version of unknown endpoint", err, driver.ErrNotFound)
	_, err = s.Versions(ctx, "1", uuid.NewString())
	wantErr(t, "Versions of unknown endpoint", err, driver.ErrNotFound)
	err = s.Delete(ctx, "1", uuid.NewString())
	wantErr(t, "Delete of unknown endpoint", err, driver.ErrNotFound)
	err = s.MarkExecuted(ctx, "1", uuid.NewString(), base)
	wantErr(t, "MarkExecuted of unknown endpoint", err, driver.ErrNotFound)

	e, v := fixture("1", "pageviews")
	mustCreate(t, s, e, v)
	_, err = s.Version(ctx, "1", e.ID, 2)
	wantErr(t, "Version(2) of a one-version endpoint", err, driver.ErrNotFound)
	_, err = s.Version(ctx, "1", e.ID, 0)
	wantErr(t, "Version(0)", err, driver.ErrNotFound)
}

func testCreateConflict(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "pageviews")
	mustCreate(t, s, e, v)

	dup, dv := fixture("1", "pageviews")
	dup.Description = "the second"
	wantErr(t, "Create of a taken name", s.Create(ctx, dup, dv), driver.ErrConflict)
	sameEndpoint(t, "Get after refused Create", mustGet(t, s, "1", "pageviews"), e)

	same, sv := fixture("1", "other")
	same.ID, sv.EndpointID = e.ID, e.ID
	wantErr(t, "Create of a taken id", s.Create(ctx, same, sv), driver.ErrConflict)
	if _, err := s.Get(ctx, "1", "other"); !errors.Is(err, driver.ErrNotFound) {
		t.Fatalf("Get of the refused endpoint: got %v, want ErrNotFound", err)
	}

	// The same name in another project is another endpoint.
	other, ov := fixture("2", "pageviews")
	mustCreate(t, s, other, ov)
}

func testList(t *testing.T, s driver.Store) {
	ctx := context.Background()
	list, err := s.List(ctx, "1")
	if err != nil {
		t.Fatalf("List of empty project: %v", err)
	}
	if len(list) != 0 {
		t.Fatalf("List of empty project = %v, want none", list)
	}
	want := map[string]driver.Endpoint{}
	for _, name := range []string{"zeta", "alpha", "Mid", "beta-2", "beta_1"} {
		e, v := fixture("1", name)
		mustCreate(t, s, e, v)
		want[name] = e
	}
	o, ov := fixture("2", "gamma")
	mustCreate(t, s, o, ov)

	list, err = s.List(ctx, "1")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name)
		sameEndpoint(t, "List entry "+e.Name, e, want[e.Name])
	}
	// Byte order of the names, as a binary collation sorts them.
	if w := []string{"Mid", "alpha", "beta-2", "beta_1", "zeta"}; !reflect.DeepEqual(names, w) {
		t.Fatalf("List names = %v, want %v", names, w)
	}
}

func testUpdateFields(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "pageviews")
	mustCreate(t, s, e, v)
	e.Description = "changed"
	e.IsActive = false
	e.IsMaterialized = true
	e.UpdatedAt = base.Add(time.Hour)
	if err := s.Update(ctx, e, nil); err != nil {
		t.Fatalf("Update: %v", err)
	}
	sameEndpoint(t, "Get after Update", mustGet(t, s, "1", "pageviews"), e)
	// A soft delete's instant is stored, and so is its removal.
	deleted := base.Add(2 * time.Hour)
	e.DeletedAt = &deleted
	if err := s.Update(ctx, e, nil); err != nil {
		t.Fatalf("Update: %v", err)
	}
	// Get finds live records only; List shows the deleted one as stored.
	_, err := s.Get(ctx, "1", "pageviews")
	wantErr(t, "Get after a soft delete", err, driver.ErrNotFound)
	list, err := s.List(ctx, "1")
	if err != nil || len(list) != 1 {
		t.Fatalf("List after a soft delete = %+v, %v; want the one record", list, err)
	}
	sameEndpoint(t, "List after a soft delete", list[0], e)
	e.DeletedAt = nil
	if err := s.Update(ctx, e, nil); err != nil {
		t.Fatalf("Update: %v", err)
	}
	sameEndpoint(t, "Get after a restore", mustGet(t, s, "1", "pageviews"), e)
	vs, err := s.Versions(ctx, "1", e.ID)
	if err != nil {
		t.Fatalf("Versions: %v", err)
	}
	if len(vs) != 1 {
		t.Fatalf("Update without a version made %d versions, want 1", len(vs))
	}
}

func testUpdateNotFound(t *testing.T, s driver.Store) {
	e, _ := fixture("1", "ghost")
	wantErr(t, "Update of unknown endpoint", s.Update(context.Background(), e, nil), driver.ErrNotFound)
	e2, v2 := nextVersion(e, "SELECT 1")
	wantErr(t, "Update with version of unknown endpoint", s.Update(context.Background(), e2, v2), driver.ErrNotFound)
}

func testRename(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "old_name")
	mustCreate(t, s, e, v)
	e.Name = "new_name"
	if err := s.Update(ctx, e, nil); err != nil {
		t.Fatalf("rename: %v", err)
	}
	sameEndpoint(t, "Get by new name", mustGet(t, s, "1", "new_name"), e)
	_, err := s.Get(ctx, "1", "old_name")
	wantErr(t, "Get by old name", err, driver.ErrNotFound)

	// The old name is free again.
	again, av := fixture("1", "old_name")
	mustCreate(t, s, again, av)

	// A rename together with a new version.
	e2, v2 := nextVersion(e, "SELECT 2")
	e2.Name = "newest_name"
	if err := s.Update(ctx, e2, v2); err != nil {
		t.Fatalf("rename with version: %v", err)
	}
	sameEndpoint(t, "Get after rename with version", mustGet(t, s, "1", "newest_name"), e2)
	got, err := s.Version(ctx, "1", e.ID, 2)
	if err != nil {
		t.Fatalf("Version(2) after rename: %v", err)
	}
	sameVersion(t, "Version(2)", got, *v2)
}

// testRenameConflict is the atomicity check: an Update that fails changes
// neither the endpoint nor its versions, even when it carries a version.
func testRenameConflict(t *testing.T, s driver.Store) {
	ctx := context.Background()
	a, av := fixture("1", "a")
	b, bv := fixture("1", "b")
	mustCreate(t, s, a, av)
	mustCreate(t, s, b, bv)

	a2, v2 := nextVersion(a, "SELECT 'changed'")
	a2.Name = "b"
	a2.Description = "changed"
	wantErr(t, "rename onto a taken name", s.Update(ctx, a2, v2), driver.ErrConflict)
	sameEndpoint(t, "a after refused rename", mustGet(t, s, "1", "a"), a)
	sameEndpoint(t, "b after refused rename", mustGet(t, s, "1", "b"), b)
	vs, err := s.Versions(ctx, "1", a.ID)
	if err != nil {
		t.Fatalf("Versions: %v", err)
	}
	if len(vs) != 1 {
		t.Fatalf("refused Update left %d versions, want 1", len(vs))
	}
	if _, err := s.Version(ctx, "1", a.ID, 2); !errors.Is(err, driver.ErrNotFound) {
		t.Fatalf("Version(2) after refused Update: got %v, want ErrNotFound", err)
	}
}

func testVersions(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v1 := fixture("1", "pageviews")
	mustCreate(t, s, e, v1)
	want := []driver.Version{v1}
	cur := e
	for i := 2; i <= 4; i++ {
		var next *driver.Version
		cur, next = nextVersion(cur, fmt.Sprintf("SELECT %d", i))
		if err := s.Update(ctx, cur, next); err != nil {
			t.Fatalf("Update to version %d: %v", i, err)
		}
		want = append(want, *next)
	}
	sameEndpoint(t, "Get after three versions", mustGet(t, s, "1", "pageviews"), cur)
	vs, err := s.Versions(ctx, "1", e.ID)
	if err != nil {
		t.Fatalf("Versions: %v", err)
	}
	if len(vs) != len(want) {
		t.Fatalf("Versions returned %d, want %d", len(vs), len(want))
	}
	for i := range want {
		sameVersion(t, fmt.Sprintf("Versions[%d]", i), vs[i], want[i])
		got, err := s.Version(ctx, "1", e.ID, want[i].Number)
		if err != nil {
			t.Fatalf("Version(%d): %v", want[i].Number, err)
		}
		sameVersion(t, fmt.Sprintf("Version(%d)", want[i].Number), got, want[i])
	}
}

func testVersionConflicts(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "pageviews")
	mustCreate(t, s, e, v)
	for _, tc := range []struct {
		name   string
		number int
	}{
		{"duplicate version number", 1},
		{"skipped version number", 3},
		{"version zero", 0},
	} {
		e2, next := nextVersion(e, "SELECT 'x'")
		next.Number, e2.CurrentVersion = tc.number, tc.number
		wantErr(t, tc.name, s.Update(ctx, e2, next), driver.ErrConflict)
		sameEndpoint(t, "Get after "+tc.name, mustGet(t, s, "1", "pageviews"), e)
		vs, err := s.Versions(ctx, "1", e.ID)
		if err != nil {
			t.Fatalf("Versions: %v", err)
		}
		if len(vs) != 1 {
			t.Fatalf("%s left %d versions, want 1", tc.name, len(vs))
		}
		sameVersion(t, "version 1 after "+tc.name, vs[0], v)
	}
}

// testStaleWriter: a writer that read version 1 cannot write after another
// moved the endpoint to version 2, with or without a version of its own.
func testStaleWriter(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "pageviews")
	mustCreate(t, s, e, v)
	e2, v2 := nextVersion(e, "SELECT 2")
	if err := s.Update(ctx, e2, v2); err != nil {
		t.Fatalf("Update to version 2: %v", err)
	}
	stale := e
	stale.Description = "stale"
	wantErr(t, "Update from a stale read", s.Update(ctx, stale, nil), driver.ErrConflict)
	staleV, sv := nextVersion(e, "SELECT 'stale'")
	wantErr(t, "new version from a stale read", s.Update(ctx, staleV, sv), driver.ErrConflict)
	sameEndpoint(t, "Get after stale writes", mustGet(t, s, "1", "pageviews"), e2)
}

func testMarkExecuted(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "pageviews")
	mustCreate(t, s, e, v)
	at := base.Add(2 * time.Hour)
	if err := s.MarkExecuted(ctx, "1", e.ID, at); err != nil {
		t.Fatalf("MarkExecuted: %v", err)
	}
	want := e
	want.LastExecutedAt = &at
	sameEndpoint(t, "Get after MarkExecuted", mustGet(t, s, "1", "pageviews"), want)

	// An earlier time never moves it back.
	if err := s.MarkExecuted(ctx, "1", e.ID, at.Add(-time.Minute)); err != nil {
		t.Fatalf("MarkExecuted earlier: %v", err)
	}
	sameEndpoint(t, "Get after earlier MarkExecuted", mustGet(t, s, "1", "pageviews"), want)

	later := at.Add(time.Second)
	if err := s.MarkExecuted(ctx, "1", e.ID, later); err != nil {
		t.Fatalf("MarkExecuted later: %v", err)
	}
	want.LastExecutedAt = &later
	sameEndpoint(t, "Get after later MarkExecuted", mustGet(t, s, "1", "pageviews"), want)

	// It is not a version change: an Update from the same read still works
	// and keeps the recorded run.
	upd := mustGet(t, s, "1", "pageviews")
	upd.Description = "after a run"
	if err := s.Update(ctx, upd, nil); err != nil {
		t.Fatalf("Update after MarkExecuted: %v", err)
	}
	want.Description = "after a run"
	sameEndpoint(t, "Get after Update", mustGet(t, s, "1", "pageviews"), want)
}

func testDelete(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "pageviews")
	mustCreate(t, s, e, v)
	e2, v2 := nextVersion(e, "SELECT 2")
	if err := s.Update(ctx, e2, v2); err != nil {
		t.Fatalf("Update: %v", err)
	}
	keep, kv := fixture("1", "keep")
	mustCreate(t, s, keep, kv)

	if err := s.Delete(ctx, "1", e.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, err := s.Get(ctx, "1", "pageviews")
	wantErr(t, "Get after Delete", err, driver.ErrNotFound)
	_, err = s.Versions(ctx, "1", e.ID)
	wantErr(t, "Versions after Delete", err, driver.ErrNotFound)
	_, err = s.Version(ctx, "1", e.ID, 1)
	wantErr(t, "Version after Delete", err, driver.ErrNotFound)
	wantErr(t, "second Delete", s.Delete(ctx, "1", e.ID), driver.ErrNotFound)
	sameEndpoint(t, "the other endpoint after Delete", mustGet(t, s, "1", "keep"), keep)

	// The name is free again, and the new endpoint starts at version 1.
	again, av := fixture("1", "pageviews")
	mustCreate(t, s, again, av)
	vs, err := s.Versions(ctx, "1", again.ID)
	if err != nil || len(vs) != 1 {
		t.Fatalf("Versions of re-created endpoint = %d versions, %v; want 1", len(vs), err)
	}
}

func testProjectIsolation(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "pageviews")
	mustCreate(t, s, e, v)

	_, err := s.Get(ctx, "2", "pageviews")
	wantErr(t, "Get through another project", err, driver.ErrNotFound)
	list, err := s.List(ctx, "2")
	if err != nil || len(list) != 0 {
		t.Fatalf("List of another project = %v, %v; want none", list, err)
	}
	_, err = s.Version(ctx, "2", e.ID, 1)
	wantErr(t, "Version through another project", err, driver.ErrNotFound)
	_, err = s.Versions(ctx, "2", e.ID)
	wantErr(t, "Versions through another project", err, driver.ErrNotFound)
	wantErr(t, "MarkExecuted through another project", s.MarkExecuted(ctx, "2", e.ID, base), driver.ErrNotFound)

	moved := e
	moved.ProjectID = "2"
	moved.Description = "hijacked"
	wantErr(t, "Update through another project", s.Update(ctx, moved, nil), driver.ErrNotFound)
	wantErr(t, "Delete through another project", s.Delete(ctx, "2", e.ID), driver.ErrNotFound)

	sameEndpoint(t, "endpoint after attempts from another project", mustGet(t, s, "1", "pageviews"), e)
	if list, _ := s.List(ctx, "2"); len(list) != 0 {
		t.Fatalf("project 2 gained %v", list)
	}
}

func testNoAliasing(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "pageviews")
	want := e
	want.Query = cloneQuery(e.Query)
	mustCreate(t, s, e, v)

	// Changing what was passed in does not change what is stored.
	for id, ref := range e.Query.Variables {
		if len(ref.Value) > 0 {
			ref.Value[0] = '!'
		}
		ref.CodeName = "mutated"
		e.Query.Variables[id] = ref
	}
	e.Query.Variables[uuid.NewString()] = driver.VariableRef{CodeName: "added"}
	for id, ref := range v.Query.Variables {
		ref.CodeName = "mutated"
		v.Query.Variables[id] = ref
	}
	sameEndpoint(t, "Get after mutating the input", mustGet(t, s, "1", "pageviews"), want)

	// Changing what came out does not change what is stored.
	got := mustGet(t, s, "1", "pageviews")
	for id, ref := range got.Query.Variables {
		if len(ref.Value) > 0 {
			ref.Value[0] = '!'
		}
		delete(got.Query.Variables, id)
	}
	at := base
	if err := s.MarkExecuted(ctx, "1", got.ID, at); err != nil {
		t.Fatalf("MarkExecuted: %v", err)
	}
	want.LastExecutedAt = &at
	got = mustGet(t, s, "1", "pageviews")
	if got.LastExecutedAt == nil {
		t.Fatalf("Get after MarkExecuted: LastExecutedAt = nil, want %v", at)
	}
	*got.LastExecutedAt = got.LastExecutedAt.Add(time.Hour)
	sameEndpoint(t, "Get after mutating an output", mustGet(t, s, "1", "pageviews"), want)

	list, err := s.List(ctx, "1")
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %v, %v", list, err)
	}
	for id := range list[0].Query.Variables {
		delete(list[0].Query.Variables, id)
	}
	vs, err := s.Versions(ctx, "1", want.ID)
	if err != nil {
		t.Fatalf("Versions: %v", err)
	}
	for id := range vs[0].Query.Variables {
		delete(vs[0].Query.Variables, id)
	}
	one, err := s.Version(ctx, "1", want.ID, 1)
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	for id := range one.Query.Variables {
		delete(one.Query.Variables, id)
	}
	sameEndpoint(t, "Get after mutating List and Versions output", mustGet(t, s, "1", "pageviews"), want)
	one, err = s.Version(ctx, "1", want.ID, 1)
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	sameQuery(t, "Version(1) after mutating outputs", one.Query, want.Query)
}

func cloneQuery(q driver.Query) driver.Query {
	if q.Variables != nil {
		vars := make(map[string]driver.VariableRef, len(q.Variables))
		for k, v := range q.Variables {
			if v.Value != nil {
				v.Value = append(json.RawMessage(nil), v.Value...)
			}
			vars[k] = v
		}
		q.Variables = vars
	}
	q.Insight = append([]byte(nil), q.Insight...)
	return q
}

func testInsightQuery(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "trend")
	raw := `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview","math":"total"}],"interval":"day","breakdownFilter":{"breakdown":"$browser","breakdown_type":"event"}}`
	e.Query = driver.Query{Kind: driver.KindTrends, Insight: []byte(raw)}
	v.Query = e.Query
	mustCreate(t, s, e, v)
	got := mustGet(t, s, "1", "trend")
	sameEndpoint(t, "insight endpoint", got, e)
	got.Query.Insight[0] = 'X'
	sameEndpoint(t, "insight endpoint after mutating output", mustGet(t, s, "1", "trend"), e)
	one, err := s.Version(ctx, "1", e.ID, 1)
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	sameQuery(t, "insight Version(1)", one.Query, e.Query)
}

const workers = 8

func testConcurrentCreate(t *testing.T, s driver.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, workers)
	dupErrs := make([]error, workers)
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, v := fixture("1", fmt.Sprintf("own_%d", i))
			errs[i] = s.Create(ctx, e, v)
			d, dv := fixture("1", "contested")
			dupErrs[i] = s.Create(ctx, d, dv)
		}()
	}
	wg.Wait()
	wins := 0
	for i := 0; i < workers; i++ {
		if errs[i] != nil {
			t.Fatalf("concurrent Create of own_%d: %v", i, errs[i])
		}
		switch {
		case dupErrs[i] == nil:
			wins++
		case !errors.Is(dupErrs[i], driver.ErrConflict):
			t.Fatalf("concurrent Create of the same name: %v, want nil or ErrConflict", dupErrs[i])
		}
	}
	if wins != 1 {
		t.Fatalf("%d concurrent Creates of one name succeeded, want 1", wins)
	}
	list, err := s.List(ctx, "1")
	if err != nil || len(list) != workers+1 {
		t.Fatalf("List after concurrent Creates = %d endpoints, %v; want %d", len(list), err, workers+1)
	}
}

// testConcurrentUpdate: writers that all read version 1 race to write
// version 2; exactly one wins, and the store holds its write whole.
func testConcurrentUpdate(t *testing.T, s driver.Store) {
	ctx := context.Background()
	e, v := fixture("1", "pageviews")
	mustCreate(t, s, e, v)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	writes := make([]driver.Endpoint, workers)
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next, nv := nextVersion(e, fmt.Sprintf("SELECT %d", i))
			next.Description = fmt.Sprintf("writer %d", i)
			writes[i] = next
			errs[i] = s.Update(ctx, next, nv)
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both wrote version 2", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, driver.ErrConflict):
			t.Fatalf("writer %d: %v, want nil or ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer wrote version 2")
	}
	sameEndpoint(t, "Get after the race", mustGet(t, s, "1", "pageviews"), writes[winner])
	vs, err := s.Versions(ctx, "1", e.ID)
	if err != nil || len(vs) != 2 {
		t.Fatalf("Versions after the race = %d, %v; want 2", len(vs), err)
	}
	sameQuery(t, "version 2 after the race", vs[1].Query, writes[winner].Query)
}

// testConcurrentMixed runs every method at once on distinct endpoints, for
// the race detector, and checks the end state.
func testConcurrentMixed(t *testing.T, s driver.Store) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, workers*8)
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := useConcurrently(ctx, s, i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent use: %v", err)
	}
	total := 0
	for _, p := range []string{"0", "1"} {
		list, err := s.List(ctx, p)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		for _, e := range list {
			if e.CurrentVersion != 2 || e.LastExecutedAt == nil {
				t.Fatalf("endpoint %s after concurrent use: version %d, last executed %v", e.Name, e.CurrentVersion, e.LastExecutedAt)
			}
		}
		total += len(list)
	}
	if want := workers - (workers+3)/4; total != want {
		t.Fatalf("%d endpoints left, want %d", total, want)
	}
}

// useConcurrently is worker i's part of testConcurrentMixed: it creates an
// endpoint in project i%2, updates it to version 2, marks it executed,
// lists the project, reads the versions, and deletes every fourth
// endpoint. It returns the first failure.
func useConcurrently(ctx context.Context, s driver.Store, i int) error {
	project := fmt.Sprint(i % 2)
	e, v := fixture(project, fmt.Sprintf("ep_%d", i))
	if err := s.Create(ctx, e, v); err != nil {
		return err
	}
	next, nv := nextVersion(e, "SELECT 2")
	if err := s.Update(ctx, next, nv); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	if err := s.MarkExecuted(ctx, project, e.ID, base.Add(time.Duration(i)*time.Second)); err != nil {
		return fmt.Errorf("mark: %w", err)
	}
	if _, err := s.List(ctx, project); err != nil {
		return fmt.Errorf("list: %w", err)
	}
	if _, err := s.Versions(ctx, project, e.ID); err != nil {
		return fmt.Errorf("versions: %w", err)
	}
	if i%4 == 0 {
		if err := s.Delete(ctx, project, e.ID); err != nil {
			return fmt.Errorf("delete: %w", err)
		}
	}
	return nil
}

// softDelete is e soft-deleted at, as the Service writes it: its state is
// DeletedAt, its name stays.
func softDelete(t *testing.T, s driver.Store, e driver.Endpoint, at time.Time) driver.Endpoint {
	t.Helper()
	e.DeletedAt, e.UpdatedAt = &at, at
	if err := s.Update(context.Background(), e, nil); err != nil {
		t.Fatalf("soft-deleting %q (%s): %v", e.Name, e.ID, err)
	}
	return e
}

// testSoftDeleted: a soft-deleted record keeps its own name; Get finds
// live records only; two deleted records of one name coexist with a live
// one; the live name stays unique (Create, rename); bringing a deleted
// record back (DeletedAt nil) onto a name a live one holds is ErrConflict
// and changes nothing, and succeeds once the name is free.
func testSoftDeleted(t *testing.T, s driver.Store) {
	ctx := context.Background()
	a, av := fixture("1", "d")
	mustCreate(t, s, a, av)
	a = softDelete(t, s, a, base.Add(time.Hour))
	_, err := s.Get(ctx, "1", "d")
	wantErr(t, "Get of the name of a soft-deleted record", err, driver.ErrNotFound)

	b, bv := fixture("1", "d")
	mustCreate(t, s, b, bv)
	b = softDelete(t, s, b, base.Add(2*time.Hour))
	c, cv := fixture("1", "d")
	mustCreate(t, s, c, cv)
	sameEndpoint(t, "Get of the name two deleted records share with a live one", mustGet(t, s, "1", "d"), c)

	list, err := s.List(ctx, "1")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(list) != 3 {
		t.Fatalf("List = %d records, want the live one and both deleted ones: %+v", len(list), list)
	}
	byID := map[string]driver.Endpoint{a.ID: a, b.ID: b, c.ID: c}
	for i, e := range list {
		sameEndpoint(t, fmt.Sprintf("List entry %d", i), e, byID[e.ID])
		if i > 0 && list[i-1].ID >= e.ID {
			t.Fatalf("List: records of one name not ordered by id: %s before %s", list[i-1].ID, e.ID)
		}
	}

	// The live name is unique.
	dup, dv := fixture("1", "d")
	wantErr(t, "Create of a second live record of a name", s.Create(ctx, dup, dv), driver.ErrConflict)
	x, xv := fixture("1", "x")
	mustCreate(t, s, x, xv)
	x.Name = "d"
	wantErr(t, "rename of a live record onto the live name", s.Update(ctx, x, nil), driver.ErrConflict)
	sameEndpoint(t, "the live record after refused writes", mustGet(t, s, "1", "d"), c)

	// A deleted record may be renamed, whatever the live names are.
	renamed := b
	renamed.Name = "x"
	if err := s.Update(ctx, renamed, nil); err != nil {
		t.Fatalf("rename of a soft-deleted record onto a live name: %v", err)
	}
	if err := s.Update(ctx, b, nil); err != nil {
		t.Fatalf("rename of a soft-deleted record back: %v", err)
	}

	// Restore onto a live name: a conflict that changes nothing.
	back := a
	back.DeletedAt, back.UpdatedAt = nil, base.Add(3*time.Hour)
	wantErr(t, "restore of a name a live record holds", s.Update(ctx, back, nil), driver.ErrConflict)
	sameEndpoint(t, "the live record after a refused restore", mustGet(t, s, "1", "d"), c)
	list, err = s.List(ctx, "1")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, e := range list {
		if e.ID == a.ID {
			sameEndpoint(t, "the deleted record after a refused restore", e, a)
		}
	}

	// Once the live one is gone, the restore succeeds, and the name is
	// taken again.
	if err := s.Delete(ctx, "1", c.ID); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := s.Update(ctx, back, nil); err != nil {
		t.Fatalf("restore of a free name: %v", err)
	}
	sameEndpoint(t, "Get after restore", mustGet(t, s, "1", "d"), back)
	again := b
	again.DeletedAt, again.UpdatedAt = nil, base.Add(4*time.Hour)
	wantErr(t, "restore of a second record of the name", s.Update(ctx, again, nil), driver.ErrConflict)
	wantErr(t, "Create over the restored name", s.Create(ctx, dup, dv), driver.ErrConflict)

	// Another project is not concerned.
	o, ov := fixture("2", "d")
	mustCreate(t, s, o, ov)
	sameEndpoint(t, "project 2's own d", mustGet(t, s, "2", "d"), o)
}
