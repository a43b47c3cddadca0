package sqlstore

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snapshot is everything a store holds for some projects.
type snapshot struct {
	variables map[string][]variable.Variable
	endpoints map[string][]driver.Endpoint
	versions  map[string][]driver.Version // by endpoint id
}

func takeSnapshot(t *testing.T, s *Store, projects ...string) snapshot {
	t.Helper()
	ctx := context.Background()
	snap := snapshot{map[string][]variable.Variable{}, map[string][]driver.Endpoint{}, map[string][]driver.Version{}}
	for _, p := range projects {
		vars, err := s.Variables().List(ctx, p)
		require.NoError(t, err)
		snap.variables[p] = vars
		eps, err := s.Endpoints().List(ctx, p)
		require.NoError(t, err)
		snap.endpoints[p] = eps
		for _, e := range eps {
			vs, err := s.Endpoints().Versions(ctx, p, e.ID)
			require.NoError(t, err)
			snap.versions[p+"/"+e.ID] = vs
		}
	}
	return snap
}

func TestRestartLosesNothing(t *testing.T) {
	ctx := context.Background()
	path := tempFile(t)
	s, db := openFile(t, path)

	// Variables of every shape of default value.
	defaults := map[string]any{
		"s": "text", "n": int64(7), "f": 2.5, "b": true, "d": "-7d", "l": []string{"a", "b"}, "none": nil,
	}
	for code, def := range defaults {
		v := variableFixture(code)
		v.DefaultValue = def
		require.NoError(t, s.Variables().Create(ctx, "1", v))
	}
	other := variableFixture("s")
	require.NoError(t, s.Variables().Create(ctx, "2", other))

	// Endpoints with several versions, a SQL one and an insight one.
	sqlE, first := endpointFixture("1", "sql_endpoint")
	require.NoError(t, s.Endpoints().Create(ctx, sqlE, first))
	for i, q := range []string{"SELECT 2", "SELECT 3 WHERE a = {variables.event}"} {
		next, v := nextVersion(sqlE, q)
		require.NoError(t, s.Endpoints().Update(ctx, next, v), "version %d", i+2)
		sqlE = next
	}
	require.NoError(t, s.Endpoints().MarkExecuted(ctx, "1", sqlE.ID, t0.Add(48*time.Hour)))
	ins, insFirst := endpointFixture("2", "trend")
	ins.Query = driver.Query{Kind: driver.KindTrends, Insight: []byte(`{"kind":"TrendsQuery","series":[]}`)}
	insFirst.Query = ins.Query
	ins.LastExecutedAt = nil
	require.NoError(t, s.Endpoints().Create(ctx, ins, insFirst))

	before := takeSnapshot(t, s, "1", "2")
	if v := before.variables["1"]; len(v) != len(defaults) {
		t.Fatalf("len = %d, want %d: %v", len(v), len(defaults), v)
	}
	if v := before.versions["1/"+sqlE.ID]; len(v) != 3 {
		t.Fatalf("len = %d, want %d: %v", len(v), 3, v)
	}
	require.NoError(t, db.Close())

	reopened, _ := openFile(t, path)
	after := takeSnapshot(t, reopened, "1", "2")
	assert.Equal(t, before, after)
	for _, v := range after.variables["1"] {
		got, want := v.DefaultValue, defaults[v.CodeName]
		assert.Equal(t, want, got, "default of %s keeps its Go type: v.DefaultValue", v.CodeName)
	}
	got, err := reopened.Endpoints().Get(ctx, "1", "sql_endpoint")
	require.NoError(t, err)
	if got, want := *got.LastExecutedAt, t0.Add(48*time.Hour); !reflect.DeepEqual(got, want) {
		t.Errorf("*got.LastExecutedAt = %+v, want %+v", got, want)
	}
	assert.Equal(t, 3, got.CurrentVersion)

	// The reopened store goes on from where the first one stopped.
	next, v := nextVersion(got, "SELECT 4")
	require.NoError(t, reopened.Endpoints().Update(ctx, next, v))
	stale, staleV := nextVersion(sqlE, "SELECT stale")
	assert.ErrorIs(t, reopened.Endpoints().Update(ctx, stale, staleV), driver.ErrConflict)
}
