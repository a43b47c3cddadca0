package placeholder

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

var fuzzSeeds = []string{
	"",
	"SELECT 1",
	"a = {variables.x}",
	"a = { variables . x }",
	"{variables.a}{variables.b}0",
	"x{variables.a}",
	"a IN {variables.l} AND b IN ( {variables.l} ) AND c IN ({variables.l}, 1)",
	"'{variables.a}' \"{variables.b}\" `{variables.c}` -- {variables.d}\n/* {variables.e} */ {variables.f}",
	"'it''s \\' {variables.a}' = {variables.b}",
	"{variables.}", "{variables.1a}", "{variables.a b}", "{variables.a", "{ variables.",
	"'open", "\"open", "`open", "/* open", "/*/ {variables.a}",
	`{"json": {"variables": 1}}`, "{p:String}", "{variables:String}", "{variables}",
	"'é' = {variables.é}", "a\xff{variables.x}\xc3", "a IN -- c\n{variables.l}",
	"{{variables.a}variables.b}", "-{variables.a}-", "/{variables.a}*",
}

// refCode is a deliberately plain reference tokenizer: it marks the bytes
// of s that are SQL code, outside literals, quoted identifiers and
// comments, and reports whether everything opened was closed.
func refCode(s string) (code []bool, closed bool) {
	const (
		normal = iota
		single
		double
		backtick
		line
		block
	)
	code = make([]bool, len(s))
	state := normal
	next := func(i int) byte {
		if i+1 < len(s) {
			return s[i+1]
		}
		return 0
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch state {
		case normal:
			switch {
			case c == '\'':
				state = single
			case c == '"':
				state = double
			case c == '`':
				state = backtick
			case c == '-' && next(i) == '-':
				state, i = line, i+1
			case c == '/' && next(i) == '*':
				state, i = block, i+1
			default:
				code[i] = true
			}
		case single:
			if c == '\\' {
				i++
			} else if c == '\'' && next(i) == '\'' {
				i++
			} else if c == '\'' {
				state = normal
			}
		case double, backtick:
			q := byte('"')
			if state == backtick {
				q = '`'
			}
			if c == q && next(i) == q {
				i++
			} else if c == q {
				state = normal
			}
		case line:
			if c == '\n' {
				state = normal
			}
		case block:
			if c == '*' && next(i) == '/' {
				state, i = normal, i+1
			}
		}
	}
	return code, state == normal || state == line
}

const ws = `[ \t\n\v\f\r]*`

var (
	wholePlaceholder = regexp.MustCompile(`^\{` + ws + `variables` + ws + `\.` + ws + `([A-Za-z_][A-Za-z0-9_]*)` + ws + `\}$`)
	anyPlaceholder   = regexp.MustCompile(`\{` + ws + `variables` + ws + `\.` + ws + `[A-Za-z_][A-Za-z0-9_]*` + ws + `\}`)
	placeholderStart = regexp.MustCompile(`^\{` + ws + `variables` + ws + `\.`)
)

func allCode(code []bool, start, end int) bool {
	for i := start; i < end; i++ {
		if !code[i] {
			return false
		}
	}
	return true
}

// checkScan holds Scan's answer on s to the reference tokenizer.
func checkScan(t *testing.T, s string) {
	got, err := Scan(s)
	code, closed := refCode(s)
	if err != nil {
		var se *SyntaxError
		require.ErrorAs(t, err, &se, "Scan(%q)", s)
		require.ErrorIs(t, err, ErrSyntax, "Scan(%q)", s)
		require.GreaterOrEqual(t, se.Offset, 0, "Scan(%q): offset", s)
		require.LessOrEqual(t, se.Offset, len(s), "Scan(%q): offset", s)
		line, col := recount(s, se.Offset)
		require.Equal(t, se.Line, line, "Scan(%q): error at line %d, column %d; offset %d is line %d, column %d", s, se.Line, se.Column, se.Offset, line, col)
		require.Equal(t, se.Column, col, "Scan(%q): error at line %d, column %d; offset %d is line %d, column %d", s, se.Line, se.Column, se.Offset, line, col)
		return
	}
	require.True(t, closed, "Scan(%q) succeeded, yet a quote or comment is left open", s)
	starts := map[int]bool{}
	prevEnd := 0
	for _, p := range got {
		require.GreaterOrEqual(t, p.Start, prevEnd, "Scan(%q): bad span %+v", s, p)
		require.Greater(t, p.End, p.Start, "Scan(%q): bad span %+v", s, p)
		require.LessOrEqual(t, p.End, len(s), "Scan(%q): bad span %+v", s, p)
		prevEnd = p.End
		require.True(t, allCode(code, p.Start, p.End), "Scan(%q): %+v lies inside a quote or comment", s, p)
		m := wholePlaceholder.FindStringSubmatch(s[p.Start:p.End])
		require.NotNil(t, m, "Scan(%q): %+v spans %q", s, p, s[p.Start:p.End])
		require.Equal(t, p.Name, m[1], "Scan(%q): %+v spans %q", s, p, s[p.Start:p.End])
		line, col := recount(s, p.Start)
		require.Equal(t, p.Line, line, "Scan(%q): %+v, expected line", s, p)
		require.Equal(t, p.Column, col, "Scan(%q): %+v, expected line", s, p)
		starts[p.Start] = true
	}
	// Nothing that starts like a placeholder in code is passed over: it is
	// either found or Scan fails.
	for i := 0; i < len(s); i++ {
		if s[i] == '{' && code[i] && placeholderStart.MatchString(s[i:]) && !starts[i] {
			t.Fatalf("Scan(%q): the placeholder-like text at %d was neither found nor reported", s, i)
		}
	}
	for _, loc := range anyPlaceholder.FindAllStringIndex(s, -1) {
		if allCode(code, loc[0], loc[1]) && !starts[loc[0]] {
			t.Fatalf("Scan(%q): missed %q at %d", s, s[loc[0]:loc[1]], loc[0])
		}
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range []string{"SELECT 1; -- x\n;", "SELECT ';' ; SELECT 2", "SELECT `a;` /* ; */ FROM \"t;\";"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkScan(t, s)
		checkStatement(t, s)
		checkScanFor(t, s)
	})
}

// checkScanFor: each engine's reading finds, where the tokenizer finds
// nothing another engine reads differently, what Scan finds; and every
// placeholder-like text it leaves inside a literal or comment is in Inert.
func checkScanFor(t *testing.T, s string) {
	want, werr := Scan(s)
	for _, e := range engine.All() {
		tmpl, err := CompileFor(e.Lexical(), s)
		if err != nil {
			require.ErrorIs(t, err, ErrSyntax, "%s: CompileFor(%q)", e.Name(), s)
			continue
		}
		got := tmpl.Placeholders()
		if ambiguous(e.Lexical(), s) {
			continue
		}
		require.NoError(t, werr, "%s: CompileFor(%q) finds %v, Scan %v (%v)", e.Name(), s, got, want, werr)
		require.Len(t, got, len(want), "%s: CompileFor(%q) finds %v, Scan %v (%v)", e.Name(), s, got, want, werr)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: CompileFor(%q) finds %v, Scan %v", e.Name(), s, got, want)
			}
		}
		for _, p := range tmpl.Inert() {
			if p.Name != "" && !strings.HasPrefix(s[p.Start:], "{") {
				t.Fatalf("%s: inert placeholder %+v of %q does not start with '{'", e.Name(), p, s)
			}
		}
	}
}

func FuzzRender(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, "v'; DROP TABLE t; --", i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, s, value string, lists bool) {
		tpl, err := Compile(s)
		if err != nil {
			return
		}
		inList := map[string]bool{}
		for _, p := range tpl.Placeholders() {
			if _, seen := inList[p.Name]; !seen {
				inList[p.Name] = true
			}
			inList[p.Name] = inList[p.Name] && p.InList
		}
		valuesOf := func(v string) map[string]any {
			values := map[string]any{}
			for name, ok := range inList {
				if lists && ok {
					values[name] = []string{v, v + "'"}
				} else {
					values[name] = v
				}
			}
			return values
		}
		for _, d := range engine.All() {
			query, args, err := tpl.Render(d, valuesOf(value))
			require.NoError(t, err, "Render(%s, %q)", d.Name(), s)
			again, err := Scan(query)
			require.NoError(t, err, "Scan of %s rendering %q", d.Name(), query)
			require.Empty(t, again, "%s rendering %q still holds", d.Name(), query)
			if (len(args) == 0) != (len(tpl.Placeholders()) == 0) {
				t.Fatalf("%s rendering of %q: %d arguments for %d placeholders", d.Name(), s, len(args), len(tpl.Placeholders()))
			}
			// The text never depends on the values, only the arguments do.
			other, _, err := tpl.Render(d, valuesOf(value+"\x00'\"`"))
			require.NoError(t, err, "%s: the rendered text changed with the", d.Name())
			require.Equal(t, query, other, "%s: the rendered text changed with the", d.Name())
		}
	})
}

// FuzzAppendString checks on engine.SQLite that a literal written by
// AppendString reads back as the string itself.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a", "it's", `\'`, "''", "é’", "a\nb"} {
		f.Add(s)
	}
	db := testdb.SQLite(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return // SQL text cannot carry these; values are bound instead.
		}
		var got string
		query := "SELECT " + string(engine.SQLite.AppendString(nil, s))
		require.NoError(t, db.QueryRowContext(context.Background(), query).Scan(&got), "%q", query)
		require.Equal(t, s, got)
	})
}
