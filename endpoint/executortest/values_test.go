package executortest

import (
	"github.com/stretchr/testify/require"
	"testing"
)

func TestSameValue(t *testing.T) {
	type named string
	var nilBytes []byte
	var nilPtr *int64
	for _, tc := range []struct {
		name      string
		got, want any
		same      bool
	}{
		{"string", "ann", "ann", true},
		{"other string", "ann", "bob", false},
		{"[]byte for text", []byte("ann"), "ann", false},
		{"named string type", named("ann"), "ann", false},
		{"empty string is not NULL", "", nil, false},
		{"NULL is not the empty string", nil, "", false},
		{"NULL", nil, nil, true},
		{"nil []byte is not NULL", nilBytes, nil, false},
		{"typed nil pointer is not NULL", nilPtr, nil, false},
		{"int64", int64(5), int64(5), true},
		{"int32", int32(5), int64(5), true},
		{"int", 5, int64(5), true},
		{"uint64", uint64(5), int64(5), true},
		{"uint64 of a negative", uint64(1<<64 - 1), int64(-1), false},
		{"large int64", int64(1<<53 + 1), int64(1<<53 + 1), true},
		{"integer as float64", float64(5), int64(5), false},
		{"integer as text", "5", int64(5), false},
		{"NULL for an integer", nil, int64(0), false},
		{"other integer", int64(6), int64(5), false},
		{"float64", 1.5, 1.5, true},
		{"float32", float32(1.5), 1.5, true},
		{"float as integer", int64(0), 0.0, false},
		{"float as text", "1.5", 1.5, false},
		{"other float", 1.25, 1.5, false},
		{"text as integer", int64(7), "007", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.same, sameValue(tc.got, tc.want), "sameValue(%T(%#v), %T(%#v))", tc.got, tc.got, tc.want, tc.want)
		})
	}
}

func TestSameRows(t *testing.T) {
	want := [][]any{{int64(1), "a", nil}, {int64(2), "b", 1.5}}
	for _, tc := range []struct {
		name string
		got  [][]any
		same bool
	}{
		{"equal", [][]any{{int32(1), "a", nil}, {int64(2), "b", float32(1.5)}}, true},
		{"a row short", [][]any{{int64(1), "a"}, {int64(2), "b", 1.5}}, false},
		{"a row long", [][]any{{int64(1), "a", nil, nil}, {int64(2), "b", 1.5}}, false},
		{"a row missing", [][]any{{int64(1), "a", nil}}, false},
		{"rows swapped", [][]any{{int64(2), "b", 1.5}, {int64(1), "a", nil}}, false},
		{"columns swapped", [][]any{{"a", int64(1), nil}, {"b", int64(2), 1.5}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameRows(tc.got, want); got != tc.same {
				t.Fatalf("sameRows(%s) = %v, want %v", describe(tc.got), got, tc.same)
			}
		})
	}
	require.True(t, sameRows(nil, nil), "an empty result differs from no rows")
	require.True(t, sameRows([][]any{}, nil), "an empty result differs from no rows")
}

func TestDescribe(t *testing.T) {
	got := describe([][]any{{int64(1), []byte("a"), nil}, {"b"}})
	want := `[(int64(1), []uint8([]byte{0x61}), <nil>(<nil>)) (string("b"))]`
	require.Equal(t, want, got, "describe")
}
