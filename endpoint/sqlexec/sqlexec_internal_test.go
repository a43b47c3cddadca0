package sqlexec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// FuzzCheckQuery: checkQuery never panics; what it accepts begins, past
// spaces and comments, with SELECT, WITH, VALUES or '('; a comment or
// spaces put before an accepted text keep it accepted, and a statement put
// before it gets it refused.
func FuzzCheckQuery(f *testing.F) {
	for _, s := range []string{"SELECT 1", "  -- c\n select 1", "/* x */ WITH a AS (SELECT 1) SELECT * FROM a", "VALUES (1)",
		"(SELECT 1)", "DROP TABLE t", "/*!50000 DROP TABLE t */ SELECT 1", "/*M!1 x */ SELECT 1", "# c\nSELECT 1", "selectx", "--", "/*", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, lex := range []engine.Lexical{engine.SQLite.Lexical(), engine.MySQL.Lexical()} {
			if checkQuery(lex, q) != nil {
				continue
			}
			head := strings.ToLower(strings.TrimLeft(skipComments(lex, q), " \t\n\r\f\v"))
			require.True(t, strings.HasPrefix(head, "select") || strings.HasPrefix(head, "with") || strings.HasPrefix(head, "values") || strings.HasPrefix(head, "("),
				"accepted %q, which begins %q", q, head[:min(len(head), 20)])
			require.NoError(t, checkQuery(lex, "/* c */\n -- d\n"+q), "a comment before %q got it refused", q)
			require.Error(t, checkQuery(lex, "DELETE FROM t; "+q), "a DELETE before %q passed", q)
		}
	})
}

// skipComments drops the spaces and comments that lead q, as the engine
// with lex reads them (executable comments are not dropped).
func skipComments(lex engine.Lexical, q string) string {
	for {
		t := strings.TrimLeft(q, " \t\n\r\f\v")
		switch {
		case strings.HasPrefix(t, "--") || lex.HashComments && strings.HasPrefix(t, "#"):
			i := strings.IndexByte(t, '\n')
			if i < 0 {
				return ""
			}
			q = t[i+1:]
		case strings.HasPrefix(t, "/*") && !strings.HasPrefix(t, "/*!") && !strings.HasPrefix(t, "/*M!"):
			i := strings.Index(t[2:], "*/")
			if i < 0 {
				return ""
			}
			q = t[2+i+2:]
		default:
			return t
		}
	}
}

// TestCheckQueryReadsAsTheEngine: the first token is found as the engine
// reads comments: nested on PostgreSQL and ClickHouse, "--" a comment on
// MySQL only before a space.
func TestCheckQueryReadsAsTheEngine(t *testing.T) {
	for _, c := range []struct {
		e  engine.Engine
		q  string
		ok bool
	}{
		{engine.PostgreSQL, "/* a /* b */ DROP TABLE t */ SELECT 1", true},
		{engine.ClickHouse, "/* a /* b */ DROP TABLE t */ SELECT 1", true},
		{engine.SQLite, "/* a /* b */ DROP TABLE t */ SELECT 1", false},
		{engine.PostgreSQL, "/* a /* b */ SELECT 1", false}, // the comment is left open
		{engine.SQLite, "/* a /* b */ SELECT 1", true},
		{engine.MySQL, "--x\nSELECT 1", false}, // minus, minus, x
		{engine.MySQL, "-- x\nSELECT 1", true},
		{engine.MySQL, "/*+ hint */ SELECT 1", true},
		{engine.MySQL, "/*!50000 DROP TABLE t */ SELECT 1", false},
		{engine.SQLite, "select1", false},
		{engine.SQLite, "(SELECT 1)", true},
		{engine.SQLite, "SeLeCt 1", true},
		{engine.SQLite, "WiTh a AS (SELECT 1) SELECT * FROM a", true},
		{engine.SQLite, "VALUES (1)", true},
		{engine.SQLite, "\u017felect 1", false}, // ſ folds to s in Unicode, not in SQL
		{engine.SQLite, "selec 1", false},
		{engine.SQLite, "selectt 1", false},
	} {
		err := checkQuery(c.e.Lexical(), c.q)
		assert.Equal(t, c.ok, err == nil, "%s: checkQuery(%q) = %v", c.e.Name(), c.q, err)
	}
}

// TestCheckQueryAllocatesNothing: the check every run makes of its text
// costs no allocation, whatever the case of its first word.
func TestCheckQueryAllocatesNothing(t *testing.T) {
	lex := engine.SQLite.Lexical()
	for _, q := range []string{"SELECT 1", "/* c */ With a AS (SELECT 1) SELECT * FROM a", "VALUES (1)"} {
		require.NoError(t, checkQuery(lex, q), "checkQuery(%q)", q)
		n := testing.AllocsPerRun(100, func() { _ = checkQuery(lex, q) })
		assert.Zero(t, n, "checkQuery(%q) allocates", q)
	}
}
