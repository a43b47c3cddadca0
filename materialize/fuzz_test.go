package materialize

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// FuzzAnalyze feeds arbitrary query text to Analyze in every dialect: it
// must never panic, its verdict must be consistent, and a plan must read,
// read a page and refresh.
func FuzzAnalyze(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/query.sql")
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(string(data))
		}
	}
	for _, s := range []string{"/*!*/", "/*!", "select /*!*/ 1", "SELECT 1 FROM t WHERE a = {variables.x}0",
		"SELECT a FROM t WHERE a = :v1 AND b = {variables.b}", "SELECT count(*) FROM t WHERE {variables.a} = {variables.b}",
		"SELECT max(a, b) FROM t WHERE c >= {variables.d} GROUP BY a", "SELECT avg(*) FROM t WHERE c >= {variables.d}",
		"SELECT a FROM t WHERE ((a = {variables.a}) AND (b < {variables.b}))", "select 1 from dual", "'", "{variables.", "",
		`SELECT REGEXP_REPLACE(r, '^(?:www\.)?([^/]+)$', '\1') AS d, count() FROM t WHERE a::date >= {variables.d} GROUP BY d`,
		`SELECT sum(CAST(x AS double precision)), extract(minute FROM ts) AS m FROM t WHERE p::json->>'c' = {variables.c} AND n ILIKE 'a%' GROUP BY m`,
		`SELECT CAST(a, 'String') AS s, b || 'x' AS c FROM t WHERE "q" = {variables.q} AND x NOT ILIKE '\_' AND y REGEXP 'z'`} {
		f.Add(s)
	}
	dialects := []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse}
	day := variable.Timestamp{Time: time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)}
	f.Fuzz(func(t *testing.T, query string) {
		for _, d := range dialects {
			types := map[string]variable.Type{"d": variable.Date, "date_from": variable.Date, "b": variable.Date}
			a, err := Analyze(query, Options{Engine: d, Types: types})
			require.NoError(t, err, "Analyze(%q)", query)
			require.Equal(t, len(a.Reasons) == 0, a.Materializable(), "Analyze(%q): plan %v with reasons %v", query, a.Plan != nil, a.Reasons)
			if a.Plan == nil {
				continue
			}
			require.NotEqual(t, "", a.Plan.Precompute(), "Analyze(%q): empty pre-compute query", query)
			keptAsWritten(t, query, d, a.Plan)
			values := map[string]any{}
			for _, v := range a.Variables {
				values[v.Name] = "x"
				if types[v.Name] == variable.Date {
					values[v.Name] = day
				}
			}
			read, _, err := a.Plan.Read("t", values)
			require.NoError(t, err, "Read of %q", query)
			page, _, perr := a.Plan.ReadPage("t", values, 11, 3)
			require.Equal(t, perr == nil, err == nil, "ReadPage of %q: %q, %v; Read: %q, %v", query, page, perr, read, err)
			require.Contains(t, page, read, "ReadPage of %q: %q, %v; Read: %q, %v", query, page, perr, read, err)
			if _, err := a.Plan.Refresh("t"); err != nil {
				t.Fatalf("Refresh of %q: %v", query, err)
			}
		}
	})
}

// keptAsWritten fails t unless every string literal of query (but a name
// written as one, AS 'n' or x 'n') is in the plan's SQL byte for byte.
func keptAsWritten(t *testing.T, query string, d engine.Engine, p *Plan) {
	l := lex(query, d)
	read, _, _ := p.Read("t", nil)
	all := p.Precompute() + "\n" + p.readHead + p.readGroup + p.readEnd + read
	for i, tok := range l.tokens {
		if tok.kind != tokString || i > 0 && aliasPlace(l, i) {
			continue
		}
		lit := l.text(tok)
		if v, ok := stringContent(lit); ok && (v == "" || slices.Contains(p.Columns(), v)) {
			continue // a name written as a string, where the parser reads a name
		}
		require.Contains(t, all, lit, "Analyze(%q) on %s: the literal", query, d.Name())
	}
}

// aliasPlace reports whether the string token i stands where a name
// would: after AS, or right after an expression (a name, a string, a
// closing parenthesis).
func aliasPlace(l *lexed, i int) bool {
	prev := l.tokens[i-1]
	switch {
	case l.word(prev, "as"):
		return true
	case prev.kind == tokWord:
		// (or a prefix, E'x', not checked here)
		return !isOperatorWord(l.text(prev))
	}
	return prev.kind != tokPunct || l.punct(prev, ")")
}

func isOperatorWord(w string) bool {
	return operatorWords[strings.ToLower(w)]
}

var operatorWords = setOf("and", "or", "not", "in", "is", "select", "where", "on", "when", "then", "else",
	"as", "exists", "values", "by", "from", "like", "ilike", "regexp", "rlike", "between", "case", "having",
	"join", "using", "distinct", "all", "any", "some", "union", "limit", "offset", "return", "end")
