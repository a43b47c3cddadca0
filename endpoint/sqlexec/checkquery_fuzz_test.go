package sqlexec

import (
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/engine"
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
			if !strings.HasPrefix(head, "select") && !strings.HasPrefix(head, "with") && !strings.HasPrefix(head, "values") && !strings.HasPrefix(head, "(") {
				t.Fatalf("accepted %q, which begins %q", q, head[:min(len(head), 20)])
			}
			if checkQuery(lex, "/* c */\n -- d\n"+q) != nil {
				t.Fatalf("a comment before %q got it refused", q)
			}
			if checkQuery(lex, "DELETE FROM t; "+q) == nil {
				t.Fatalf("a DELETE before %q passed", q)
			}
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
