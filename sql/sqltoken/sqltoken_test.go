package sqltoken

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// show writes the tokens of src one a line: a letter for the kind, the
// text, then ~reason for an ambiguous token, ! for Unclosed, ? for
// Malformed and @ for HoldsPlaceholder.
func show(lx engine.Lexical, src string) string {
	var b strings.Builder
	for i, t := range Tokens(lx, src) {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteByte("-wqsnpbco"[t.Kind])
		b.WriteByte(' ')
		b.WriteString(t.Text(src))
		if t.Why != None {
			b.WriteString(" ~" + t.Why.String())
		}
		if t.Is(Unclosed) {
			b.WriteString(" !")
		}
		if t.Is(Malformed) {
			b.WriteString(" ?")
		}
		if t.Is(HoldsPlaceholder) {
			b.WriteString(" @")
		}
	}
	return b.String()
}

type tokenCase struct{ src, want string }

func runCases(t *testing.T, e engine.Engine, cases []tokenCase) {
	t.Helper()
	for _, c := range cases {
		assert.Equal(t, c.want, show(e.Lexical(), c.src), "%s: %q", e.Name(), c.src)
	}
}

// common holds what every engine reads alike.
var common = []tokenCase{
	{"SELECT a, b2 FROM t", "w SELECT | w a | o , | w b2 | w FROM | w t"},
	{"x = 'it''s'", "w x | o = | s 'it''s'"},
	{"a >= 1.5e-3 AND b < .5", "w a | o > | o = | n 1.5e-3 | w AND | w b | o < | n .5"},
	{"t.1", "w t | o . | n 1"},
	{"f(x).5", "w f | o ( | w x | o ) | o . | n 5"},
	{"a$b", "w a$b"},
	{"-- note\nSELECT 1", "c -- note | w SELECT | n 1"},
	{"/* a */ 1 /* b", "c /* a */ | n 1 | c /* b !"},
	{"x = {variables.a} AND y IN { variables . b_2 }", "w x | o = | p {variables.a} | w AND | w y | w IN | p { variables . b_2 }"},
	{"{variables.1a}", "p { ? | w variables | o . | n 1 ~number run | w a | o } ~brace"},
	{"{variables}", "o { ~brace | w variables | o } ~brace"},
	{"{variablesx.a}", "o { ~brace | w variablesx | o . | w a | o } ~brace"},
	{"'{variables.a}' -- {variables.b}", "s '{variables.a}' @ | c -- {variables.b} @"},
	{"x::text", "w x | o : | o : | w text"},
	{"a = ? AND b = ?2 AND c = :name", "w a | o = | b ? | w AND | w b | o = | b ?2 | w AND | w c | o = | b :name"},
	{"@v + @@x", "b @v ~at | o + | o @ ~at | o @ | w x"},
	{"a ::b", "w a | o : | o : | w b"},
	{"$1 + $a + $", "b $1 ~dollar | o + | b $a ~dollar | o + | o $ ~dollar"},
	{"1from", "n 1 ~number run | w from"},
	{"a#b", "w a | o # ~hash | w b"},
	{"x\\y", "w x | o \\ ~character | w y"},
	{"'abc", "s 'abc !"},
	{"--x", "c --x ~dash comment"},
	{"-- a\rb\nc", "c -- a\rb ~carriage return | w c"},
	{"-- a\r\nc", "c -- a\r | w c"},
	{"/*! code */ /*+ hint */", "c /*! code */ ~executable comment | c /*+ hint */ ~executable comment"},
}

func TestSQLite(t *testing.T) {
	runCases(t, engine.SQLite, common)
	runCases(t, engine.SQLite, []tokenCase{
		// The query: no backslash escapes on SQLite.
		{`SELECT 'C:\' || 'x' AS p FROM events`, `w SELECT | s 'C:\' ~backslash | o | | o | | s 'x' | w AS | w p | w FROM | w events`},
		{`'a\'`, `s 'a\' ~backslash`},
		{`'a\\b'`, `s 'a\\b'`},
		{`"a b" + ` + "`c`" + ` + [d e]`, "q \"a b\" | o + | q `c` | o + | q [d e]"},
		{`[a'b]`, `q [a'b] ~bracket`},
		{"[a", "q [a ~bracket !"},
		{"$$x$$", "b $$x$$ ~dollar"},
		{"/* a /* b */ c */", "c /* a /* b */ ~nested comment | w c | o * | o /"},
		{"E'a\\'b'", `w E | s 'a\' ~backslash | w b | s ' !`},
		{"naïve", "w naïve ~non-ASCII"},
		{"x[1]", "w x | q [1]"},
		{"# c", "o # ~hash | w c"},
		{"-- a\rb", "c -- a\rb ~carriage return"},
		{"--1", "c --1 ~dash comment"},
		{"1x", "n 1 ~number run | w x"},
		{"a\x01", "w a | o \x01 ~character"},
	})
}

func TestPostgreSQL(t *testing.T) {
	runCases(t, engine.PostgreSQL, common[:20]) // up to the carriage return
	runCases(t, engine.PostgreSQL, []tokenCase{
		{`SELECT 'C:\' || 'x'`, `w SELECT | s 'C:\' ~backslash | o | | o | | s 'x'`},
		{`E'a\'b' || e'\\'`, `s E'a\'b' ~backslash | o | | o | | s e'\\'`},
		{`"a""b"`, `q "a""b"`},
		{"`a`", "o ` ~character | w a | o ` ~character"},
		{"[a]", "o [ | w a | o ]"},
		{"$$it's$$ || $tag$a $$ b$tag$", "s $$it's$$ ~dollar | o | | o | | s $tag$a $$ b$tag$ ~dollar"},
		{"$q$ {variables.x} $q$", "s $q$ {variables.x} $q$ ~dollar @"},
		{"$x$never", "s $x$never ~dollar !"},
		{"$1 + a$1$", "b $1 ~dollar | o + | w a$1$"},
		{"/* a /* b */ c */ d", "c /* a /* b */ c */ ~nested comment | w d"},
		{"/* a /* b */", "c /* a /* b */ ~nested comment !"},
		{"-- a\rb", "c -- a ~carriage return | w b"},
		{"-- a\r\nb", "c -- a | w b"},
		{"x[1]", "w x | o [ | n 1 | o ]"},
		{"naïve", "w naïve ~non-ASCII"},
		{"--1", "c --1 ~dash comment"},
	})
}

func TestMySQL(t *testing.T) {
	runCases(t, engine.MySQL, common[:9])
	runCases(t, engine.MySQL, common[10:17]) // up to 1from
	runCases(t, engine.MySQL, []tokenCase{
		{"{variables.1a}", "p { ? | w variables | o . | w 1a ~number run | o } ~brace"},
		{`SELECT 'C:\' || 'x'`, `w SELECT | s 'C:\' || ' ~backslash | w x | s ' !`},
		{`'C:\\' || 'x'`, `s 'C:\\' | o | | o | | s 'x'`},
		{`"a\"b" + ` + "`c\\`", "s \"a\\\"b\" ~backslash | o + | q `c\\` ~backslash"},
		{"# {variables.x}\nSELECT 1", "c # {variables.x} ~hash @ | w SELECT | n 1"},
		{"1-- 2", "n 1 | c -- 2"},
		{"1--2", "n 1 | o - ~dash comment | o - | n 2"},
		{"1--\t2", "n 1 | c --\t2"},
		{"x[1]", "w x | o [ | n 1 | o ]"},
		{"--", "c --"},
		{"1x + 1.5x + 12", "w 1x ~number run | o + | n 1.5 ~number run | w x | o + | n 12"},
		{"$a + $1", "b $a ~dollar | o + | b $1 ~dollar"},
		{"/* a /* b */ c", "c /* a /* b */ ~nested comment | w c"},
		{"naïve", "w naïve ~non-ASCII"},
		{"[a]", "o [ | w a | o ]"},
	})
}

func TestClickHouse(t *testing.T) {
	runCases(t, engine.ClickHouse, common[:19])
	runCases(t, engine.ClickHouse, common[20:]) // '#' is a comment there
	runCases(t, engine.ClickHouse, []tokenCase{
		{`SELECT 'C:\' || 'x'`, `w SELECT | s 'C:\' || ' ~backslash | w x | s ' !`},
		{`replaceRegexpOne(r, '^https?://(?:www\.)?([^/]+)/.*$', '\1')`, `w replaceRegexpOne | o ( | w r | o , | s '^https?://(?:www\.)?([^/]+)/.*$' | o , | s '\1' | o )`},
		{"`a\\`b` + \"c\\\"d\"", "q `a\\`b` ~backslash | o + | q \"c\\\"d\" ~backslash"},
		{"$$x$$ + $h$ a $h$", "s $$x$$ ~dollar | o + | s $h$ a $h$ ~dollar"},
		{"/* a /* b */ c */ d", "c /* a /* b */ c */ ~nested comment | w d"},
		{"naïve", "w na | o ï ~non-ASCII | w ve"},
		{"x[1]", "w x | o [ | n 1 | o ]"},
		{"{name:String}", "o { ~brace | w name | b :String | o } ~brace"},
		{"1 # {variables.x}\n, 2", "n 1 | c # {variables.x} ~hash @ | o , | n 2"},
		{"--x", "c --x ~dash comment"},
	})
}

func TestPlaceholderHelpers(t *testing.T) {
	src := "x = { variables . abc }"
	toks := Tokens(engine.SQLite.Lexical(), src)
	assert.Equal(t, "abc", PlaceholderName(toks[2].Text(src)), "PlaceholderName")
	for _, c := range []struct {
		src  string
		off  int
		want string
	}{
		{"{variables.}", 11, `missing code name after "variables."`},
		{"{variables.1a}", 11, "code name must start with a letter or underscore, found '1'"},
		{"{variables.a b}", 13, `unexpected 'b' after code name "a": expected '}'`},
		{"{variables.a", 0, "placeholder {variables.a is never closed: expected '}'"},
		{"{variables.", 0, "placeholder is never closed: expected a code name and '}'"},
		{"{variables.é}", 11, `expected a code name after "variables.", found 'é'`},
		{"{variables.a}", 0, ""},
	} {
		off, msg := Problem(c.src, 0)
		if off != c.off && c.want != "" || msg != c.want {
			t.Errorf("Problem(%q) = %d, %q; want %d, %q", c.src, off, msg, c.off, c.want)
		}
	}
	src = "'a {variables.x} b {variables.}' {variables.y}"
	toks = Tokens(engine.SQLite.Lexical(), src)
	if got := Placeholders(src, toks[0]); len(got) != 2 || got[0] != 3 || got[1] != 19 {
		t.Errorf("Placeholders = %v, want [3 19]", got)
	}
}

// FuzzTokens checks the tokens of any text against each engine's rules:
// they cover every byte but white space, in order; a closed string ends at
// its engine's first unescaped quote (backslashes escape on MySQL and
// ClickHouse, not on SQLite and PostgreSQL, except in E” there); a
// dollar-quoted string ends with its own tag (PostgreSQL, ClickHouse); a
// block comment ends at the "*/" that closes it, nested ones counted
// (PostgreSQL, ClickHouse) or not; words hold characters outside ASCII
// except on ClickHouse. And where no engine finds a token ambiguous, every
// engine ends its strings, quoted names and comments at the same places:
// what the access checker relies on.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{
		`SELECT 'C:\' || 'x' AS p FROM events`, `E'a\'b'`, `"a\"b"`, "`a\\`b`",
		"$$x$$ $t$ {variables.a} $t$", "/* a /* b */ c */", "-- a\rb\nc", "--x\n#y",
		"naïve = 'é' AND 日本 = 1", "x::text @@ @v :n ?1 $2", "{variables.a} { variables . b }",
		"[a'b] x[1]", "1from 1.5e3x .5", "/*! x */", "'a''b' \"c\"\"d\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkQuoting(t, src)
		var ends [][]int
		allPlain := true
		for _, e := range engine.All() {
			lx := e.Lexical()
			toks := Tokens(lx, src)
			checkCover(t, e.Name(), src, toks)
			var end []int
			for _, tok := range toks {
				checkRules(t, e.Name(), lx, src, tok)
				if tok.Ambiguous() {
					allPlain = false
				}
				if k := literalEnd(src, tok); k >= 0 {
					end = append(end, k)
				}
			}
			ends = append(ends, end)
		}
		if !allPlain {
			return
		}
		for i := 1; i < len(ends); i++ {
			if !slices.Equal(ends[0], ends[i]) {
				t.Fatalf("%q: no token ambiguous, but %s ends its literals and comments at %v and %s at %v",
					src, engine.All()[0].Name(), ends[0], engine.All()[i].Name(), ends[i])
			}
		}
	})
}

// checkCover checks that toks are in order, non-empty, and leave out only
// white space.
func checkCover(t *testing.T, name, src string, toks []Token) {
	at := 0
	for _, tok := range toks {
		require.GreaterOrEqual(t, tok.Start, at, "%s %q: token %+v after offset", name, src, tok)
		require.Greater(t, tok.End, tok.Start, "%s %q: token %+v after offset", name, src, tok)
		require.LessOrEqual(t, tok.End, len(src), "%s %q: token %+v after offset", name, src, tok)
		gap := src[at:tok.Start]
		require.Equal(t, "", strings.TrimLeft(gap, " \t\n\v\f\r"), "%s %q: %q between tokens is not white space", name, src, gap)
		at = tok.End
	}
	gap := src[at:]
	require.Equal(t, "", strings.TrimLeft(gap, " \t\n\v\f\r"), "%s %q: %q after the last token is not white space", name, src, gap)
}

// checkRules checks one token against the engine's rules.
func checkRules(t *testing.T, name string, lx engine.Lexical, src string, tok Token) {
	text := tok.Text(src)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s %q: token %q (%s): "+format, append([]any{name, src, text, tok.Kind}, args...)...)
	}
	closed := !tok.Is(Unclosed)
	switch tok.Kind {
	case String, QuotedName:
		switch {
		case text[0] == '$':
			tag := text[:strings.IndexByte(text[1:], '$')+2]
			if !lx.DollarQuotes || closed && (len(text) < 2*len(tag) || !strings.HasSuffix(text, tag) || strings.Contains(text[len(tag):len(text)-len(tag)], tag)) {
				fail("not a dollar quote closed by its tag %q", tag)
			}
		case text[0] == '[':
			if !lx.BracketNames || strings.Contains(text[:len(text)-1], "]") || closed && !strings.HasSuffix(text, "]") {
				fail("not a bracket name")
			}
		default:
			q, escapes := text[0], lx.BackslashEscapes
			if q == 'E' || q == 'e' {
				text, q, escapes = text[1:], '\'', true
			} else if tok.Kind == QuotedName {
				escapes = lx.NameEscapes
			}
			if closed != quoteClosedAtEnd(text, q, escapes) {
				fail("does not end at its first unescaped quote (escapes %v)", escapes)
			}
		}
	case Comment:
		switch {
		case strings.HasPrefix(text, "/*"):
			if closed && !blockClosedAtEnd(text, lx.NestedComments) {
				fail("does not end where the comment closes (nested %v)", lx.NestedComments)
			}
		case strings.HasPrefix(text, "--") || text[0] == '#' && lx.HashComments:
			if strings.ContainsAny(text, "\n") || lx.ReturnEndsComment && strings.Contains(text, "\r") {
				fail("holds its line's end")
			}
			if tok.End < len(src) && src[tok.End] != '\n' && !(lx.ReturnEndsComment && src[tok.End] == '\r') {
				fail("ends before its line does")
			}
		default:
			fail("is no comment")
		}
	case Word:
		for i := 0; i < len(text); i++ {
			if text[i] >= 0x80 && lx.ASCIIWords {
				fail("holds a character outside ASCII")
			}
		}
		if tok.End < len(src) && (classes[src[tok.End]] == cLetter || classes[src[tok.End]] == cDigit || src[tok.End] >= 0x80 && !lx.ASCIIWords) {
			fail("ends inside a word")
		}
	case Placeholder:
		if !tok.Is(Malformed) && PlaceholderName(text) == "" {
			fail("has no code name")
		}
	}
}

// quoteClosedAtEnd reports whether text, opening with quote q, is closed
// by its last byte and by no byte before it.
func quoteClosedAtEnd(text string, q byte, escapes bool) bool {
	for j := 1; j < len(text); j++ {
		switch {
		case escapes && text[j] == '\\':
			j++
		case text[j] == q && j+1 < len(text) && text[j+1] == q:
			j++
		case text[j] == q:
			return j == len(text)-1
		}
	}
	return false
}

// blockClosedAtEnd reports whether text, a block comment, is closed by
// its last two bytes and not before.
func blockClosedAtEnd(text string, nested bool) bool {
	if !nested {
		return strings.Index(text[2:], "*/") == len(text)-4
	}
	depth := 0
	for j := 0; j+1 < len(text); j++ {
		switch text[j : j+2] {
		case "/*":
			depth++
			j++
		case "*/":
			depth--
			j++
			if depth == 0 {
				return j == len(text)-1
			}
		}
	}
	return false
}

// literalEnd returns where tok ends when it is a string, a quoted name
// (other than SQLite's [...]) or a comment, trailing carriage returns of a
// line comment left out, else -1.
func literalEnd(src string, tok Token) int {
	switch tok.Kind {
	case String, QuotedName:
		if src[tok.Start] != '[' {
			return tok.End
		}
	case Comment:
		end := tok.End
		for end > tok.Start && src[end-1] == '\r' {
			end--
		}
		return end
	}
	return -1
}

// checkQuoting checks that each engine's own quoting of s, as a string
// literal and as a name, reads back as one token of that kind. A name
// holding a backslash is left out where backslashes escape in names
// (ClickHouse): QuoteIdent doubles the quote but not the backslash there,
// so that `a\` reads as left open; the engine package owns that fix.
func checkQuoting(t *testing.T, s string) {
	for _, e := range engine.All() {
		lx := e.Lexical()
		quotings := []struct {
			text string
			kind Kind
		}{{string(e.AppendString(nil, s)), String}}
		if !lx.NameEscapes || !strings.Contains(s, "\\") {
			quotings = append(quotings, struct {
				text string
				kind Kind
			}{e.QuoteIdent(s), QuotedName})
		}
		for _, q := range quotings {
			toks := Tokens(lx, q.text)
			require.Len(t, toks, 1, "%s quotes %q as", e.Name(), s)
			require.Equal(t, q.kind, toks[0].Kind, "%s quotes %q as", e.Name(), s)
			require.Equal(t, 0, toks[0].Start, "%s quotes %q as", e.Name(), s)
			require.Len(t, q.text, toks[0].End, "%s quotes %q as", e.Name(), s)
			require.Equal(t, Flags(0), toks[0].Flags&Unclosed, "%s quotes %q as", e.Name(), s)
		}
	}
}

// BenchmarkTokens2K scans testdata/bench2k.sql, the 2 KB query that the
// benchmarks of the scanners it replaced read too (placeholder's
// BenchmarkScan2K, access's BenchmarkLex2K, endpoint's
// BenchmarkPlainSelect2K).
func BenchmarkTokens2K(b *testing.B) {
	data, err := os.ReadFile("testdata/bench2k.sql")
	require.NoError(b, err)
	src := string(data)
	for _, e := range engine.All() {
		lx := e.Lexical()
		b.Run(e.Name(), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			var s Scanner
			for b.Loop() {
				s.Reset(lx, src)
				for {
					if _, ok := s.Next(); !ok {
						break
					}
				}
			}
		})
	}
	b.Run("slice", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			Tokens(engine.SQLite.Lexical(), src)
		}
	})
}
