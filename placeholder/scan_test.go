package placeholder

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ph abbreviates a placeholder in the tables below.
func ph(name string, start, end, line, col int, inList bool) Placeholder {
	return Placeholder{Name: name, Start: start, End: end, Line: line, Column: col, InList: inList}
}

func TestScanFinds(t *testing.T) {
	tests := []struct {
		name string
		sql  string
		want []Placeholder
	}{
		{"none", "SELECT 1", nil},
		{"empty", "", nil},
		{"one", "a = {variables.x}", []Placeholder{ph("x", 4, 17, 1, 5, false)}},
		{"spaces inside", "a = { variables.x }", []Placeholder{ph("x", 4, 19, 1, 5, false)}},
		{"spaces around dot", "{variables . x}", []Placeholder{ph("x", 0, 15, 1, 1, false)}},
		{"tabs and newlines inside", "{\tvariables.x\n}", []Placeholder{ph("x", 0, 15, 1, 1, false)}},
		{"underscore and digits", "{variables._a1_B2}", []Placeholder{ph("_a1_B2", 0, 18, 1, 1, false)}},
		{"two on two lines", "a = {variables.a}\n  AND b = {variables.b}", []Placeholder{
			ph("a", 4, 17, 1, 5, false), ph("b", 28, 41, 2, 11, false)}},
		{"same twice", "{variables.a}+{variables.a}", []Placeholder{
			ph("a", 0, 13, 1, 1, false), ph("a", 14, 27, 1, 15, false)}},
		{"adjacent", "{variables.a}{variables.b}", []Placeholder{
			ph("a", 0, 13, 1, 1, false), ph("b", 13, 26, 1, 14, false)}},
		{"column counts runes", "'é' = {variables.x}", []Placeholder{ph("x", 7, 20, 1, 7, false)}},
		{"column after CRLF", "a\r\n{variables.x}", []Placeholder{ph("x", 3, 16, 2, 1, false)}},
		{"followed by identifier", "{variables.a}0", []Placeholder{ph("a", 0, 13, 1, 1, false)}},
		{"inside a brace", "{{variables.a}}", []Placeholder{ph("a", 1, 14, 1, 2, false)}},

		// Skipped text.
		{"single-quoted literal", "'{variables.a}' = {variables.b}", []Placeholder{ph("b", 18, 31, 1, 19, false)}},
		{"doubled quote", "'it''s {variables.a}' = {variables.b}", []Placeholder{ph("b", 24, 37, 1, 25, false)}},
		{"backslash quote", `'it\'s {variables.a}' = {variables.b}`, []Placeholder{ph("b", 24, 37, 1, 25, false)}},
		{"escaped backslash ends literal", `'a\\' = {variables.b}`, []Placeholder{ph("b", 8, 21, 1, 9, false)}},
		{"double-quoted identifier", `"{variables.a}" = {variables.b}`, []Placeholder{ph("b", 18, 31, 1, 19, false)}},
		{"doubled double quote", `"a""{variables.a}" = {variables.b}`, []Placeholder{ph("b", 21, 34, 1, 22, false)}},
		{"backslash in identifier does not escape", `"a\" = {variables.b}`, []Placeholder{ph("b", 7, 20, 1, 8, false)}},
		{"backtick identifier", "`{variables.a}` = {variables.b}", []Placeholder{ph("b", 18, 31, 1, 19, false)}},
		{"doubled backtick", "`a``{variables.a}` = {variables.b}", []Placeholder{ph("b", 21, 34, 1, 22, false)}},
		{"line comment", "-- {variables.a}\n{variables.b}", []Placeholder{ph("b", 17, 30, 2, 1, false)}},
		{"line comment at end", "{variables.b} -- {variables.a}", []Placeholder{ph("b", 0, 13, 1, 1, false)}},
		{"block comment", "/* {variables.a}\n */ {variables.b}", []Placeholder{ph("b", 21, 34, 2, 5, false)}},
		{"quote inside comment", "/* it's */ {variables.b}", []Placeholder{ph("b", 11, 24, 1, 12, false)}},
		{"comment marks inside literal", "'--' = {variables.b}", []Placeholder{ph("b", 7, 20, 1, 8, false)}},
		{"single minus is not a comment", "1 - {variables.b}", []Placeholder{ph("b", 4, 17, 1, 5, false)}},
		{"slash is not a comment", "1 / {variables.b}", []Placeholder{ph("b", 4, 17, 1, 5, false)}},

		// Braces that are not placeholders.
		{"json", `SELECT '{"a": 1}', {"a": 1}`, nil},
		{"clickhouse parameter", "WHERE a = {p:String}", nil},
		{"variables alone", "{variables}", nil},
		{"variables with colon", "{variables:String}", nil},
		{"longer word", "{variablesx.a}", nil},
		{"upper case", "{Variables.a}", nil},
		{"other prefix", "{vars.a}", nil},
		{"lone brace", "{", nil},
		{"brace and spaces at end", "{  ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Scan(tt.sql)
			require.NoError(t, err)
			if tt.want == nil {
				v := got
				assert.True(t, (len(v) == 0), "got = %v, want it empty", v)
				return
			}
			assert.Equal(t, tt.want, got)
			for _, p := range got {
				text := tt.sql[p.Start:p.End]
				assert.True(t, (strings.HasPrefix(text, "{") && strings.HasSuffix(text, "}")), "%v: (strings.HasPrefix(text, \"{\") && strings.HasSuffix(text, \"}\")) is false", text)
			}
		})
	}
}

func TestScanInList(t *testing.T) {
	tests := []struct {
		sql    string
		inList bool
		parens bool
	}{
		{"a IN {variables.x}", true, true},
		{"a in {variables.x}", true, true},
		{"a NOT IN {variables.x}", true, true},
		{"a IN{variables.x}", true, true},
		{"a IN /* c */ -- c\n {variables.x}", true, true},
		{"a IN ({variables.x})", true, false},
		{"a IN( {variables.x} )", true, false},
		{"a IN ( /* c */ {variables.x} -- c\n)", true, false},
		{"a IN (\n{variables.x}\n)", true, false},

		{"a = {variables.x}", false, false},
		{"a IN ('b', {variables.x})", false, false},
		{"a IN ({variables.x}, 'b')", false, false},
		{"a IN ({variables.x} || 'b')", false, false},
		{"a IN (({variables.x}))", false, false},
		{"a IN ({variables.x}", false, false},
		{"a INX {variables.x}", false, false},
		{"a XIN {variables.x}", false, false},
		{"a 'IN' {variables.x}", false, false},
		{`a "IN" {variables.x}`, false, false},
		{"a IN /* ( */ {variables.x}", true, true},
		{"-- IN\n{variables.x}", false, false},
		{"concat(IN, ({variables.x}))", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			var parens []bool
			found, err := scan(anyReading, tt.sql, &parens, nil, nil)
			require.NoError(t, err)
			require.Len(t, found, 1)
			require.Len(t, parens, 1)
			got, want := found[0].InList, tt.inList
			assert.Equal(t, want, got, "InList: found[0].InList")
			if got, want := parens[0], tt.parens; got != want {
				t.Errorf("parens: parens[0] = %v, want %v", got, want)
			}
		})
	}
}

func TestScanErrors(t *testing.T) {
	tests := []struct {
		name      string
		sql       string
		line, col int
		offset    int
		msg       string
	}{
		{"empty code name", "a = {variables.}", 1, 16, 15, `missing code name after "variables."`},
		{"empty code name with spaces", "{ variables. }", 1, 14, 13, "missing code name"},
		{"digit first", "{ variables.1a }", 1, 13, 12, "must start with a letter or underscore, found '1'"},
		{"space in code name", "{variables.a b}", 1, 14, 13, `unexpected 'b' after code name "a": expected '}'`},
		{"dash in code name", "{variables.a-b}", 1, 13, 12, `unexpected '-' after code name "a"`},
		{"dot in code name", "{variables.a.b}", 1, 13, 12, `unexpected '.' after code name "a"`},
		{"unicode in code name", "{variables.café}", 1, 15, 14, `unexpected 'é' after code name "caf"`},
		{"unicode first", "{variables.é}", 1, 12, 11, `expected a code name after "variables.", found 'é'`},
		{"brace inside", "{variables.{a}}", 1, 12, 11, `found '{'`},
		{"unterminated at end", "SELECT {variables.a", 1, 8, 7, "{variables.a is never closed"},
		{"unterminated with space", "SELECT {variables.a  ", 1, 8, 7, "never closed"},
		{"unterminated after dot", "x\n  {variables.", 2, 3, 4, "placeholder is never closed"},
		{"unterminated before next line", "a = {variables.a\nAND b = 1", 2, 1, 17, `unexpected 'A' after code name "a"`},
		{"unterminated literal", "a = 'abc", 1, 5, 4, "string literal starting with ' is never closed"},
		{"literal ending in backslash", `a = 'C:\' AND {variables.a}`, 1, 5, 4, "string literal"},
		{"unterminated identifier", "a = \"abc", 1, 5, 4, `quoted identifier starting with " is never closed`},
		{"unterminated backtick", "a = `abc", 1, 5, 4, "quoted identifier starting with ` is never closed"},
		{"unterminated block comment", "a\n  /* abc", 2, 3, 4, "block comment /* is never closed"},
		{"column in runes", "'ééé' {variables.}", 1, 18, 20, "missing code name"},
		{"third line", "SELECT 1\nFROM t\nWHERE {variables.1}", 3, 18, 33, "must start with a letter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Scan(tt.sql)
			assert.Nil(t, got)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrSyntax)
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			if got, want := se.Line, tt.line; got != want {
				t.Errorf("line: se.Line = %v, want %v", got, want)
			}
			if got, want := se.Column, tt.col; got != want {
				t.Errorf("column: se.Column = %v, want %v", got, want)
			}
			if got, want := se.Offset, tt.offset; got != want {
				t.Errorf("offset: se.Offset = %v, want %v", got, want)
			}
			assert.Contains(t, se.Msg, tt.msg)
		})
	}
}

// TestScanPositionsMatchOffsets checks Line and Column against a plain
// recount from the offset, over text with multi-byte and invalid UTF-8.
func TestScanPositionsMatchOffsets(t *testing.T) {
	sql := "SELECT 'ü\xff' AS x,\n\t\"日本\" = {variables.a} /* ✓\n */ AND\xc3 b = { variables.b }\n{variables.c}"
	got, err := Scan(sql)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for _, p := range got {
		line, col := recount(sql, p.Start)
		got, want := p.Line, line
		assert.Equal(t, want, got, "%v: p.Line", p.Name)
		if got, want := p.Column, col; got != want {
			t.Errorf("%v: p.Column = %v, want %v", p.Name, got, want)
		}
	}
}

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

// addSeeds adds fuzzSeeds and a fuzz test's own seeds to its corpus.
func addSeeds(f *testing.F, own ...string) {
	for _, s := range append(fuzzSeeds[:len(fuzzSeeds):len(fuzzSeeds)], own...) {
		f.Add(s)
	}
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
	addSeeds(f, "SELECT 1; -- x\n;", "SELECT ';' ; SELECT 2", "SELECT `a;` /* ; */ FROM \"t;\";")
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

// benchScanSQL is a 20-line query with 6 placeholders, among literals,
// quoted identifiers and comments that the scanner must skip.
const benchScanSQL = `-- Daily purchases per country, for the dashboard
SELECT
    date(timestamp) AS day,
    json_extract(properties, '$.country') AS "country",
    count(*) AS purchases,
    sum(json_extract(properties, '$.amount')) AS revenue
FROM events
WHERE event = {variables.event}
  AND timestamp >= {variables.since}
  AND timestamp < { variables.until }
  /* the plan filter is optional in the UI: '{variables.ignored}' */
  AND json_extract(properties, '$.plan') IN {variables.plans}
  AND json_extract(properties, '$.country') <> 'it''s {not a placeholder}'
  AND json_extract(properties, '$.amount') >= {variables.min_amount}
  AND distinct_id NOT IN (SELECT distinct_id FROM "blocked users")
  AND json_extract(properties, '$.browser') = {variables.browser}
GROUP BY 1, 2
HAVING count(*) > 0
ORDER BY 1, 2
LIMIT 1000`

func BenchmarkScan(b *testing.B) {
	phs, err := Scan(benchScanSQL)
	require.NoError(b, err, "want 6 placeholders")
	require.Len(b, phs, 6, "want 6 placeholders")
	b.SetBytes(int64(len(benchScanSQL)))
	b.ReportAllocs()
	for b.Loop() {
		_, err := Scan(benchScanSQL)
		require.NoError(b, err)
	}
}

// BenchmarkScan2K scans the 2 KB query that sql/sqltoken's
// BenchmarkTokens2K reads, to compare the scanners on the same text.
func BenchmarkScan2K(b *testing.B) {
	data, err := os.ReadFile("../sql/sqltoken/testdata/bench2k.sql")
	require.NoError(b, err)
	src := string(data)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		_, err := Scan(src)
		require.NoError(b, err)
	}
}
