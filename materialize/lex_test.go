package materialize

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLexTraps(t *testing.T) {
	cases := []struct {
		name  string
		query string
		d     engine.Engine
		trap  string // "" when none
	}{
		{"plain", "SELECT a FROM t WHERE b = 'x'", engine.SQLite, ""},
		// The tree reads literals, quoted names, || and comments as the
		// engine does: none is a trap.
		{"double quotes sqlite", `SELECT "a" FROM t`, engine.SQLite, ""},
		{"double quotes postgres", `SELECT "a" FROM t`, engine.PostgreSQL, ""},
		{"double quotes mysql are strings there too", `SELECT "a" FROM t`, engine.MySQL, ""},
		{"double quote inside a string", `SELECT 'say "hi"' FROM t`, engine.SQLite, ""},
		{"concat", "SELECT a || b FROM t", engine.SQLite, ""},
		{"concat clickhouse", "SELECT a || b FROM t", engine.ClickHouse, ""},
		{"or mysql", "SELECT a || b FROM t", engine.MySQL, ""},
		{"backslash sqlite", `SELECT 'a\n' FROM t`, engine.SQLite, ""},
		{"backslash mysql", `SELECT 'a\'b' FROM t`, engine.MySQL, ""},
		{"mysql comment", "SELECT /*! 1 */ a FROM t", engine.PostgreSQL, "/*!"},
		{"plain comment", "SELECT /* x \" || */ a FROM t -- \"\nWHERE 1", engine.SQLite, ""},
		{"double slash is no comment to the tree either", "SELECT a FROM t WHERE a = 1 // AND b = 2", engine.MySQL, ""},
		{"double slash in a string", "SELECT 'http://x' FROM t", engine.SQLite, ""},
		{"hash is an operator to the tree on SQLite, as to SQLite", "SELECT a FROM t # c", engine.SQLite, ""},
		{"nested comments as the engine nests them", "SELECT a FROM t /* a /* b */ c */", engine.PostgreSQL, ""},
		{"brackets are SQLite's quotes to the tree", "SELECT [a] FROM t", engine.SQLite, ""},
		{"question mark", "SELECT a FROM t WHERE a = ?", engine.SQLite, "bind markers"},
		{"named marker", "SELECT a FROM t WHERE a = :x", engine.SQLite, "bind markers"},
		{"cast is left to the parser", "SELECT a::int FROM t", engine.PostgreSQL, ""},
		{"line and column", "SELECT a\nFROM t WHERE x = 1 AND y = ?", engine.SQLite, "(line 2, column 28)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := lex(c.query, c.d)
			if c.trap == "" {
				v := l.trap
				require.True(t, (v == ""), "l.trap = %v, want it empty", v)
				return
			}
			require.Contains(t, l.trap, c.trap)
		})
	}
}

// TestFormerTrapsReadAsTheEngineReadsThem: the constructs the MySQL
// grammar materialize used to parse with read differently from the engine
// ('#', '//', [name], nested comments, '--' without a space, a carriage
// return in a comment) are no traps since the tree reads each engine's
// text: each is refused for what it is to the engine, or materialized as
// the engine reads it. A MySQL executable comment still is one: the tree
// reads it as a comment, and the printed statements would leave it out.
func TestFormerTrapsReadAsTheEngineReadsThem(t *testing.T) {
	cases := []struct {
		query string
		d     engine.Engine
		// precompute is the stored table's query when the query
		// materializes, "" when it is refused with reason.
		precompute, reason string
	}{
		{"SELECT a FROM t WHERE a = {variables.x} // AND b = 2", engine.MySQL, "", "syntax error at position 43 (line 1, column 42) near '/'"},
		{"SELECT a FROM t WHERE a = {variables.x} # c", engine.SQLite, "", "the operator # cannot be materialized"},
		{"SELECT [a] FROM t WHERE a = {variables.x}", engine.SQLite, `SELECT "a" AS "_c0", "a" AS "x" FROM "t"`, ""},
		{"SELECT a FROM t WHERE a = {variables.x} /* a /* b */ c */", engine.PostgreSQL, `SELECT "a" AS "_c0", "a" AS "x" FROM "t"`, ""},
		{"SELECT a FROM t WHERE a = {variables.x} --x\n AND 1", engine.MySQL, "", "variable 'x' is used inside an expression"},
		{"SELECT a FROM t WHERE a = {variables.x} -- x\r AND 1", engine.PostgreSQL, `SELECT "a" AS "_c0", "a" AS "x" FROM "t" WHERE 1`, ""},
		{"SELECT a FROM t WHERE a = {variables.x} AND b = /*! 1 + */ 2", engine.MySQL, "", "the parser executes MySQL-style /*! comments (line 1, column 49)"},
	}
	for _, c := range cases {
		a, err := Analyze(c.query, Options{Engine: c.d, Types: map[string]variable.Type{"x": variable.String}})
		require.NoError(t, err, c.query)
		if c.reason != "" {
			require.False(t, a.Materializable(), c.query)
			assert.Contains(t, a.Reason(), c.reason, c.query)
			continue
		}
		require.True(t, a.Materializable(), "%s: %s", c.query, a.Reason())
		assert.Equal(t, c.precompute, a.Plan.Precompute(), c.query)
	}
}

func TestLexSelectItems(t *testing.T) {
	cases := []struct {
		query string
		want  []string
	}{
		{"SELECT count( * ), max(a) AS m, b FROM t", []string{"count( * )", "max(a) AS m", "b"}},
		{"select distinct f(a, b),  c\nfrom t", []string{"f(a, b)", "c"}},
		{"SELECT 1 + 2", []string{"1 + 2"}},
		{"SELECT /* x */ a /* y */ , 'a,b' WHERE 1", []string{"a", "'a,b'"}},
		{"UPDATE t SET a = 1", nil},
	}
	for _, c := range cases {
		l := lex(c.query, engine.SQLite)
		var got []string
		for _, s := range l.selectItems() {
			got = append(got, l.span(s[0], s[1]))
		}
		require.Equal(t, c.want, got, "%v", c.query)
	}
}

func TestLineCol(t *testing.T) {
	src := "ab\ncdé\nf"
	for _, c := range []struct{ off, line, col int }{{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {7, 2, 4}, {8, 3, 1}, {99, 3, 2}} {
		line, col := lineCol(src, c.off)
		got, want := ([2]int{line, col}), ([2]int{c.line, c.col})
		require.Equal(t, want, got, "offset %d: ([2]int{line, col})", c.off)
	}
}

// TestLexReadsAsTheEngine: materialize reads the text with the library's
// one tokenizer, as each engine reads it: on SQLite a backslash ends no
// escape, so 'C:\' is a whole literal and the query materializes; on
// MySQL and ClickHouse the backslash escapes the quote, and the literal
// runs on to the next one.
func TestLexReadsAsTheEngine(t *testing.T) {
	const q = `SELECT 'C:\' || 'x' AS p, count(*) AS n FROM events WHERE event = {variables.e} GROUP BY p`
	for _, tc := range []struct {
		d    engine.Engine
		want string
	}{{engine.SQLite, `'C:\'`}, {engine.PostgreSQL, `'C:\'`}, {engine.MySQL, `'C:\' || '`}, {engine.ClickHouse, `'C:\' || '`}} {
		l := lex(q, tc.d)
		first := -1
		for i, tk := range l.tokens {
			if tk.kind == tokString {
				first = i
				break
			}
		}
		a, b := first, 0
		require.True(t, (a >= b), "%v: first = %v, want >= %v", tc.d.Name(), a, b)
		got, want := l.text(l.tokens[first]), tc.want
		assert.Equal(t, want, got, "%v: l.text(l.tokens[first])", tc.d.Name())
	}
	a, err := Analyze(q, Options{Engine: engine.SQLite, Types: map[string]variable.Type{"e": variable.String}})
	require.NoError(t, err)
	assert.True(t, a.Materializable(), "%v: a.Materializable() is false", a.Reason())
}
