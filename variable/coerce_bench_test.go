package variable

import (
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkCoerce measures the common shapes a run request brings: strings
// (the spec's examples send every value as one), numbers as decoded by
// encoding/json, and raw JSON.
func BenchmarkCoerce(b *testing.B) {
	now := time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
	list := Variable{CodeName: "plan", Type: List, Values: []string{"free", "pro", "team", "enterprise"}}
	multi := list
	multi.IsMulti = true
	for _, bc := range []struct {
		name string
		v    Variable
		raw  any
	}{
		{"String", Variable{CodeName: "country", Type: String}, "US"},
		{"String/RawMessage", Variable{CodeName: "country", Type: String}, json.RawMessage(`"US"`)},
		{"Number/string", Variable{CodeName: "n", Type: Number}, "12345"},
		{"Number/float64", Variable{CodeName: "n", Type: Number}, 12.5},
		{"Number/json.Number", Variable{CodeName: "n", Type: Number}, json.Number("12345")},
		{"Number/RawMessage", Variable{CodeName: "n", Type: Number}, json.RawMessage(`12345`)},
		{"Boolean", Variable{CodeName: "b", Type: Boolean}, "true"},
		{"Date/day", Variable{CodeName: "d", Type: Date}, "2025-05-01"},
		{"Date/relative", Variable{CodeName: "d", Type: Date}, "-7d"},
		{"Date/RFC3339", Variable{CodeName: "d", Type: Date}, "2025-05-01T12:30:00+02:00"},
		{"List", list, "team"},
		{"List/multi", multi, []any{"free", "team"}},
		{"Rejected", Variable{CodeName: "n", Type: Number}, "12abc"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.v.Coerce(bc.raw, now); err != nil && bc.name != "Rejected" {
					b.Fatal(err)
				}
			}
		})
	}
}
