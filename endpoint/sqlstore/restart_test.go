package sqlstore

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/variable"
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
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		snap.variables[p] = vars
		eps, err := s.Endpoints().List(ctx, p)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		snap.endpoints[p] = eps
		for _, e := range eps {
			vs, err := s.Endpoints().Versions(ctx, p, e.ID)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
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
		if err := s.Variables().Create(ctx, "1", v); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	other := variableFixture("s")
	if err := s.Variables().Create(ctx, "2", other); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	// Endpoints with several versions, a SQL one and an insight one.
	sqlE, first := endpointFixture("1", "sql_endpoint")
	if err := s.Endpoints().Create(ctx, sqlE, first); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	for i, q := range []string{"SELECT 2", "SELECT 3 WHERE a = {variables.event}"} {
		next, v := nextVersion(sqlE, q)
		if err := s.Endpoints().Update(ctx, next, v); err != nil {
			t.Fatalf("version %d: unexpected error: %v", i+2, err)
		}
		sqlE = next
	}
	if err := s.Endpoints().MarkExecuted(ctx, "1", sqlE.ID, t0.Add(48*time.Hour)); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	ins, insFirst := endpointFixture("2", "trend")
	ins.Query = driver.Query{Kind: driver.KindTrends, Insight: []byte(`{"kind":"TrendsQuery","series":[]}`)}
	insFirst.Query = ins.Query
	ins.LastExecutedAt = nil
	if err := s.Endpoints().Create(ctx, ins, insFirst); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	before := takeSnapshot(t, s, "1", "2")
	if v := before.variables["1"]; len(v) != len(defaults) {
		t.Fatalf("len = %d, want %d: %v", len(v), len(defaults), v)
	}
	if v := before.versions["1/"+sqlE.ID]; len(v) != 3 {
		t.Fatalf("len = %d, want %d: %v", len(v), 3, v)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	reopened, _ := openFile(t, path)
	after := takeSnapshot(t, reopened, "1", "2")
	if got, want := after, before; !reflect.DeepEqual(got, want) {
		t.Errorf("after = %+v, want %+v", got, want)
	}
	for _, v := range after.variables["1"] {
		if got, want := v.DefaultValue, defaults[v.CodeName]; !reflect.DeepEqual(got, want) {
			t.Errorf("default of %s keeps its Go type: v.DefaultValue = %+v, want %+v", v.CodeName, got, want)
		}
	}
	got, err := reopened.Endpoints().Get(ctx, "1", "sql_endpoint")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := *got.LastExecutedAt, t0.Add(48*time.Hour); !reflect.DeepEqual(got, want) {
		t.Errorf("*got.LastExecutedAt = %+v, want %+v", got, want)
	}
	if got, want := got.CurrentVersion, 3; got != want {
		t.Errorf("got.CurrentVersion = %v, want %v", got, want)
	}

	// The reopened store goes on from where the first one stopped.
	next, v := nextVersion(got, "SELECT 4")
	if err := reopened.Endpoints().Update(ctx, next, v); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	stale, staleV := nextVersion(sqlE, "SELECT stale")
	if err := reopened.Endpoints().Update(ctx, stale, staleV); !errors.Is(err, driver.ErrConflict) {
		t.Errorf("error %v is not %v", err, driver.ErrConflict)
	}
}
