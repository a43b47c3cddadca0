package variable_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/endpointkit/endpointkit/variable"
	"github.com/endpointkit/endpointkit/variable/storetest"
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
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v, want context.Canceled", name, err)
		}
	}
	if list, _ := s.List(context.Background(), "p"); len(list) != 0 {
		t.Errorf("Create with a canceled context stored %v", list)
	}
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
	if err := s.Create(ctx, "p", v); err != nil {
		t.Fatal(err)
	}
	d := v.DefaultValue.([]any)
	d[1].(map[string]any)["k"].([]any)[0] = "changed"
	d[2].([]byte)[0] = 'X'
	got, err := s.Get(ctx, "p", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.DefaultValue, nested()) {
		t.Errorf("stored default changed with the caller's copy: %#v", got.DefaultValue)
	}
	got.DefaultValue.([]any)[1].(map[string]any)["k"] = "changed"
	again, err := s.Get(ctx, "p", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.DefaultValue, nested()) {
		t.Errorf("stored default changed with a returned copy: %#v", again.DefaultValue)
	}
}

func TestMemoryStoreErrorMessages(t *testing.T) {
	ctx := context.Background()
	s := variable.NewMemoryStore()
	a := variable.Variable{ID: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b", Name: "x", CodeName: "x", Type: variable.String}
	b := a
	b.ID = "00000000-0000-4000-8000-000000000001"
	if err := s.Create(ctx, "p", a); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx, "p", b.ID)
	for _, tc := range []struct{ got, want string }{
		{s.Create(ctx, "p", a).Error(), `variable: conflict: id "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b" already exists in project "p"`},
		{s.Create(ctx, "p", b).Error(), `variable: conflict: code_name "x" is already used by variable 6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b in project "p"`},
		{err.Error(), `variable: not found: id "00000000-0000-4000-8000-000000000001" in project "p"`},
	} {
		if tc.got != tc.want {
			t.Errorf("message\n got  %s\n want %s", tc.got, tc.want)
		}
	}
}
