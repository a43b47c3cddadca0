package endpoint

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDataFreshnessValuesCannotBeChanged: what DataFreshnessValues returns
// is the caller's own; changing it changes neither the next call nor what
// validation accepts.
func TestDataFreshnessValuesCannotBeChanged(t *testing.T) {
	vals := DataFreshnessValues()
	require.NotEmpty(t, vals, "DataFreshnessValues() = %v, want 900 first", vals)
	require.Equal(t, 900, vals[0], "DataFreshnessValues() = %v, want 900 first", vals)
	for i := range vals {
		vals[i] = 1
	}
	again := DataFreshnessValues()
	require.Equal(t, 900, again[0], "DataFreshnessValues() after changing a returned slice = %v", again)
	require.NoError(t, checkDataFreshness(900), "900 refused after a caller changed its slice")
	require.Error(t, checkDataFreshness(1), "1 accepted after a caller wrote it into its slice")
}

var namePattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{0,127}$`)

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a", true}, {"Z", true}, {"daily_revenue-v2", true}, {"a" + strings.Repeat("9", 127), true},
		{"", false}, {"1a", false}, {"_a", false}, {"-a", false}, {"a b", false}, {"a.b", false},
		{"a/b", false}, {"é", false}, {"aé", false}, {"a" + strings.Repeat("9", 128), false}, {"a\n", false},
	} {
		assert.Equal(t, tc.ok, validName(tc.name), "validName(%q)", tc.name)
	}
}

func TestCheckName(t *testing.T) {
	if err := checkName(""); err == nil || err.Detail != "This field is required." || err.Attr != "name" {
		t.Fatalf("checkName(\"\") = %v", err)
	}
	require.Nil(t, checkName("ok_name"))
	err := checkName("9")
	if err == nil || err.Status != 400 || err.Code != CodeInvalidInput ||
		err.Detail != "Invalid name '9'. Must start with a letter, contain only alphanumeric characters, hyphens, or underscores, and be between 1 and 128 characters long." {
		t.Fatalf("checkName(9) = %#v", err)
	}
}

// FuzzValidName: the hand-written check agrees with the documented regular
// expression on every input.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"a", "1", "a-b_c", "", "é", strings.Repeat("a", 129), "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := validName(s), namePattern.MatchString(s)
		require.Equal(t, want, got, "validName(%q)", s)
	})
}
