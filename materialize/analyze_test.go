package materialize

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

func TestAnalyzeVerdicts(t *testing.T) {
	cases := []struct {
		name  string
		query string
		code  Code   // "" when materializable
		ops   string // operators of variable x when materializable
	}{
		{"equal", "SELECT count(*) FROM t WHERE a = {variables.x}", "", "="},
		{"mirrored", "SELECT count(*) FROM t WHERE {variables.x} < a AND {variables.x} >= a", "", "> <="},
		{"in parentheses", "SELECT count(*) FROM t WHERE (b = 1 AND (a <= ({variables.x})))", "", "<="},
		{"not", "SELECT count(*) FROM t WHERE NOT a = {variables.x}", CodeUnsupportedOperator, ""},
		{"is", "SELECT count(*) FROM t WHERE a IS {variables.x}", CodeUnsupportedOperator, ""},
		{"not like", "SELECT count(*) FROM t WHERE a NOT LIKE {variables.x}", "", "not like"},
		{"like", "SELECT b, count(*) FROM t WHERE a LIKE {variables.x} GROUP BY b", "", "like"},
		{"ilike", "SELECT count(*) FROM t WHERE lower(a) ILIKE {variables.x}", "", "ilike"},
		{"not equal, mirrored", "SELECT count(*) FROM t WHERE {variables.x} <> a AND a != {variables.x}", "", "!= !="},
		{"not in", "SELECT count(*) FROM t WHERE a NOT IN {variables.x}", "", "not in"},
		{"like, the variable matched", "SELECT count(*) FROM t WHERE {variables.x} LIKE a", CodeUnsupportedOperator, ""},
		{"like with escape", "SELECT count(*) FROM t WHERE a LIKE {variables.x} ESCAPE '!'", "", "like"},
		{"like with an escape not constant", "SELECT count(*) FROM t WHERE a LIKE {variables.x} ESCAPE b", CodeUnsupportedOperator, ""},
		{"like, in an expression", "SELECT count(*) FROM t WHERE a LIKE {variables.x} || '%'", CodeUnsupportedOperator, ""},
		{"not equal and a range", "SELECT count(*) FROM t WHERE a <> {variables.x} AND a >= {variables.x}", CodeUnsupportedOperator, ""},
		{"not in, one element", "SELECT count(*) FROM t WHERE a NOT IN ({variables.x}, 'b')", CodeInExpression, ""},
		{"not equal, group_concat over keys", "SELECT group_concat(b) FROM t WHERE a <> {variables.x}", CodeAggregate, ""},
		{"select list, computed at read", "SELECT {variables.x} AS l, count(*) FROM t WHERE b = 1", "", ""},
		{"having, computed at read", "SELECT a, sum(b) FROM t GROUP BY a HAVING sum(b) > {variables.x}", "", ""},
		{"group key over a variable", "SELECT CASE WHEN a = {variables.x} THEN 1 ELSE 0 END AS k, count(*) FROM t GROUP BY k", "", ""},
		{"group key over a variable, not selected", "SELECT count(*) FROM t GROUP BY CASE WHEN a = {variables.x} THEN 1 END", CodeNotInWhere, ""},
		{"select list, unnamed", "SELECT {variables.x}, count(*) FROM t", CodeNotInWhere, ""},
		{"select list, in an aggregate", "SELECT sum(CASE WHEN a = {variables.x} THEN 1 END) AS s FROM t", CodeNotInWhere, ""},
		{"select list, in a window", "SELECT a, count(*) AS n, rank() OVER (PARTITION BY a ORDER BY {variables.x}) AS r FROM t GROUP BY a", CodeNotInWhere, ""},
		{"select list, rows", "SELECT {variables.x} AS l, a FROM t", "", ""},
		{"select list, rows, in a subquery", "SELECT (SELECT max(b) FROM u WHERE u.b = {variables.x}) AS l, a FROM t", CodeNotInWhere, ""},
		{"group key over a variable, group_concat", "SELECT CASE WHEN a = {variables.x} THEN 1 ELSE 0 END AS k, group_concat(b) FROM t GROUP BY k", CodeAggregate, ""},
		{"window in a subquery, over its rows", "SELECT k, count(*) FROM (SELECT a, ntile(2) OVER (ORDER BY a) AS k FROM t WHERE a >= {variables.x}) s GROUP BY k", "", ">="},
		{"window in a subquery beside a join", "SELECT s.a, u.b FROM (SELECT a, rank() OVER (ORDER BY a) AS r FROM t WHERE a >= {variables.x}) s JOIN u ON u.a = s.a", CodeUnsupportedQuery, ""},
		{"window in a subquery of a subquery with the variable outside", "SELECT a FROM (SELECT a, rank() OVER (ORDER BY a) AS r FROM t) s WHERE a = {variables.x} AND r = 1", "", "="},
		{"regexp", "SELECT count(*) FROM t WHERE a REGEXP {variables.x}", CodeUnsupportedOperator, ""},
		{"nested or", "SELECT count(*) FROM t WHERE b = 1 AND (c = 2 OR (d = 3 AND a = {variables.x}))", CodeUnderOr, ""},
		{"variable against variable", "SELECT count(*) FROM t WHERE {variables.x} = {variables.y}", CodeNotColumn, ""},
		{"against a literal", "SELECT count(*) FROM t WHERE 1 = {variables.x}", CodeNotColumn, ""},
		{"arithmetic", "SELECT count(*) FROM t WHERE a = {variables.x} + 1", CodeInExpression, ""},
		{"alone", "SELECT count(*) FROM t WHERE {variables.x}", CodeInExpression, ""},
		{"group by", "SELECT count(*) FROM t GROUP BY {variables.x}", CodeNotInWhere, ""},
		{"order by", "SELECT a FROM t ORDER BY {variables.x}", CodeNotInWhere, ""},
		{"derived table not keyed by the column, beside a table", "SELECT count(*) FROM (SELECT b FROM t WHERE a = {variables.x}) AS s JOIN u ON u.b = s.b", CodeNotInWhere, ""},
		{"derived table keyed by the column", "SELECT count(*) FROM (SELECT a FROM t WHERE a = {variables.x}) AS s", "", "="},
		{"exists", "SELECT count(*) FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = {variables.x})", CodeNotInWhere, ""},
		{"two columns, qualified", "SELECT count(*) FROM t WHERE t.a >= {variables.x} AND u.a < {variables.x}", CodeDifferentColumns, ""},
		{"same column, other case", "SELECT count(*) FROM t WHERE A >= {variables.x} AND a < {variables.x}", "", ">= <"},
		{"insert", "INSERT INTO t (a) VALUES ({variables.x})", CodeUnsupportedQuery, ""},
		{"placeholder syntax", "SELECT a FROM t WHERE a = {variables.}", CodeUnparsable, ""},
		{"subquery in select list", "SELECT (SELECT max(b) FROM u) FROM t WHERE a = {variables.x}", CodeUnsupportedQuery, ""},
		{"group_concat", "SELECT group_concat(b) FROM t WHERE a = {variables.x}", CodeAggregate, ""},
		{"total distinct ungrouped", "SELECT total(DISTINCT b) FROM t WHERE a = {variables.x}", CodeAggregate, ""},
		{"sum distinct grouped", "SELECT c, sum(DISTINCT b) FROM t WHERE a = {variables.x} GROUP BY c", "", "="},
		{"aggregate in group by", "SELECT count(*) FROM t WHERE a = {variables.x} GROUP BY count(*)", CodeAggregate, ""},
		{"group by position out of range", "SELECT count(*) FROM t WHERE a = {variables.x} GROUP BY 3", CodeUnsupportedQuery, ""},
		{"distinct ordered by hidden", "SELECT DISTINCT b FROM t WHERE a = {variables.x} ORDER BY c", CodeUnsupportedQuery, ""},
		{"limit without order", "SELECT a FROM t WHERE b = {variables.x} LIMIT 5", CodeUnsupportedQuery, ""},
		{"grouped limit without order", "SELECT a, count(*) FROM t WHERE b = {variables.x} GROUP BY a LIMIT 5", CodeUnsupportedQuery, ""},
		{"ungrouped aggregate with limit", "SELECT count(*) FROM t WHERE b = {variables.x} LIMIT 5", "", "="},
		{"scalar max", "SELECT max(b, c) FROM t WHERE a >= {variables.x}", "", ">="},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := analyzeCase(t, c.query, Options{Engine: engine.SQLite}, c.code)
			if c.code != "" {
				return
			}
			var got []string
			for _, op := range a.Variables[0].Operators {
				got = append(got, op)
			}
			if got, want := joinSpace(got), c.ops; got != want {
				t.Fatalf("joinSpace(got) = %q, want %q", got, want)
			}
		})
	}
}

func joinSpace(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

func TestAnalyzeReasonPerVariable(t *testing.T) {
	a, err := Analyze("SELECT count(*) FROM t WHERE a = {variables.ok} AND b REGEXP {variables.bad} AND a = {variables.ok} AND c = {variables.two} AND d > {variables.two}",
		Options{Engine: engine.SQLite})
	require.NoError(t, err)
	require.Len(t, a.Variables, 3)
	require.Nil(t, a.Variables[0].Reason)
	require.Equal(t, `"a"`, a.Variables[0].Column)
	require.Equal(t, []string{"=", "="}, a.Variables[0].Operators)
	require.Equal(t, CodeUnsupportedOperator, a.Variables[1].Reason.Code)
	require.Equal(t, CodeDifferentColumns, a.Variables[2].Reason.Code)
	got, want := ([]Code{a.Reasons[0].Code, a.Reasons[1].Code}), ([]Code{CodeUnsupportedOperator, CodeDifferentColumns})
	require.Equal(t, want, got, "([]Code{a.Reasons[0].Code, a.Reasons[1].Code})")
	require.Equal(t, "variable 'bad' is used with the operator REGEXP; only =, !=, >=, >, <, <=, [NOT] IN, [NOT] LIKE and [NOT] ILIKE can be materialized", a.Reason())
}

func TestAnalyzeBuckets(t *testing.T) {
	q := "SELECT count(*) FROM t WHERE ts >= {variables.from} AND n < {variables.n}"
	types := map[string]variable.Type{"from": variable.Date, "n": variable.Number}
	a, err := Analyze(q, Options{Engine: engine.SQLite, Types: types, Buckets: map[string]engine.Bucket{"from": engine.Week}})
	require.NoError(t, err)
	require.Equal(t, engine.Week, a.Variables[0].Bucket)
	got, want := a.Variables[1].Bucket, engine.Bucket("")
	require.Equal(t, want, got, "only dates are bucketed: a.Variables[1].Bucket")

	// Rows are not aggregated: a bucket would not shrink anything.
	a, err = Analyze("SELECT a FROM t WHERE ts >= {variables.from}", Options{Engine: engine.SQLite, Types: types})
	require.NoError(t, err)
	require.Equal(t, engine.Bucket(""), a.Variables[0].Bucket)

	// A date compared with = keeps its values.
	a, err = Analyze("SELECT count(*) FROM t WHERE ts = {variables.from}", Options{Engine: engine.SQLite, Types: types})
	require.NoError(t, err)
	require.Equal(t, engine.Bucket(""), a.Variables[0].Bucket)
}

func TestAnalyzeOptions(t *testing.T) {
	_, err := Analyze("SELECT 1", Options{})
	require.ErrorIs(t, err, ErrInvalidOptions)
	_, err = Analyze("SELECT 1", Options{Engine: engine.SQLite, Buckets: map[string]engine.Bucket{"x": "year"}})
	require.ErrorIs(t, err, ErrInvalidOptions)
	require.ErrorContains(t, err, `"year"`)
}

func TestAnalyzeColumnNames(t *testing.T) {
	a, err := Analyze("SELECT t.a, count( * ), max(b) AS top, 1+2 FROM t WHERE c = {variables.x} GROUP BY t.a",
		Options{Engine: engine.SQLite})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "count( * )", "top", "1+2"}, a.Plan.Columns())
}

// A code name that looks like a generated column name moves the generated
// names out of its way.
func TestAnalyzeNameCollision(t *testing.T) {
	a, err := Analyze("SELECT b, count(*) FROM t WHERE a = {variables._a0} GROUP BY b", Options{Engine: engine.SQLite})
	require.NoError(t, err)
	require.Contains(t, a.Plan.Precompute(), `count(*) AS "__a0"`)
	require.Contains(t, a.Plan.Precompute(), `"a" AS "_a0"`)
}

// analyzeCase analyzes query with opts and checks its verdict: refused,
// with a reason whose code is code, when code is set; else materializable
// with no reason. It returns the analysis.
func analyzeCase(t *testing.T, query string, opts Options, code Code) *Analysis {
	t.Helper()
	a, err := Analyze(query, opts)
	require.NoError(t, err)
	if code != "" {
		require.False(t, a.Materializable(), "materializes: %s", query)
		require.Equal(t, code, a.Reasons[0].Code, "%s: %s", query, a.Reason())
		require.NotEmpty(t, a.Reason())
		return a
	}
	require.True(t, a.Materializable(), "%s: %s", query, a.Reason())
	require.Empty(t, a.Reason())
	return a
}
