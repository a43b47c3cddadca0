package chdb

import "testing"

func TestEscapeParam(t *testing.T) {
	for in, want := range map[string]string{
		"plain":     "plain",
		`a\b`:       `a\\b`,
		"it's":      `it\'s`,
		"t\tn\nr\r": `t\tn\nr\r`,
		"nul\x00":   `nul\0`,
		"é ’":       "é ’",
	} {
		if got := EscapeParam(in); got != want {
			t.Errorf("EscapeParam(%q) = %q, want %q", in, got, want)
		}
	}
}
