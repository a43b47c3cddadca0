package endpoint

import (
	"slices"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/placeholder"
)

func TestStatementBody(t *testing.T) {
	for _, tc := range []struct {
		src, body string
		semi      int
	}{
		{"SELECT 1", "SELECT 1", -1},
		{"SELECT 1;", "SELECT 1", -1},
		{"SELECT 1 ;; \n", "SELECT 1", -1},
		{"SELECT 1 -- trailing; comment", "SELECT 1", -1},
		{"SELECT 1; -- done\n/* really */ ;", "SELECT 1", -1},
		{"SELECT ';' AS s;", "SELECT ';' AS s", -1},
		{"SELECT \"a;b\", `c;d` FROM t", "SELECT \"a;b\", `c;d` FROM t", -1},
		{"SELECT 'it''s;' -- x", "SELECT 'it''s;'", -1},
		{`SELECT 'a\';' FROM t;`, `SELECT 'a\';' FROM t`, -1},
		{"SELECT 1 /* ; */ FROM t", "SELECT 1 /* ; */ FROM t", -1},
		{"SELECT {variables.x};", "SELECT {variables.x}", -1},
		{"SELECT 1; SELECT 2", "SELECT 1; SELECT 2", 8},
		{"SELECT 1;\n-- c\nDROP TABLE t", "SELECT 1;\n-- c\nDROP TABLE t", 8},
		{"", "", -1},
		{"-- only a comment", "", -1},
	} {
		body, semi := statementBody(tc.src)
		if body != tc.body || semi != tc.semi {
			t.Errorf("statementBody(%q) = %q, %d; want %q, %d", tc.src, body, semi, tc.body, tc.semi)
		}
	}
}

func TestPosition(t *testing.T) {
	src := "ab\ncdé;\nx"
	for _, tc := range []struct{ off, line, col int }{
		{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {7, 2, 4}, {9, 3, 1},
	} {
		if l, c := position(src, tc.off); l != tc.line || c != tc.col {
			t.Errorf("position(%d) = %d:%d, want %d:%d", tc.off, l, c, tc.line, tc.col)
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
		body, semi := statementBody(src)
		if !strings.HasPrefix(src, body) {
			t.Fatalf("body %q is not a prefix of %q", body, src)
		}
		if semi >= 0 && (semi >= len(src) || src[semi] != ';') {
			t.Fatalf("semicolon offset %d does not point at ';' in %q", semi, src)
		}
		tmpl, err := placeholder.Compile(src)
		if err != nil {
			return
		}
		c := &compiled{tmpl: tmpl, index: map[string]int{}}
		for i, n := range tmpl.Names() {
			c.index[n] = i
		}
		if err := c.compilePaged(); err != nil {
			if semi < 0 {
				t.Fatalf("compilePaged(%q): %v", src, err)
			}
			return
		}
		want := append(tmpl.Names(), c.limitName, c.offsetName)
		if got := c.paged.Names(); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Fatalf("paged names %v, want %v", got, want)
		}
	})
}
