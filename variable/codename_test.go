package variable

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"regexp"
	"testing"
)

func TestCodeNameFrom(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"Country", "country"},
		{"country", "country"},
		{"Start date", "start_date"},
		{"  Start   date  ", "start_date"},
		{"Min. amount ($)", "min_amount"},
		{"a--b__c", "a_b_c"},
		{"already_snake", "already_snake"},
		{"_private", "private"},
		{"trailing_", "trailing"},
		{"CamelCase", "camelcase"},
		{"7 days", "_7_days"},
		{"2025", "_2025"},
		{"Café crème", "caf_cr_me"},
		{"Größe", "gr_e"},
		{"日付 date", "date"},
		{"ÀB", "b"},
		{"", ""},
		{"   ", ""},
		{"---", ""},
		{"日付", ""},
		{"$browser", "browser"},
		{"a\tb\nc", "a_b_c"},
		{"KELVIN \u212a", "kelvin_k"}, // the Kelvin sign lower-cases to ASCII k
	} {
		got := CodeNameFrom(tc.name)
		assert.Equal(t, tc.want, got, "CodeNameFrom(%q)", tc.name)
	}
}

func TestValidCodeName(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"a", true},
		{"_", true},
		{"_1", true},
		{"A_b9", true},
		{"country", true},
		{"", false},
		{"1a", false},
		{"a b", false},
		{"a-b", false},
		{"a.b", false},
		{"é", false},
		{"a\x00", false},
		{"a}", false},
	} {
		assert.Equal(t, tc.want, ValidCodeName(tc.s), "ValidCodeName(%q)", tc.s)
		assert.Equal(t, tc.want, codeNamePattern.MatchString(tc.s), "codeNamePattern.MatchString(%q)", tc.s)
	}
}

// FuzzCodeNameFrom checks that a derived code name is either empty (which
// Normalize reports) or valid, and that deriving is idempotent.
func FuzzCodeNameFrom(f *testing.F) {
	for _, s := range []string{"Country", "7 days", "a--b", "日付", "", "_x_", "Größe \u212a", "\xff\xfe"} {
		f.Add(s)
	}
	spec := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	f.Fuzz(func(t *testing.T, name string) {
		got := CodeNameFrom(name)
		if got == "" {
			return
		}
		require.True(t, spec.MatchString(got), "CodeNameFrom(%q) = %q, not a valid code name", name, got)
		require.True(t, ValidCodeName(got), "CodeNameFrom(%q) = %q, not a valid code name", name, got)
		require.Equal(t, got, CodeNameFrom(got), "CodeNameFrom(%q)", name)
	})
}
