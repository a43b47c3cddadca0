package sqlstore

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEndpointCreateGetVersions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "daily_count")
		require.NoError(t, st.Create(ctx, e, first))

		got, err := st.Get(ctx, "p", "daily_count")
		require.NoError(t, err)
		if got, want := got, e; !reflect.DeepEqual(got, want) {
			t.Errorf("got = %+v, want %+v", got, want)
		}

		v, err := st.Version(ctx, "p", e.ID, 1)
		require.NoError(t, err)
		assert.Equal(t, first, v)

		vs, err := st.Versions(ctx, "p", e.ID)
		require.NoError(t, err)
		assert.Equal(t, []driver.Version{first}, vs)
	})
}

func TestEndpointNotFound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "a")
		require.NoError(t, st.Create(ctx, e, first))

		_, err := st.Get(ctx, "p", "b")
		assert.ErrorIs(t, err, driver.ErrNotFound)
		_, err = st.Version(ctx, "p", e.ID, 2)
		assert.ErrorIs(t, err, driver.ErrNotFound)
		_, err = st.Versions(ctx, "p", "no-such-id")
		assert.ErrorIs(t, err, driver.ErrNotFound)
		assert.ErrorIs(t, st.Delete(ctx, "p", "no-such-id"), driver.ErrNotFound)
		assert.ErrorIs(t, st.MarkExecuted(ctx, "p", "no-such-id", t0), driver.ErrNotFound)
		other := e
		other.ID = "no-such-id"
		assert.ErrorIs(t, st.Update(ctx, other, nil), driver.ErrNotFound)
	})
}

func TestEndpointCreateConflict(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "a")
		require.NoError(t, st.Create(ctx, e, first))

		sameName, v := endpointFixture("p", "b")
		sameName.Name = "a"
		assert.ErrorIs(t, st.Create(ctx, sameName, v), driver.ErrConflict)
		sameID := sameName
		sameID.ID, sameID.Name = e.ID, "c"
		assert.ErrorIs(t, st.Create(ctx, sameID, v), driver.ErrConflict)

		list, err := st.List(ctx, "p")
		require.NoError(t, err)
		got, want := list, ([]driver.Endpoint{e})
		assert.Equal(t, want, got, "refused creates leave nothing: list")
		_, err = st.Versions(ctx, "p", sameName.ID)
		assert.ErrorIs(t, err, driver.ErrNotFound)
	})
}

func TestEndpointUpdate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "a")
		require.NoError(t, st.Create(ctx, e, first))

		// A rename and a description change, no new version; a
		// soft-delete's instant round-trips.
		renamed := e
		renamed.Name, renamed.Description, renamed.IsActive = "b", "new", false
		deleted := e.CreatedAt.Add(time.Minute)
		renamed.DeletedAt = &deleted
		require.NoError(t, st.Update(ctx, renamed, nil))
		_, err := st.Get(ctx, "p", "a")
		assert.ErrorIs(t, err, driver.ErrNotFound, "the old name is gone")
		// Soft-deleted: Get finds live endpoints only, List all.
		if _, err := st.Get(ctx, "p", "b"); !errors.Is(err, driver.ErrNotFound) {
			t.Errorf("Get of a soft-deleted endpoint: error %v is not %v", err, driver.ErrNotFound)
		}
		list, err := st.List(ctx, "p")
		require.NoError(t, err, "List")
		require.Len(t, list, 1, "List")
		assert.Equal(t, renamed, list[0])

		// A new query: version 2.
		e2, v2 := nextVersion(renamed, "SELECT 2 WHERE e = {variables.event}")
		e2.IsMaterialized = true
		e2.LastExecutedAt, e2.DeletedAt = nil, nil
		require.NoError(t, st.Update(ctx, e2, v2))
		got, err := st.Get(ctx, "p", "b")
		require.NoError(t, err)
		assert.Equal(t, e2, got)
		vs, err := st.Versions(ctx, "p", e.ID)
		require.NoError(t, err)
		assert.Equal(t, []driver.Version{first, *v2}, vs)
		old, err := st.Version(ctx, "p", e.ID, 1)
		require.NoError(t, err)
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
		require.NoError(t, st.Create(ctx, a, firstA))
		b, firstB := endpointFixture("p", "b")
		require.NoError(t, st.Create(ctx, b, firstB))

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
				assert.ErrorIs(t, st.Update(ctx, e, v), driver.ErrConflict)
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
	require.NoError(t, err)
	assert.Equal(t, want, list)
	for id, vs := range versions {
		got, err := st.Versions(ctx, "p", id)
		require.NoError(t, err)
		assert.Equal(t, vs, got)
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
		require.NoError(t, st.Create(ctx, a, first))
		_, err := s.db.ExecContext(ctx, `CREATE TRIGGER refuse_versions BEFORE INSERT ON `+versionsTable+`
			BEGIN SELECT RAISE(ABORT, 'UNIQUE constraint failed: test trigger'); END`)
		require.NoError(t, err)

		e, v := nextVersion(a, "SELECT 4")
		e.Name = "renamed"
		err = st.Update(ctx, e, v)
		assert.ErrorIs(t, err, driver.ErrConflict)
		assertUnchanged(t, st, []driver.Endpoint{a}, map[string][]driver.Version{a.ID: {first}})

		b, firstB := endpointFixture("p", "b")
		assert.ErrorIs(t, st.Create(ctx, b, firstB), driver.ErrConflict)
		assertUnchanged(t, st, []driver.Endpoint{a}, nil)
	})
}

func TestEndpointMarkExecuted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "a")
		e.LastExecutedAt = nil
		require.NoError(t, st.Create(ctx, e, first))

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
			require.NoError(t, st.MarkExecuted(ctx, "p", e.ID, step.at))
			got, err := st.Get(ctx, "p", "a")
			require.NoError(t, err)
			require.NotNil(t, got.LastExecutedAt, "got.LastExecutedAt is nil")
			if got, want := *got.LastExecutedAt, step.want; !reflect.DeepEqual(got, want) {
				t.Errorf("*got.LastExecutedAt = %+v, want %+v", got, want)
			}
			want := e
			want.LastExecutedAt = got.LastExecutedAt
			assert.Equal(t, want, got, "nothing else changes")
		}
		// Another project's endpoint of the same id is not touched.
		assert.ErrorIs(t, st.MarkExecuted(ctx, "q", e.ID, t0), driver.ErrNotFound)
	})
}

func TestEndpointDelete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		a, firstA := endpointFixture("p", "a")
		require.NoError(t, st.Create(ctx, a, firstA))
		a2, v2 := nextVersion(a, "SELECT 2")
		require.NoError(t, st.Update(ctx, a2, v2))
		b, firstB := endpointFixture("p", "b")
		require.NoError(t, st.Create(ctx, b, firstB))

		require.NoError(t, st.Delete(ctx, "p", a.ID))
		_, err := st.Get(ctx, "p", "a")
		assert.ErrorIs(t, err, driver.ErrNotFound)
		_, err = st.Version(ctx, "p", a.ID, 2)
		assert.ErrorIs(t, err, driver.ErrNotFound)
		assert.ErrorIs(t, st.Delete(ctx, "p", a.ID), driver.ErrNotFound)
		assertUnchanged(t, st, []driver.Endpoint{b}, map[string][]driver.Version{b.ID: {firstB}})

		// The name and id can be used again, starting from version 1.
		require.NoError(t, st.Create(ctx, a, firstA))
		vs, err := st.Versions(ctx, "p", a.ID)
		require.NoError(t, err)
		assert.Equal(t, []driver.Version{firstA}, vs)
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
			require.NoError(t, st.Create(ctx, e, v))
			want = append(want, e)
		}
		sortByName(want)
		// The same names and ids in another project.
		for _, name := range []string{"a", "b"} {
			e, v := endpointFixture("p", name)
			e.ProjectID, e.Description = "q", "other project"
			require.NoError(t, st.Create(ctx, e, v))
		}

		list, err := st.List(ctx, "p")
		require.NoError(t, err)
		assert.Equal(t, want, list)
		names := make([]string, len(list))
		for i, e := range list {
			names[i] = e.Name
		}
		assert.Equal(t, []string{"B", "a", "a-x", "a_x", "b"}, names)

		got, err := st.Get(ctx, "q", "a")
		require.NoError(t, err)
		assert.Equal(t, "other project", got.Description)
		assert.Equal(t, "q", got.ProjectID)
		require.NoError(t, st.Delete(ctx, "q", got.ID))
		_, err = st.Get(ctx, "p", "a")
		assert.NoError(t, err, "deleting in q leaves p alone")

		empty, err := st.List(ctx, "nobody")
		require.NoError(t, err)
		assert.NotNil(t, empty, "empty is nil")
		v := empty
		assert.True(t, (len(v) == 0), "empty = %v, want it empty", v)
	})
}

func TestEndpointNoAliasing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "a")
		e.Query = driver.Query{Kind: driver.KindTrends, Insight: []byte(`{"kind":"TrendsQuery"}`)}
		first.Query = driver.Query{Kind: driver.KindTrends, Insight: []byte(`{"kind":"TrendsQuery"}`)}
		require.NoError(t, st.Create(ctx, e, first))

		// Changing what was passed changes nothing stored.
		e.Query.Insight[2] = 'X'
		*e.LastExecutedAt = t0.Add(time.Hour)
		got, err := st.Get(ctx, "p", "a")
		require.NoError(t, err)
		assert.Equal(t, `{"kind":"TrendsQuery"}`, string(got.Query.Insight))
		if got, want := *got.LastExecutedAt, t0.Add(time.Minute); !reflect.DeepEqual(got, want) {
			t.Errorf("*got.LastExecutedAt = %+v, want %+v", got, want)
		}

		// Changing what was returned changes nothing stored.
		got.Query.Insight[2] = 'Y'
		v, err := st.Version(ctx, "p", e.ID, 1)
		require.NoError(t, err)
		v.Query.Insight[2] = 'Z'
		again, err := st.Get(ctx, "p", "a")
		require.NoError(t, err)
		assert.Equal(t, `{"kind":"TrendsQuery"}`, string(again.Query.Insight))
		v, err = st.Version(ctx, "p", e.ID, 1)
		require.NoError(t, err)
		assert.Equal(t, `{"kind":"TrendsQuery"}`, string(v.Query.Insight))
	})
}
