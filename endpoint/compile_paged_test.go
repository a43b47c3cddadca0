package endpoint

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/scope"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pagedOf compiles src as an endpoint query of engine e without variables
// of its own and pages it.
func pagedOf(t testing.TB, e engine.Engine, src string) (*compiled, error) {
	t.Helper()
	tmpl, err := placeholder.CompileFor(e.Lexical(), src)
	require.NoError(t, err, "Compile(%q)", src)
	c, _, err := compiledOf(tmpl, e)
	return c, err
}

// compiledOf compiles tmpl, a query of engine e without variables, as
// compileSQL does: one statement, scoped (with no policy), paged. It
// returns the scoped template too.
func compiledOf(tmpl *placeholder.Template, e engine.Engine) (*compiled, *scope.Template, error) {
	c := &compiled{tmpl: tmpl, index: map[string]int{}, scope: scope.New(nil, "1", e)}
	for i, n := range tmpl.Names() {
		c.index[n] = i
	}
	if err := singleStatement(tmpl.Statement()); err != nil {
		return c, nil, err
	}
	text, _, err := c.scope.Compile(tmpl.Source())
	if err != nil {
		return c, nil, err
	}
	return c, text, c.compilePaged(text)
}

func TestCompilePaged(t *testing.T) {
	const tail = "\n) AS endpoint_q LIMIT {variables.endpoint_limit} OFFSET {variables.endpoint_offset}"
	const single = "an endpoint runs a single statement; remove the ';' and what follows it."
	for _, tc := range []struct {
		src, body string
		err       string        // the message of the 400, "" for none, "sandbox" for the sandbox's refusal
		e         engine.Engine // nil for SQLite
	}{
		{"SELECT 1", "SELECT 1", "", nil},
		{"SELECT 1;", "SELECT 1", "", nil},
		{"SELECT 1 ;; \n", "SELECT 1", "", nil},
		{"SELECT 1 -- trailing; comment", "SELECT 1", "", nil},
		{"SELECT 1; -- done\n/* really */ ;", "SELECT 1", "", nil},
		{"SELECT ';' AS s;", "SELECT ';' AS s", "", nil},
		{"SELECT \"a;b\", `c;d` FROM t", "SELECT \"a;b\", `c;d` FROM t", "", nil},
		{"SELECT 'it''s;' -- x", "SELECT 'it''s;'", "", nil},
		// The sandbox refuses, before paging, a literal that engines read
		// differently (a backslash before a quote on MySQL).
		{`SELECT 'a\';' FROM t;`, ``, "sandbox", engine.MySQL},
		{`SELECT 'a\'';' FROM t;`, `SELECT 'a\'';' FROM t`, "", nil}, // SQLite: no escapes
		// So are MySQL's '#' comments and PostgreSQL's dollar quotes
		// (placeholder's own tests read them per engine).
		{"SELECT 1 # c; d\nFROM t;", "", "sandbox", engine.MySQL},
		{"SELECT $$;$$ FROM t;", "", "sandbox", engine.PostgreSQL},
		{"SELECT 1 /* ; */ FROM t", "SELECT 1 /* ; */ FROM t", "", nil},
		{"SELECT {variables.x};", "SELECT {variables.x}", "", nil},
		{"SELECT 1 -- c\nFROM t -- d", "SELECT 1 -- c\nFROM t", "", nil},
		{"SELECT 1; SELECT 2", "", "Invalid query at line 1, column 9: " + single, nil},
		{"SELECT 1;\n-- c\nDROP TABLE t", "", "Invalid query at line 1, column 9: " + single, nil},
		{"ab\ncdé;\nx", "", "Invalid query at line 2, column 4: " + single, nil},
		{"-- only a comment", "", "sandbox", nil},
	} {
		e := tc.e
		if e == nil {
			e = engine.SQLite
		}
		c, err := pagedOf(t, e, tc.src)
		var ae *access.Error
		switch {
		case tc.err == "sandbox":
			assert.ErrorAs(t, err, &ae, "compilePaged(%q)", tc.src)
		case tc.err != "":
			var e *Error
			if !errors.As(err, &e) || e.Detail != tc.err || e.Code != CodeInvalidInput || e.Status != 400 {
				t.Errorf("compilePaged(%q) = %v; want a 400 %q", tc.src, err, tc.err)
			}
		case err != nil:
			t.Errorf("compilePaged(%q): %v", tc.src, err)
		default:
			want := "SELECT * FROM (\n" + tc.body + tail
			assert.Equal(t, want, c.paged.Text().Source(), "compilePaged(%q) pages as", tc.src)
		}
	}
}

// FuzzCompilePaged: for any text that compiles as a template, paging either
// refuses it as two statements with a 400 or yields a template with the
// same placeholders plus the two page bounds; never a panic.
func FuzzCompilePaged(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM t WHERE a = {variables.a} -- c",
		"SELECT 1; -- x\n;",
		"SELECT '{variables.a};' ; SELECT 2",
		"SELECT {variables.endpoint_limit} FROM t LIMIT 5",
		"SELECT `a;` /* ; */ FROM \"t;\"",
		"SELECT 'a\\';'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := placeholder.CompileFor(engine.SQLite.Lexical(), src)
		if err != nil {
			return
		}
		st := tmpl.Statement()
		body, semi := st.Body, st.Second
		require.True(t, strings.HasPrefix(src, body), "body %q is not a prefix of %q", body, src)
		if semi >= 0 && (semi >= len(src) || src[semi] != ';') {
			t.Fatalf("semicolon offset %d does not point at ';' in %q", semi, src)
		}
		c, _, err := compiledOf(tmpl, engine.SQLite)
		var ae *access.Error
		switch {
		case errors.As(err, &ae):
			return // the sandbox refuses what it cannot vouch for
		case err != nil:
			require.GreaterOrEqual(t, semi, 0, "compilePaged(%q): %v", src, err)
			return
		}
		want := append(tmpl.Names(), c.limitName, c.offsetName)
		got := c.paged.Text().Names()
		require.True(t, slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))), "paged names %v, want %v", got, want)
	})
}
