package variable_test

import (
	"context"
	"testing"

	"github.com/endpointkit/endpointkit/variable"
	"github.com/endpointkit/endpointkit/variable/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemoryStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) variable.Store { return variable.NewMemoryStore() })
}

func TestMemoryStoreCanceledContext(t *testing.T) {
	s := variable.NewMemoryStore()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := variable.Variable{ID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", Name: "x", CodeName: "x", Type: variable.String}
	_, getErr := s.Get(ctx, "p", v.ID)
	_, manyErr := s.GetMany(ctx, "p", []string{v.ID})
	_, listErr := s.List(ctx, "p")
	for name, err := range map[string]error{
		"Create":  s.Create(ctx, "p", v),
		"Get":     getErr,
		"GetMany": manyErr,
		"List":    listErr,
		"Update":  s.Update(ctx, "p", v),
		"Delete":  s.Delete(ctx, "p", v.ID),
	} {
		assert.ErrorIs(t, err, context.Canceled, "%s with a canceled context", name)
	}
	list, _ := s.List(context.Background(), "p")
	assert.Empty(t, list, "Create with a canceled context stored")
}

// Defaults that never went through Normalize (the store does not judge) are
// copied deeply too: nested JSON arrays and objects.
func TestMemoryStoreCopiesNestedDefaults(t *testing.T) {
	ctx := context.Background()
	s := variable.NewMemoryStore()
	nested := func() any {
		return []any{"a", map[string]any{"k": []any{"b"}}, []byte("c")}
	}
	v := variable.Variable{ID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", Name: "x", CodeName: "x", Type: variable.String, DefaultValue: nested()}
	require.NoError(t, s.Create(ctx, "p", v))
	d := v.DefaultValue.([]any)
	d[1].(map[string]any)["k"].([]any)[0] = "changed"
	d[2].([]byte)[0] = 'X'
	got, err := s.Get(ctx, "p", v.ID)
	require.NoError(t, err)
	assert.Equal(t, nested(), got.DefaultValue, "stored default changed with the caller's copy")
	got.DefaultValue.([]any)[1].(map[string]any)["k"] = "changed"
	again, err := s.Get(ctx, "p", v.ID)
	require.NoError(t, err)
	assert.Equal(t, nested(), again.DefaultValue, "stored default changed with a returned copy")
}

func TestMemoryStoreErrorMessages(t *testing.T) {
	ctx := context.Background()
	s := variable.NewMemoryStore()
	a := variable.Variable{ID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", Name: "x", CodeName: "x", Type: variable.String}
	b := a
	b.ID = "00000000-0000-4000-8000-000000000001"
	require.NoError(t, s.Create(ctx, "p", a))
	_, err := s.Get(ctx, "p", b.ID)
	for _, tc := range []struct{ got, want string }{
		{s.Create(ctx, "p", a).Error(), `variable: conflict: id "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b" already exists in project "p"`},
		{s.Create(ctx, "p", b).Error(), `variable: conflict: code_name "x" is already used by variable 6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b in project "p"`},
		{err.Error(), `variable: not found: id "00000000-0000-4000-8000-000000000001" in project "p"`},
	} {
		assert.Equal(t, tc.want, tc.got, "message")
	}
}
