package sqlstore

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValueRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   any
	}{
		{"nil", nil},
		{"true", true},
		{"false", false},
		{"string", "a \"quoted\" <b>"},
		{"empty string", ""},
		{"float64", 2.5},
		{"whole float64", float64(5)},
		{"int64", int64(-7)},
		{"big int64", int64(1) << 62},
		{"int", 42},
		{"json.Number", json.Number("12.50")},
		{"strings", []string{"a", "b"}},
		{"empty strings", []string{}},
		{"nil strings", []string(nil)},
		{"slice", []any{"a", float64(1), int64(2), nil, []any{true}}},
		{"empty slice", []any{}},
		{"nil slice", []any(nil)},
		{"map", map[string]any{"a": float64(1), "b": map[string]any{"c": []string{"d"}}}},
		{"empty map", map[string]any{}},
		{"nil map", map[string]any(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertRoundTrip(t, tt.in, marshalValue, unmarshalValue) })
	}
}

func TestValueOtherTypesKeepTheirJSON(t *testing.T) {
	type point struct{ X, Y int }
	text, err := marshalValue(point{1, 2})
	require.NoError(t, err)
	got, err := unmarshalValue(text)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"X": float64(1), "Y": float64(2)}, got)
}

func TestValueErrors(t *testing.T) {
	_, err := marshalValue(func() {})
	assert.Error(t, err, "a func has no JSON: got no error, want one")
	for _, text := range []string{``, `{`, `{"t":"alien"}`, `{"t":"int64","v":"x"}`, `{"t":"slice","a":[{"t":"bool","v":1}]}`} {
		_, err := unmarshalValue(text)
		assert.Error(t, err, "%s: got no error, want one", text)
	}
}
