package endpoint

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlainSelect(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{"SELECT 1", true},
		{"select * from t", true},
		{"  \n\tSeLeCt a FROM t WHERE b = {variables.b}", true},
		{"-- top\nSELECT 1", true},
		{"/* a */ /* b */SELECT 1", true},
		{"SELECT a AS into_x, intox FROM t", true},
		{"SELECT 'x' AS selected", true},
		{"SELECTa FROM t", false},
		{"SELECT", true},
		{"SELECT 1 INTO t2", false},
		{"SELECT * into OUTFILE '/tmp/x' FROM t", false},
		{"SELECT 'into' FROM t", false}, // a word in a string keeps the wrapper
		{"SELECT 1 -- into\n", false},
		{"WITH x AS (SELECT 1) SELECT * FROM x", false},
		{"WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", false},
		{"DELETE FROM t", false},
		{"INSERT INTO t SELECT 1", false},
		{"(SELECT 1) UNION (SELECT 2)", false},
		{"VALUES (1)", false},
		{"PRAGMA table_info(t)", false},
		{"-- only a comment", false},
		{"/* unterminated", false},
		{"", false},
		{"SÉLECT 1", false},
	} {
		assert.Equal(t, tc.want, plainSelect(engine.SQLite.Lexical(), tc.body), "plainSelect(%q)", tc.body)
	}
}

// TestPlainSelectPerEngine: comments are skipped as the engine reads
// them, and a comment the engine executes keeps the wrapper.
func TestPlainSelectPerEngine(t *testing.T) {
	for _, tc := range []struct {
		e    engine.Engine
		body string
		want bool
	}{
		{engine.PostgreSQL, "/* a /* b */ c */ SELECT 1", true},
		{engine.ClickHouse, "/* a /* b */ c */ SELECT 1", true},
		{engine.SQLite, "/* a /* b */ c */ SELECT 1", false},
		{engine.MySQL, "# note\nSELECT 1", true},
		{engine.SQLite, "# note\nSELECT 1", false},
		{engine.MySQL, "/*!50000 SELECT 1 */", false},
		{engine.MySQL, "SELECT 1 /*!50000 , 2 */", false},
		{engine.MySQL, "SELECT 'a\\' INTO' AS x", false},
		{engine.SQLite, `SELECT 'C:\' AS p FROM t`, true},
		{engine.PostgreSQL, "SELECT $$ into $$", false},
	} {
		assert.Equal(t, tc.want, plainSelect(tc.e.Lexical(), tc.body), "%s: plainSelect(%q)", tc.e.Name(), tc.body)
	}
}

// FuzzPlainSelect: the test never panics, ignores the case of ASCII
// letters and leading comments, and any word INTO keeps the wrapper.
func FuzzPlainSelect(f *testing.F) {
	for _, s := range []string{"SELECT 1", "select a into b", "-- c\nSELECT x", "/**/select", "WITH x AS (SELECT 1) SELECT 1", "SELECT 'é'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		plainSelect := func(s string) bool { return plainSelect(engine.SQLite.Lexical(), s) }
		got := plainSelect(s)
		upper := []byte(s)
		for i, c := range upper {
			if c >= 'a' && c <= 'z' {
				upper[i] = c - 'a' + 'A'
			}
		}
		require.Equal(t, got, plainSelect(string(upper)), "plainSelect(%q) = %v but %v in upper case", s, got, !got)
		if !strings.Contains(s, "*/") && plainSelect("/* "+s+" */ "+s) != got {
			t.Fatalf("a leading comment changed plainSelect(%q)", s)
		}
		require.False(t, plainSelect(s+" into"), "plainSelect(%q + \" into\") = true", s)
		if got && !strings.EqualFold(strings.TrimLeft(skipLeadingComments(s), " \t\n\r\f\v")[:6], "select") {
			t.Fatalf("plainSelect(%q) = true for a text that does not begin with SELECT", s)
		}
	})
}

// skipLeadingComments drops the comments plainSelect skips, for the fuzz
// target's own check.
func skipLeadingComments(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\n\r\f\v")
		switch {
		case strings.HasPrefix(s, "--"):
			_, s, _ = strings.Cut(s, "\n")
		case strings.HasPrefix(s, "/*"):
			_, s, _ = strings.Cut(s[2:], "*/")
		default:
			return s
		}
	}
}

// TestCompileDirect: a plain SELECT gets a direct template of its body,
// trailing semicolons and comments left out, with the same placeholders;
// anything else gets none.
func TestCompileDirect(t *testing.T) {
	for _, tc := range []struct {
		src, direct string
	}{
		{"SELECT a FROM t WHERE b = {variables.b}", "SELECT a FROM t WHERE b = {variables.b}"},
		{"SELECT a FROM t WHERE b = {variables.b};  -- done", "SELECT a FROM t WHERE b = {variables.b}"},
		{"WITH x AS (SELECT 1) SELECT * FROM x", ""},
	} {
		c, err := pagedOf(t, engine.SQLite, tc.src)
		require.NoError(t, err, "compilePaged(%q)", tc.src)
		switch {
		case tc.direct == "" && c.direct != nil:
			t.Errorf("%q runs unwrapped as %q", tc.src, c.direct.Text().Source())
		case tc.direct != "" && (c.direct == nil || c.direct.Text().Source() != tc.direct):
			t.Errorf("%q: direct %v, want %q", tc.src, c.direct, tc.direct)
		case c.direct != nil && !slices.Equal(c.direct.Text().Names(), c.tmpl.Names()):
			t.Errorf("%q: direct names %v, want %v", tc.src, c.direct.Text().Names(), c.tmpl.Names())
		}
	}
	if tmpl, _ := placeholder.Compile("SELECT 1"); tmpl != nil {
		c, text, err := compiledOf(tmpl, engine.SQLite)
		if err != nil || c.direct != text {
			t.Errorf("a body equal to the source was compiled twice: %v", err)
		}
	}
}

// BenchmarkPlainSelect2K tests the 2 KB query that sql/sqltoken's
// BenchmarkTokens2K reads, to compare the scanners on the same text.
func BenchmarkPlainSelect2K(b *testing.B) {
	data, err := os.ReadFile("../sql/sqltoken/testdata/bench2k.sql")
	require.NoError(b, err)
	src := string(data)
	lx := engine.SQLite.Lexical()
	require.True(b, plainSelect(lx, src), "the query is not a plain SELECT")
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		plainSelect(lx, src)
	}
}
