package sqlstore

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

func TestEndpointCreateGetVersions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "daily_count")
		if err := st.Create(ctx, e, first); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}

		got, err := st.Get(ctx, "p", "daily_count")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := got, e; !reflect.DeepEqual(got, want) {
			t.Errorf("got = %+v, want %+v", got, want)
		}

		v, err := st.Version(ctx, "p", e.ID, 1)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := v, first; !reflect.DeepEqual(got, want) {
			t.Errorf("v = %+v, want %+v", got, want)
		}

		vs, err := st.Versions(ctx, "p", e.ID)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := vs, ([]driver.Version{first}); !reflect.DeepEqual(got, want) {
			t.Errorf("vs = %+v, want %+v", got, want)
		}
	})
}

func TestEndpointNotFound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "a")
		if err := st.Create(ctx, e, first); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}

		_, err := st.Get(ctx, "p", "b")
		if err := err; !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("error %v is not %v", err, driver.ErrNotFound)
		}
		_, err = st.Version(ctx, "p", e.ID, 2)
		if err := err; !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("error %v is not %v", err, driver.ErrNotFound)
		}
		_, err = st.Versions(ctx, "p", "no-such-id")
		if err := err; !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("error %v is not %v", err, driver.ErrNotFound)
		}
		if err := st.Delete(ctx, "p", "no-such-id"); !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("error %v is not %v", err, driver.ErrNotFound)
		}
		if err := st.MarkExecuted(ctx, "p", "no-such-id", t0); !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("error %v is not %v", err, driver.ErrNotFound)
		}
		other := e
		other.ID = "no-such-id"
		if err := st.Update(ctx, other, nil); !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("error %v is not %v", err, driver.ErrNotFound)
		}
	})
}

func TestEndpointCreateConflict(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "a")
		if err := st.Create(ctx, e, first); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}

		sameName, v := endpointFixture("p", "b")
		sameName.Name = "a"
		if err := st.Create(ctx, sameName, v); !errors.Is(err, driver.ErrConflict) {
			t.Errorf("error %v is not %v", err, driver.ErrConflict)
		}
		sameID := sameName
		sameID.ID, sameID.Name = e.ID, "c"
		if err := st.Create(ctx, sameID, v); !errors.Is(err, driver.ErrConflict) {
			t.Errorf("error %v is not %v", err, driver.ErrConflict)
		}

		list, err := st.List(ctx, "p")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := list, ([]driver.Endpoint{e}); !reflect.DeepEqual(got, want) {
			t.Errorf("refused creates leave nothing: list = %+v, want %+v", got, want)
		}
		_, err = st.Versions(ctx, "p", sameName.ID)
		if err := err; !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("error %v is not %v", err, driver.ErrNotFound)
		}
	})
}

func TestEndpointUpdate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "a")
		if err := st.Create(ctx, e, first); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}

		// A rename and a description change, no new version; a
		// soft-delete's instant round-trips.
		renamed := e
		renamed.Name, renamed.Description, renamed.IsActive = "b", "new", false
		deleted := e.CreatedAt.Add(time.Minute)
		renamed.DeletedAt = &deleted
		if err := st.Update(ctx, renamed, nil); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		_, err := st.Get(ctx, "p", "a")
		if err := err; !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("the old name is gone: error %v is not %v", err, driver.ErrNotFound)
		}
		// Soft-deleted: Get finds live endpoints only, List all.
		if _, err := st.Get(ctx, "p", "b"); !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("Get of a soft-deleted endpoint: error %v is not %v", err, driver.ErrNotFound)
		}
		list, err := st.List(ctx, "p")
		if err != nil || len(list) != 1 {
			t.Fatalf("List = %+v, %v; want one endpoint", list, err)
		}
		if got, want := list[0], renamed; !reflect.DeepEqual(got, want) {
			t.Errorf("got = %+v, want %+v", got, want)
		}

		// A new query: version 2.
		e2, v2 := nextVersion(renamed, "SELECT 2 WHERE e = {variables.event}")
		e2.IsMaterialized = true
		e2.LastExecutedAt, e2.DeletedAt = nil, nil
		if err := st.Update(ctx, e2, v2); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		got, err := st.Get(ctx, "p", "b")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := got, e2; !reflect.DeepEqual(got, want) {
			t.Errorf("got = %+v, want %+v", got, want)
		}
		vs, err := st.Versions(ctx, "p", e.ID)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := vs, ([]driver.Version{first, *v2}); !reflect.DeepEqual(got, want) {
			t.Errorf("vs = %+v, want %+v", got, want)
		}
		old, err := st.Version(ctx, "p", e.ID, 1)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := old, first; !reflect.DeepEqual(got, want) {
			t.Errorf("versions are immutable: old = %+v, want %+v", got, want)
		}
	})
}

func TestEndpointUpdateConflictsChangeNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		a, firstA := endpointFixture("p", "a")
		if err := st.Create(ctx, a, firstA); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		b, firstB := endpointFixture("p", "b")
		if err := st.Create(ctx, b, firstB); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}

		tests := []struct {
			name   string
			update func() (driver.Endpoint, *driver.Version)
		}{
			{"rename onto another endpoint, with a new version", func() (driver.Endpoint, *driver.Version) {
				e, v := nextVersion(a, "SELECT 3")
				e.Name = "b"
				return e, v
			}},
			{"stale version, no new query", func() (driver.Endpoint, *driver.Version) {
				e := a
				e.CurrentVersion, e.Description = 0, "stale"
				return e, nil
			}},
			{"next version skips one", func() (driver.Endpoint, *driver.Version) {
				e, v := nextVersion(a, "SELECT 3")
				e.CurrentVersion, v.Number = 3, 3
				return e, v
			}},
			{"next version repeats the current one", func() (driver.Endpoint, *driver.Version) {
				e, v := nextVersion(a, "SELECT 3")
				e.CurrentVersion, v.Number = 1, 1
				return e, v
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e, v := tt.update()
				if err := st.Update(ctx, e, v); !errors.Is(err, driver.ErrConflict) {
					t.Errorf("error %v is not %v", err, driver.ErrConflict)
				}
				assertUnchanged(t, st, []driver.Endpoint{a, b}, map[string][]driver.Version{a.ID: {firstA}, b.ID: {firstB}})
			})
		}
	})
}

// assertUnchanged checks that project "p" holds exactly want and versions.
func assertUnchanged(t *testing.T, st driver.Store, want []driver.Endpoint, versions map[string][]driver.Version) {
	t.Helper()
	ctx := context.Background()
	list, err := st.List(ctx, "p")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := list, want; !reflect.DeepEqual(got, want) {
		t.Errorf("list = %+v, want %+v", got, want)
	}
	for id, vs := range versions {
		got, err := st.Versions(ctx, "p", id)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := got, vs; !reflect.DeepEqual(got, want) {
			t.Errorf("got = %+v, want %+v", got, want)
		}
	}
}

// TestWriteFailingMidwayChangesNothing makes the version INSERT fail after
// the endpoint row has been written in the same transaction, with a
// trigger that raises the driver's unique-key error: the endpoint write
// must be rolled back, and the error must be ErrConflict through the
// fallback that recognises the driver's text.
func TestWriteFailingMidwayChangesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		a, first := endpointFixture("p", "a")
		if err := st.Create(ctx, a, first); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		_, err := s.db.ExecContext(ctx, `CREATE TRIGGER refuse_versions BEFORE INSERT ON `+versionsTable+`
			BEGIN SELECT RAISE(ABORT, 'UNIQUE constraint failed: test trigger'); END`)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}

		e, v := nextVersion(a, "SELECT 4")
		e.Name = "renamed"
		err = st.Update(ctx, e, v)
		if err := err; !errors.Is(err, driver.ErrConflict) {
			t.Errorf("error %v is not %v", err, driver.ErrConflict)
		}
		assertUnchanged(t, st, []driver.Endpoint{a}, map[string][]driver.Version{a.ID: {first}})

		b, firstB := endpointFixture("p", "b")
		if err := st.Create(ctx, b, firstB); !errors.Is(err, driver.ErrConflict) {
			t.Errorf("error %v is not %v", err, driver.ErrConflict)
		}
		assertUnchanged(t, st, []driver.Endpoint{a}, nil)
	})
}

func TestEndpointMarkExecuted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "a")
		e.LastExecutedAt = nil
		if err := st.Create(ctx, e, first); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}

		steps := []struct {
			at   time.Time
			want time.Time
		}{
			{t0.Add(time.Hour), t0.Add(time.Hour)},                                           // first run
			{t0.Add(2 * time.Hour), t0.Add(2 * time.Hour)},                                   // later run
			{t0.Add(90 * time.Minute), t0.Add(2 * time.Hour)},                                // an earlier run finishing late
			{t0.Add(2*time.Hour + 1), t0.Add(2*time.Hour + 1)},                               // a nanosecond later
			{t0.Add(2*time.Hour + 1).In(time.FixedZone("X", 3600)), t0.Add(2*time.Hour + 1)}, // same instant, other zone
		}
		for _, step := range steps {
			if err := st.MarkExecuted(ctx, "p", e.ID, step.at); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			got, err := st.Get(ctx, "p", "a")
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.LastExecutedAt == nil {
				t.Fatalf("got.LastExecutedAt is nil")
			}
			if got, want := *got.LastExecutedAt, step.want; !reflect.DeepEqual(got, want) {
				t.Errorf("*got.LastExecutedAt = %+v, want %+v", got, want)
			}
			want := e
			want.LastExecutedAt = got.LastExecutedAt
			if got, want := got, want; !reflect.DeepEqual(got, want) {
				t.Errorf("nothing else changes: got = %+v, want %+v", got, want)
			}
		}
		// Another project's endpoint of the same id is not touched.
		if err := st.MarkExecuted(ctx, "q", e.ID, t0); !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("error %v is not %v", err, driver.ErrNotFound)
		}
	})
}

func TestEndpointDelete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		a, firstA := endpointFixture("p", "a")
		if err := st.Create(ctx, a, firstA); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		a2, v2 := nextVersion(a, "SELECT 2")
		if err := st.Update(ctx, a2, v2); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		b, firstB := endpointFixture("p", "b")
		if err := st.Create(ctx, b, firstB); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}

		if err := st.Delete(ctx, "p", a.ID); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		_, err := st.Get(ctx, "p", "a")
		if err := err; !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("error %v is not %v", err, driver.ErrNotFound)
		}
		_, err = st.Version(ctx, "p", a.ID, 2)
		if err := err; !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("error %v is not %v", err, driver.ErrNotFound)
		}
		if err := st.Delete(ctx, "p", a.ID); !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("error %v is not %v", err, driver.ErrNotFound)
		}
		assertUnchanged(t, st, []driver.Endpoint{b}, map[string][]driver.Version{b.ID: {firstB}})

		// The name and id can be used again, starting from version 1.
		if err := st.Create(ctx, a, firstA); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		vs, err := st.Versions(ctx, "p", a.ID)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := vs, ([]driver.Version{firstA}); !reflect.DeepEqual(got, want) {
			t.Errorf("vs = %+v, want %+v", got, want)
		}
	})
}

func TestEndpointListOrderAndIsolation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		var want []driver.Endpoint
		// Go's byte order: upper case before lower case, '-' before '_'.
		for _, name := range []string{"b", "a_x", "B", "a-x", "a"} {
			e, v := endpointFixture("p", name)
			if err := st.Create(ctx, e, v); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			want = append(want, e)
		}
		sortByName(want)
		// The same names and ids in another project.
		for _, name := range []string{"a", "b"} {
			e, v := endpointFixture("p", name)
			e.ProjectID, e.Description = "q", "other project"
			if err := st.Create(ctx, e, v); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
		}

		list, err := st.List(ctx, "p")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := list, want; !reflect.DeepEqual(got, want) {
			t.Errorf("list = %+v, want %+v", got, want)
		}
		names := make([]string, len(list))
		for i, e := range list {
			names[i] = e.Name
		}
		if got, want := names, ([]string{"B", "a", "a-x", "a_x", "b"}); !reflect.DeepEqual(got, want) {
			t.Errorf("names = %+v, want %+v", got, want)
		}

		got, err := st.Get(ctx, "q", "a")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := got.Description, "other project"; got != want {
			t.Errorf("got.Description = %q, want %q", got, want)
		}
		if got, want := got.ProjectID, "q"; got != want {
			t.Errorf("got.ProjectID = %q, want %q", got, want)
		}
		if err := st.Delete(ctx, "q", got.ID); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		_, err = st.Get(ctx, "p", "a")
		if err != nil {
			t.Errorf("deleting in q leaves p alone: unexpected error: %v", err)
		}

		empty, err := st.List(ctx, "nobody")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if empty == nil {
			t.Errorf("empty is nil")
		}
		if v := empty; !(len(v) == 0) {
			t.Errorf("empty = %v, want it empty", v)
		}
	})
}

func TestEndpointNoAliasing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "a")
		e.Query = driver.Query{Kind: driver.KindTrends, Insight: []byte(`{"kind":"TrendsQuery"}`)}
		first.Query = driver.Query{Kind: driver.KindTrends, Insight: []byte(`{"kind":"TrendsQuery"}`)}
		if err := st.Create(ctx, e, first); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}

		// Changing what was passed changes nothing stored.
		e.Query.Insight[2] = 'X'
		*e.LastExecutedAt = t0.Add(time.Hour)
		got, err := st.Get(ctx, "p", "a")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := string(got.Query.Insight), (`{"kind":"TrendsQuery"}`); got != want {
			t.Errorf("string(got.Query.Insight) = %q, want %q", got, want)
		}
		if got, want := *got.LastExecutedAt, t0.Add(time.Minute); !reflect.DeepEqual(got, want) {
			t.Errorf("*got.LastExecutedAt = %+v, want %+v", got, want)
		}

		// Changing what was returned changes nothing stored.
		got.Query.Insight[2] = 'Y'
		v, err := st.Version(ctx, "p", e.ID, 1)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		v.Query.Insight[2] = 'Z'
		again, err := st.Get(ctx, "p", "a")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := string(again.Query.Insight), (`{"kind":"TrendsQuery"}`); got != want {
			t.Errorf("string(again.Query.Insight) = %q, want %q", got, want)
		}
		v, err = st.Version(ctx, "p", e.ID, 1)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := string(v.Query.Insight), (`{"kind":"TrendsQuery"}`); got != want {
			t.Errorf("string(v.Query.Insight) = %q, want %q", got, want)
		}
	})
}
