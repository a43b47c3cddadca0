package chparam

import (
	"github.com/stretchr/testify/assert"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain":     "plain",
		`a\b`:       `a\\b`,
		"it's":      `it\'s`,
		"t\tn\nr\r": `t\tn\nr\r`,
		"nul\x00":   `nul\0`,
		"é ’":       "é ’",
	} {
		assert.Equal(t, want, Escape(in), "Escape(%q)", in)
	}
}
