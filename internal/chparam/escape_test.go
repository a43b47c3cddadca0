package chparam

import "testing"

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain":     "plain",
		`a\b`:       `a\\b`,
		"it's":      `it\'s`,
		"t\tn\nr\r": `t\tn\nr\r`,
		"nul\x00":   `nul\0`,
		"é ’":       "é ’",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}
