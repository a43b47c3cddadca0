package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The conformance suite compares default values by JSON; this store keeps
// the Go type too.
func TestVariableDefaultKeepsGoType(t *testing.T) {
	defaults := []any{nil, "x", int64(5), float64(5), 2.5, true, json.Number("5"), []string{"a"}, []string{}, []any{"a", int64(1)}}
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		for i, def := range defaults {
			v := variableFixture(fmt.Sprintf("v%d", i))
			v.DefaultValue = def
			require.NoError(t, s.Variables().Create(ctx, "p", v))
			got, err := s.Variables().Get(ctx, "p", v.ID)
			require.NoError(t, err)
			if got, want := got, v; !reflect.DeepEqual(got, want) {
				t.Errorf("default %#v: got = %+v, want %+v", def, got, want)
			}
		}
	})
}

func TestVariableValuesNilAndEmpty(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		for code, values := range map[string][]string{"nil_values": nil, "empty_values": {}} {
			v := variableFixture(code)
			v.Type, v.IsMulti, v.DefaultValue, v.Values = variable.String, false, "x", values
			require.NoError(t, s.Variables().Create(ctx, "p", v))
			got, err := s.Variables().Get(ctx, "p", v.ID)
			require.NoError(t, err)
			assert.Equal(t, values, got.Values)
		}
	})
}

func TestVariableGetManyBeyondOneInList(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	var ids []string
	for i := 0; i < maxInList+20; i++ {
		v := variableFixture(fmt.Sprintf("v%d", i))
		require.NoError(t, s.Variables().Create(ctx, "p", v))
		ids = append(ids, v.ID)
	}
	ids = append(ids, "unknown", ids[0])
	got, err := s.Variables().GetMany(ctx, "p", ids)
	require.NoError(t, err)
	assert.Len(t, got, maxInList+20)
	assert.Equal(t, "v0", got[ids[0]].CodeName)
	if got, want := got[ids[maxInList+19]].CodeName, fmt.Sprintf("v%d", maxInList+19); got != want {
		t.Errorf("got[ids[maxInList+19]].CodeName = %q, want %q", got, want)
	}

	none, err := s.Variables().GetMany(ctx, "p", nil)
	require.NoError(t, err)
	v := none
	assert.True(t, (len(v) == 0), "none = %v, want it empty", v)
}

// TestVariableConflictFromDriver reaches the fallback that maps a driver's
// unique-key error to ErrConflict, with a trigger standing in for a
// concurrent writer that the in-transaction checks could not see.
func TestVariableConflictFromDriver(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	a := variableFixture("a")
	require.NoError(t, s.Variables().Create(ctx, "p", a))
	_, err := s.db.ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON `+variablesTable+`
		BEGIN SELECT RAISE(ABORT, 'UNIQUE constraint failed: test trigger'); END`)
	require.NoError(t, err)
	err = s.Variables().Create(ctx, "p", variableFixture("b"))
	assert.ErrorIs(t, err, variable.ErrConflict)
	_, err = s.db.ExecContext(ctx, `CREATE TRIGGER refuse_update BEFORE UPDATE ON `+variablesTable+`
		BEGIN SELECT RAISE(ABORT, 'NOT NULL constraint failed: test trigger'); END`)
	require.NoError(t, err)
	a.Name = "changed"
	err = s.Variables().Update(ctx, "p", a)
	require.Error(t, err)
	assert.NotErrorIs(t, err, variable.ErrConflict, "other errors stay what they are")
	got, err := s.Variables().Get(ctx, "p", a.ID)
	require.NoError(t, err)
	if got, want := got, variableFixture("a"); !reflect.DeepEqual(got, want) {
		t.Errorf("got = %+v, want %+v", got, want)
	}
}
