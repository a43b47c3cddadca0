package access

import (
	"errors"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLexReadings lists texts the engines read alike (accepted) and texts
// they may read differently (refused as ambiguous), one concern each.
func TestLexReadings(t *testing.T) {
	for _, c := range []struct {
		src string
		ok  bool
	}{
		{`'it''s'`, true},
		{`'a\nb'`, true},  // a backslash not before a quote ends the string at the same place either way
		{`'C:\\'`, true},  // \\ is one escaped backslash or two backslashes: same end
		{`'a\''`, false},  // ends after \' with escapes, at \' without
		{`'a\'`, false},   // closed without escapes, open with them
		{`"a\"b"`, false}, // the same for quoted identifiers (ClickHouse escapes there)
		{"`a\\`", false},  // and backquotes
		{"`a``b`", true},
		{"-- c\nx", true},
		{"--\tc\nx", true},
		{"--", true},
		{"--c\nx", false},   // MySQL: minus minus c
		{"-- c\r\nx", true}, // CR LF ends the comment the same everywhere
		{"-- c\rx", false},  // PostgreSQL ends the comment at CR
		{"/* a */x", true},
		{"/* a /* b */x", false},
		{"/*! a */x", false},
		{"/*M! a */x", false},
		{"/*+ a */x", false},
		{"/* a", false},
		{"# a\nx", false},
		{"$1", false},
		{"$$a$$", false},
		{"@a", false},
		{"@@a", false},
		{"a @> b", true},
		{"a <@ b", true},
		{`\N`, false},
		{"{variables.a}", true},
		{"{ variables . a }", true},
		{"{variables.}", false},
		{"{x:String}", false},
		{"}", false},
		{"x[1]", true},
		{"x[' ]", false},
		{"x[-- ]", false},
		{"x[1", false},
		{"1e5", true},
		{"1.5e-3", true},
		{".5", true},
		{"t.5", true},
		{"1e", false},
		{"0x1F", false},
		{"1from", false},
		{"\u00e9", false},
		{"\"\u00e9\"", true},
		{"a\u00a0b", false},
		{"a\x01b", false},
		{"a\x00b", false},
		{"\xff", false},
	} {
		_, err := lex(c.src)
		assert.Equal(t, c.ok, err == nil, "lex(%q) = %v, want ok=", c.src, err)
		if err != nil && !errors.Is(err, ErrRefused) {
			t.Errorf("lex(%q) error %v does not wrap ErrRefused", c.src, err)
		}
	}
}

func TestLexTokens(t *testing.T) {
	toks, err := lex("SELECT \"a\"\"b\", `c`, 'd', x.y, {variables.v}, 1.5 FROM t -- end")
	require.Nil(t, err)
	want := []struct {
		kind tokKind
		text string
	}{
		{tWord, "SELECT"}, {tQuoted, `a"b`}, {tComma, ","}, {tQuoted, "c"}, {tComma, ","},
		{tString, ""}, {tComma, ","}, {tWord, "x"}, {tDot, "."}, {tWord, "y"}, {tComma, ","},
		{tPlaceholder, "v"}, {tComma, ","}, {tNumber, "1.5"}, {tWord, "FROM"}, {tWord, "t"}, {tEOF, ""},
	}
	require.Len(t, toks, len(want))
	for i, w := range want {
		if assert.Equal(t, w.kind, toks[i].kind, "token %d = %d %q, want %d %q", i, toks[i].kind, toks[i].text, w.kind, w.text) {
			assert.Equal(t, w.text, toks[i].text, "token %d = %d %q, want %d %q", i, toks[i].kind, toks[i].text, w.kind, w.text)
		}
	}
}

// TestCheckForEngines: where an engine's reading of string literals is
// fixed (SQLite never escapes, ClickHouse always does), a literal is read
// as that engine reads it; PostgreSQL and MySQL have settings that change
// it, so there, as for any engine, a backslash before a quote is refused.
// Nothing else is read differently.
func TestCheckForEngines(t *testing.T) {
	const sqliteQuery = `SELECT 'C:\' || 'x' AS p FROM events`
	const clickhouseQuery = `SELECT 'it\'s' AS p FROM events`
	rules := &Rules{Tables: []Table{{Name: "events", TenantColumn: "project_id"}}}
	for _, c := range []struct {
		e     engine.Engine
		query string
		ok    bool
	}{
		{engine.SQLite, sqliteQuery, true},
		{engine.ClickHouse, sqliteQuery, false},
		{engine.PostgreSQL, sqliteQuery, false},
		{engine.MySQL, sqliteQuery, false},
		{engine.ClickHouse, clickhouseQuery, true},
		{engine.SQLite, clickhouseQuery, false},
		{engine.MySQL, clickhouseQuery, false},
		{engine.SQLite, `SELECT "a\" FROM events`, false}, // quoted names are not excused
		{engine.SQLite, `SELECT [a'b] FROM events`, false},
		{engine.SQLite, "SELECT 1 FROM events -- c\rx", false},
		{engine.SQLite, `SELECT 'C:\' FROM events WHERE x = $1`, false},
	} {
		assert.Error(t, Check(c.query, rules), "Check(%q) accepts", c.query)
		err := CheckFor(c.e.Lexical(), c.query, rules)
		assert.Equal(t, c.ok, err == nil, "CheckFor(%s, %q) = %v, want ok=", c.e.Name(), c.query, err)
	}
	out, err := ConfineFor(engine.SQLite.Lexical(), sqliteQuery, rules, "t")
	require.NoError(t, err)
	assert.Equal(t, `SELECT 'C:\' || 'x' AS p FROM (SELECT * FROM events WHERE events.project_id = {variables.t}) AS events`, out, "ConfineFor")
	if _, err := Confine(sqliteQuery, rules, "t"); err == nil {
		t.Error("Confine accepts the SQLite query for any engine")
	}
}
