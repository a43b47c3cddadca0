package sqlstore

// The endpoint store's behaviour is tested once, by the conformance suite
// (endpoint/storetest, run against every backend in conformance_test.go).
// This file keeps only what that suite does not check on sqlstore: a write
// that fails midway is rolled back (a trigger, SQL only), a refused Create
// leaves no version row, the same id in two projects, an empty List is not
// nil, MarkExecuted's precision and zones, and that changing the inputs of
// Create (the insight bytes, the LastExecutedAt pointer) changes nothing
// stored.

import (
	"context"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRefusedCreateLeavesNoVersions: a Create refused for its name writes
// no version row under its id (storetest checks the endpoint only).
func TestRefusedCreateLeavesNoVersions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		e, first := endpointFixture("p", "a")
		require.NoError(t, st.Create(ctx, e, first))

		sameName, v := endpointFixture("p", "b")
		sameName.Name = "a"
		assert.ErrorIs(t, st.Create(ctx, sameName, v), driver.ErrConflict)
		_, err := st.Versions(ctx, "p", sameName.ID)
		assert.ErrorIs(t, err, driver.ErrNotFound)
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

// TestEndpointMarkExecuted: the recorded instant keeps its nanoseconds,
// never moves back, and does not depend on the zone it was given in.
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
			assert.Equal(t, step.want, *got.LastExecutedAt)
			want := e
			want.LastExecutedAt = got.LastExecutedAt
			assert.Equal(t, want, got, "nothing else changes")
		}
	})
}

// TestSameIDInTwoProjects: projects are apart even under one id (the
// fixtures' ids depend on the name), down to a Delete; an empty project
// lists as an empty, non-nil slice.
func TestSameIDInTwoProjects(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()
		for _, project := range []string{"p", "q"} {
			e, v := endpointFixture("p", "a")
			e.ProjectID, e.Description = project, "in "+project
			require.NoError(t, st.Create(ctx, e, v))
		}
		got, err := st.Get(ctx, "q", "a")
		require.NoError(t, err)
		assert.Equal(t, "in q", got.Description)
		require.NoError(t, st.Delete(ctx, "q", got.ID))
		kept, err := st.Get(ctx, "p", "a")
		require.NoError(t, err, "deleting in q leaves p alone")
		assert.Equal(t, "in p", kept.Description)

		empty, err := st.List(ctx, "nobody")
		require.NoError(t, err)
		assert.NotNil(t, empty)
		assert.Empty(t, empty)
	})
}

// TestEndpointNoAliasing: changing the insight bytes and the
// LastExecutedAt pointer passed to Create, or the bytes a Get or Version
// returned, changes nothing stored.
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
		assert.Equal(t, t0.Add(time.Minute), *got.LastExecutedAt)

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
