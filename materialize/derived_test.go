package materialize

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// TestAnalyzeDerivedTables: a variable compared in a subquery in FROM
// whose rows are keyed by the compared column (selected as itself, and
// grouped by where the subquery aggregates) is compared in the outer
// query instead, and the stored table holds the subquery's every row; any
// other subquery keeps it, and is refused.
func TestAnalyzeDerivedTables(t *testing.T) {
	types := map[string]variable.Type{"from": variable.Date, "x": variable.String}
	cases := []struct {
		name, query string
		code        Code   // "" when it materializes
		column      string // the variable's column when it does
	}{
		{"grouped by the column", "SELECT country, sum(n) AS n FROM (SELECT country, event, count(*) AS n FROM events WHERE country = {variables.x} GROUP BY country, event) AS t GROUP BY country", "", `"t"."country"`},
		{"aliased output", "SELECT c, sum(n) AS n FROM (SELECT country AS c, count(*) AS n FROM events WHERE country = {variables.x} GROUP BY country) t GROUP BY c", "", `"t"."c"`},
		{"rows, a range", "SELECT e.event, count(*) AS n FROM (SELECT event, timestamp FROM events WHERE timestamp >= {variables.from} AND event <> 'x') e GROUP BY e.event", "", `"e"."timestamp"`},
		{"inner join", "SELECT u.plan, count(*) AS n FROM users u JOIN (SELECT distinct_id, event FROM events WHERE event = {variables.x}) e ON e.distinct_id = u.id GROUP BY u.plan", "", `"e"."event"`},
		// Not keyed, the subquery alone in FROM: its plan is the
		// subquery's, the outer query computed over its read (nested.go).
		{"not grouped by the column, alone", "SELECT count(*) AS n FROM (SELECT distinct_id, count(*) AS c FROM events WHERE timestamp >= {variables.from} GROUP BY distinct_id) u", "", `"timestamp"`},
		{"column not selected, alone", "SELECT count(*) AS n FROM (SELECT distinct_id FROM events WHERE event = {variables.x}) u", "", `"event"`},
		{"limit picks rows first, alone", "SELECT count(*) AS n FROM (SELECT event FROM events WHERE event = {variables.x} ORDER BY event LIMIT 5) u", "", `"event"`},
		{"not grouped by the column, beside a table", "SELECT count(*) AS n FROM (SELECT distinct_id, count(*) AS c FROM events WHERE timestamp >= {variables.from} GROUP BY distinct_id) u JOIN users s ON s.id = u.distinct_id", CodeNotInWhere, ""},
		{"not grouped by the column, a subquery in the outer WHERE", "SELECT count(*) AS n FROM (SELECT distinct_id, count(*) AS c FROM events WHERE timestamp >= {variables.from} GROUP BY distinct_id) u WHERE u.distinct_id IN (SELECT id FROM users)", CodeNotInWhere, ""},
		{"not grouped by the column, a variable outside too", "SELECT count(*) AS n FROM (SELECT distinct_id, count(*) AS c FROM events WHERE timestamp >= {variables.from} GROUP BY distinct_id) u WHERE u.c > {variables.x}", CodeNotInWhere, ""},
		{"right side of a left join", "SELECT u.plan, count(e.event) AS n FROM users u LEFT JOIN (SELECT distinct_id, event FROM events WHERE event = {variables.x}) e ON e.distinct_id = u.id GROUP BY u.plan", CodeNotInWhere, ""},
		{"alias names another column", "SELECT count(*) AS n FROM (SELECT event, plan AS event2, country AS event FROM events WHERE event = {variables.x}) u", CodeNotColumn, ""},
		{"under OR inside", "SELECT count(*) AS n FROM (SELECT event FROM events WHERE event = {variables.x} OR event = 'y') u", CodeUnderOr, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := analyzeCase(t, c.query, Options{Engine: engine.SQLite, Types: types}, c.code)
			if c.code != "" {
				return
			}
			v := a.Variables[0]
			assert.Equal(t, c.column, v.Column)
			assert.NotContains(t, a.Plan.Precompute(), "{variables")
		})
	}
}

// TestReasonPositions: a refusal names where its construct is: the
// variable's placeholder, or the keyword of a construct the parser cannot
// read; and a rewrite where one exists.
func TestReasonPositions(t *testing.T) {
	cases := []struct {
		name, query  string
		code         Code
		line, column int
		says         string
	}{
		{"under OR", "SELECT count(*) FROM events\nWHERE (event = {variables.e} OR event = 'x')", CodeUnderOr, 2, 16, "write `event IN {variables.list}`"},
		{"subquery in FROM", "SELECT count(*) FROM (\n  SELECT distinct_id, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY distinct_id\n) u JOIN users s ON s.id = u.distinct_id", CodeNotInWhere, 2, 68, "compare it in the outer WHERE"},
		{"JOIN condition", "SELECT count(*) FROM a JOIN b ON b.id = a.id AND b.k = {variables.k}", CodeNotInWhere, 1, 56, "move the condition to the WHERE"},
		{"with", "WITH s AS (SELECT a FROM t WHERE b = {variables.k})\nSELECT a FROM s JOIN u ON u.a = s.a", CodeNotInWhere, 1, 38, "subquery in FROM"},
		{"window", "SELECT a,\n  rank() OVER w AS r FROM t WHERE b = {variables.k} WINDOW w AS (ORDER BY a)", CodeUnsupportedQuery, 2, 10, "a WINDOW clause"},
		{"expression", "SELECT a FROM t WHERE lower(b) = lower({variables.k})", CodeInExpression, 1, 40, "lower(column) = {variables.x}"},
		{"union", "SELECT a FROM t WHERE b = {variables.k}\nUNION ALL SELECT a FROM u", CodeUnsupportedQuery, 2, 1, "not a UNION"},
		{"select star", "SELECT a, * FROM t WHERE b = {variables.k}", CodeUnsupportedQuery, 1, 11, "list the columns"},
		{"limit", "SELECT a FROM t WHERE b = {variables.k} LIMIT 5", CodeUnsupportedQuery, 1, 41, "add an ORDER BY"},
		{"alias", "SELECT lower(b) AS b, count(*) AS n FROM t WHERE lower(b) = {variables.k} GROUP BY lower(b)", CodeNotColumn, 1, 61, "give the output alias another name"},
		{"two columns", "SELECT a FROM t WHERE b >= {variables.k} AND c < {variables.k}", CodeDifferentColumns, 1, 50, "two different columns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := Analyze(c.query, Options{Engine: engine.SQLite})
			require.NoError(t, err)
			require.False(t, a.Materializable())
			r := a.Reasons[0]
			assert.Equal(t, c.code, r.Code, r.Message)
			assert.Equal(t, [2]int{c.line, c.column}, [2]int{r.Line, r.Column})
			assert.Contains(t, r.Message, c.says)
			assert.Contains(t, r.Located(), "(line ")
		})
	}
}

// TestAnalyzeOrOfKeys: an OR whose every branch compares a variable with
// = or IN keeps each branch's column as a key of the stored table, and a
// read applies the OR to them, from the stored table and from the source
// rows of a partial bucket; any other OR is refused.
func TestAnalyzeOrOfKeys(t *testing.T) {
	opts := Options{Engine: engine.SQLite, Types: map[string]variable.Type{"from": variable.Date, "b": variable.String, "c": variable.List}}
	a, err := Analyze("SELECT browser, country, count(*) AS n FROM events_p WHERE (browser = {variables.b} OR country IN {variables.c}) AND timestamp >= {variables.from} GROUP BY browser, country", opts)
	require.NoError(t, err)
	require.True(t, a.Materializable(), a.Reason())
	assert.Equal(t, KindKey, a.Variables[0].Kind)
	assert.Equal(t, KindList, a.Variables[1].Kind)
	assert.NotContains(t, a.Plan.Precompute(), "WHERE")
	assert.Contains(t, a.Plan.Precompute(), `"browser" AS "b"`)
	assert.Contains(t, a.Plan.Precompute(), `"country" AS "c"`)
	values := map[string]any{"b": "Chrome", "c": []string{"DE", "US"}, "from": variable.Timestamp{Time: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)}}
	q, args, err := a.Plan.Read("stored", values)
	require.NoError(t, err)
	assert.Contains(t, q, `WHERE ("b" = ? OR "c" IN (?, ?)) AND "from" >= ?`)
	assert.Len(t, args, 4)
	values["from"] = variable.Timestamp{Time: time.Date(2025, 5, 1, 6, 30, 0, 0, time.UTC)}
	q, _, err = a.Plan.Read("stored", values)
	require.NoError(t, err)
	assert.Contains(t, q, `("browser" = ? OR "country" IN (?, ?))`, "the partial bucket's source rows take the OR too")

	delete(values, "b")
	_, _, err = a.Plan.Read("stored", values)
	var ve *ValueError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "b", ve.Variable)

	for _, q := range []string{
		"SELECT count(*) AS n FROM t WHERE (a = {variables.b} OR {variables.b} = 'all')",
		"SELECT count(*) AS n FROM t WHERE (a = {variables.b} OR c IS NULL)",
		"SELECT count(*) AS n FROM t WHERE (a > {variables.b} OR c = {variables.c})",
		"SELECT count(*) AS n FROM t WHERE (a = {variables.b} OR c = {variables.b})",
		"SELECT count(*) AS n FROM t WHERE (ts = {variables.from} OR c = {variables.c}) AND ts >= {variables.from}",
	} {
		a, err := Analyze(q, opts)
		require.NoError(t, err)
		assert.False(t, a.Materializable(), q)
	}
}

// TestStoredColumnNotAnAlias: a variable whose code name is the name of
// a result column of another expression is stored under a generated name:
// ClickHouse reads a name in the read's WHERE as the result column (an
// aggregate there, refused; an expression, a wrong answer).
func TestStoredColumnNotAnAlias(t *testing.T) {
	for _, q := range []string{
		"SELECT count(*) AS users, sum(n) AS events FROM (SELECT event, distinct_id, count(*) AS n FROM events WHERE event IN {variables.events} GROUP BY event, distinct_id) u",
		"SELECT event || '!' AS events FROM events WHERE event = {variables.events}",
		// A code name that is a table's name: the tenant scope reads the
		// table as (SELECT ...) AS events, and ClickHouse refused the
		// stored column events beside it ("Duplicate aliases events").
		"SELECT event, count(*) AS n FROM events WHERE event IN {variables.events} GROUP BY event",
		"SELECT p.event, count(*) AS n FROM events AS p WHERE p.event IN {variables.p} GROUP BY p.event",
	} {
		a, err := Analyze(q, Options{Engine: engine.ClickHouse})
		require.NoError(t, err)
		require.True(t, a.Materializable(), a.Reason())
		name := a.Variables[0].Name
		read, _, err := a.Plan.Read("stored", map[string]any{name: []string{"purchase"}})
		if err != nil {
			read, _, err = a.Plan.Read("stored", map[string]any{name: "purchase"})
		}
		require.NoError(t, err)
		assert.NotContains(t, read, "WHERE `"+name+"`", q)
		assert.Contains(t, read, "WHERE `_v0`", q)
	}
	a, err := Analyze("SELECT event, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY event", Options{Engine: engine.ClickHouse})
	require.NoError(t, err)
	read, _, err := a.Plan.Read("stored", map[string]any{"event": "purchase"})
	require.NoError(t, err)
	assert.Contains(t, read, "WHERE `event`", "the result column of that very column keeps the code name")
}
