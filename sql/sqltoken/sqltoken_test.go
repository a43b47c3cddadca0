package sqltoken

import (
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
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
