package placeholder

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"strings"
	"testing"
)

func TestTemplateStatement(t *testing.T) {
	for _, tc := range []struct {
		src, body    string
		second       int
		line, column int
	}{
		{"SELECT 1", "SELECT 1", -1, 0, 0},
		{"SELECT 1;", "SELECT 1", -1, 0, 0},
		{"SELECT 1 ;; \n", "SELECT 1", -1, 0, 0},
		{"SELECT 1 -- trailing; comment", "SELECT 1", -1, 0, 0},
		{"SELECT 1; -- done\n/* really */ ;", "SELECT 1", -1, 0, 0},
		{"SELECT ';' AS s;", "SELECT ';' AS s", -1, 0, 0},
		{"SELECT \"a;b\", `c;d` FROM t", "SELECT \"a;b\", `c;d` FROM t", -1, 0, 0},
		{"SELECT 'it''s;' -- x", "SELECT 'it''s;'", -1, 0, 0},
		{`SELECT 'a\';' FROM t;`, `SELECT 'a\';' FROM t`, -1, 0, 0},
		{"SELECT 1 /* ; */ FROM t", "SELECT 1 /* ; */ FROM t", -1, 0, 0},
		{"SELECT {variables.x};", "SELECT {variables.x}", -1, 0, 0},
		{"SELECT { variables . x } ; ", "SELECT { variables . x }", -1, 0, 0},
		{"SELECT count(", "SELECT count(", -1, 0, 0},
		{"SELECT {x};", "SELECT {x}", -1, 0, 0},
		{"SELECT 1; SELECT 2", "SELECT 1; SELECT 2", 8, 1, 9},
		{"SELECT 1;\n-- c\nDROP TABLE t", "SELECT 1;\n-- c\nDROP TABLE t", 8, 1, 9},
		{"SELECT 1 ;; SELECT 2;", "SELECT 1 ;; SELECT 2", 9, 1, 10},
		{"SELECT 1 /* ; */ ; ';'", "SELECT 1 /* ; */ ; ';'", 17, 1, 18},
		{"ab\ncdé;\nx", "ab\ncdé;\nx", 7, 2, 4},
		{"SELECT 'é\n';\n\t(1)", "SELECT 'é\n';\n\t(1)", 12, 2, 2},
		{"", "", -1, 0, 0},
		{"-- only a comment", "", -1, 0, 0},
		{";", "", -1, 0, 0},
		{"; SELECT 1", "; SELECT 1", 0, 1, 1},
	} {
		tpl, err := Compile(tc.src)
		require.NoError(t, err, "Compile(%q)", tc.src)
		want := Statement{Body: tc.body, Second: tc.second, Line: tc.line, Column: tc.column}
		if got := tpl.Statement(); got != want {
			t.Errorf("Compile(%q).Statement() = %+v; want %+v", tc.src, got, want)
		}
		body, second := refStatement(tc.src)
		if assert.Equal(t, tc.body, body, "refStatement(%q) = %q, %d; the table wants %q, %d", tc.src, body, second, tc.body, tc.second) {
			assert.Equal(t, tc.second, second, "refStatement(%q) = %q, %d; the table wants %q, %d", tc.src, body, second, tc.body, tc.second)
		}
	}
}

// checkStatement holds Template.Statement on s, when s compiles, to
// refStatement and recount.
func checkStatement(t *testing.T, s string) {
	tpl, err := Compile(s)
	if err != nil {
		return
	}
	got := tpl.Statement()
	body, second := refStatement(s)
	require.Equal(t, body, got.Body, "Compile(%q).Statement() = %+v; want body", s, got)
	require.Equal(t, second, got.Second, "Compile(%q).Statement() = %+v; want body", s, got)
	switch {
	case second < 0 && (got.Line != 0 || got.Column != 0):
		t.Fatalf("Compile(%q).Statement() = %+v: a position without a second statement", s, got)
	case second >= 0:
		line, col := recount(s, second)
		require.Equal(t, line, got.Line, "Compile(%q).Statement() = %+v; offset %d is line", s, got, second)
		require.Equal(t, col, got.Column, "Compile(%q).Statement() = %+v; offset %d is line", s, got, second)
	}
}

// refStatement is the obvious, byte-at-a-time reading of a statement that
// Template.Statement gets from the scan (it was package endpoint's own
// reading before): whitespace, comments and ';' are not tokens; a quote
// is one token; any other byte is a token. The body ends with the last
// token, and the first ';' followed by a token starts a second statement.
// A quote or comment never closed runs to the end (Compile refuses such
// text before this matters).
func refStatement(src string) (body string, second int) {
	n := len(src)
	lastEnd, pendingSemi, second := 0, -1, -1
	for i := 0; i < n; {
		c := src[i]
		switch {
		case strings.IndexByte(" \t\n\r\f\v", c) >= 0:
			i++
			continue
		case strings.HasPrefix(src[i:], "--"):
			if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = n
			}
			continue
		case strings.HasPrefix(src[i:], "/*"):
			if j := strings.Index(src[i+2:], "*/"); j >= 0 {
				i += 2 + j + 2
			} else {
				i = n
			}
			continue
		case c == ';':
			if pendingSemi < 0 {
				pendingSemi = i
			}
			i++
			continue
		}
		if pendingSemi >= 0 && second < 0 {
			second = pendingSemi
		}
		if c == '\'' || c == '"' || c == '`' {
			i = refQuoteEnd(src, i)
		} else {
			i++
		}
		lastEnd = i
	}
	return src[:lastEnd], second
}

// refQuoteEnd returns the offset just past the quote opened at src[i], or
// len(src) when it is never closed. A doubled quote stands for itself; in
// '...' a backslash escapes the next byte.
func refQuoteEnd(src string, i int) int {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case q:
			if j+1 < len(src) && src[j+1] == q {
				j++
				continue
			}
			return j + 1
		case '\\':
			if q == '\'' {
				j++
			}
		}
	}
	return len(src)
}
