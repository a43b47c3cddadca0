package tree

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// shape writes n as Type[detail](children...), leaves as their text, so
// that a test states the tree it expects in one line.
func shape(src string, n Node) string {
	var b strings.Builder
	writeShape(&b, src, n)
	return b.String()
}

func writeShape(b *strings.Builder, src string, n Node) {
	name := strings.TrimPrefix(fmt.Sprintf("%T", n), "*tree.")
	switch v := n.(type) {
	case *Literal, *Placeholder, *BindMarker, *ColName, *TableName:
		s := n.Span()
		b.WriteString(src[s.Start:s.End])
		return
	case *StarExpr:
		if v.Except == nil && v.Replace == nil {
			s := n.Span()
			b.WriteString(src[s.Start:s.End])
			return
		}
	case *ComparisonExpr:
		name += "[" + v.Operator + "]"
	case *BinaryExpr:
		name += "[" + v.Operator + "]"
	case *UnaryExpr:
		name += "[" + v.Operator + "]"
	case *IsExpr:
		name += "[" + v.Operator + "]"
	case *RangeCond:
		name += "[" + v.Operator + "]"
	case *JoinTableExpr:
		name += "[" + v.Join + "]"
	case *Union:
		name += "[" + v.Type + "]"
	case *ConvertExpr:
		name += "[" + v.Form + " " + v.Type + "]"
	case *IntervalExpr:
		name += "[" + v.Unit + "]"
	case *ExtractExpr:
		name += "[" + v.Unit + "]"
	case *FuncExpr:
		name = v.Name.Name
		if v.Distinct {
			name += "[DISTINCT]"
		}
		if v.HasParams {
			name += fmt.Sprintf("[%d params]", len(v.Params))
		}
	case *AliasedExpr:
		if !v.As.IsEmpty() {
			name += "[" + v.As.Raw + "]"
		}
	case *AliasedTableExpr:
		if !v.As.IsEmpty() {
			name += "[" + v.As.Raw + "]"
		}
		for _, s := range v.Suffixes {
			name += "[" + s.Text + "]"
		}
	case *AnyExpr:
		name += "[" + v.Quantifier + "]"
	case *GroupingExpr:
		name += "[" + v.Type + "]"
	case *Order:
		name += "[" + strings.TrimSpace(v.Direction+" "+v.Nulls) + "]"
	case *FrameBound:
		name += "[" + v.Type + "]"
	case *Frame:
		name += "[" + v.Unit + "]"
	case *CommonTableExpr:
		name += "[" + v.Name.Raw + "]"
	case *Select:
		if v.Distinct != "" {
			name += "[" + v.Distinct + "]"
		}
		if v.GroupByModifier != "" {
			name += "[" + v.GroupByModifier + "]"
		}
	case *Over:
		if v.Spec == nil {
			name += "[" + v.Name.Raw + "]"
		}
	case *CollateExpr:
		name += "[" + v.Collation + "]"
	}
	b.WriteString(name)
	first := true
	n.each(&walker{f: func(c Node) Node {
		if first {
			b.WriteByte('(')
		} else {
			b.WriteString(", ")
		}
		first = false
		writeShape(b, src, c)
		return c
	}})
	if !first {
		b.WriteByte(')')
	}
}

// whereShape parses "SELECT 1 FROM t WHERE " + cond and returns the shape
// of the condition.
func whereShape(t *testing.T, e engine.Engine, cond string) string {
	t.Helper()
	src := "SELECT 1 FROM t WHERE " + cond
	tr, err := Parse(e, src)
	require.NoError(t, err, src)
	return shape(src, tr.Stmt.(*Select).Where)
}

// TestExpressions: the expressions analysts write, read with the
// precedence of the engines.
func TestExpressions(t *testing.T) {
	all := engine.All()
	cases := []struct {
		engines []engine.Engine
		cond    string
		want    string
	}{
		{all, `a = 1 AND b = 2 OR NOT c = 3`, `OrExpr(AndExpr(ComparisonExpr[=](a, 1), ComparisonExpr[=](b, 2)), NotExpr(ComparisonExpr[=](c, 3)))`},
		{all, `a + b * c - -d >= 10`, `ComparisonExpr[>=](BinaryExpr[-](BinaryExpr[+](a, BinaryExpr[*](b, c)), UnaryExpr[-](d)), 10)`},
		{all, `x BETWEEN {variables.from} AND {variables.to} AND y NOT BETWEEN 1 AND 2`, `AndExpr(RangeCond[BETWEEN](x, {variables.from}, {variables.to}), RangeCond[NOT BETWEEN](y, 1, 2))`},
		{all, `e.event IN ('a', 'b') AND u NOT IN (SELECT id FROM users) AND k IN {variables.ks}`, `AndExpr(AndExpr(ComparisonExpr[IN](e.event, ValTuple('a', 'b')), ComparisonExpr[NOT IN](u, Subquery(Select(AliasedExpr(id), AliasedTableExpr(users))))), ComparisonExpr[IN](k, {variables.ks}))`},
		{all, `a IS NULL AND b IS NOT NULL AND c IS TRUE AND d IS NOT DISTINCT FROM e`, `AndExpr(AndExpr(AndExpr(IsExpr[IS NULL](a), IsExpr[IS NOT NULL](b)), IsExpr[IS TRUE](c)), ComparisonExpr[IS NOT DISTINCT FROM](d, e))`},
		{all, `a LIKE 'x%' ESCAPE '!' AND b NOT LIKE 'y'`, `AndExpr(ComparisonExpr[LIKE](a, 'x%', '!'), ComparisonExpr[NOT LIKE](b, 'y'))`},
		{[]engine.Engine{engine.PostgreSQL, engine.ClickHouse}, `a ILIKE 'x' AND b NOT ILIKE 'y'`, `AndExpr(ComparisonExpr[ILIKE](a, 'x'), ComparisonExpr[NOT ILIKE](b, 'y'))`},
		{[]engine.Engine{engine.PostgreSQL}, `a SIMILAR TO 'x' AND b ~ 'y'`, `AndExpr(ComparisonExpr[SIMILAR TO](a, 'x'), BinaryExpr[~](b, 'y'))`},
		{[]engine.Engine{engine.SQLite}, `a GLOB 'x*' AND b IS c AND d NOTNULL`, `AndExpr(AndExpr(ComparisonExpr[GLOB](a, 'x*'), ComparisonExpr[IS](b, c)), IsExpr[NOTNULL](d))`},
		{[]engine.Engine{engine.MySQL}, `a REGEXP 'x' OR b RLIKE 'y' OR c <=> d`, `OrExpr(OrExpr(ComparisonExpr[REGEXP](a, 'x'), ComparisonExpr[RLIKE](b, 'y')), ComparisonExpr[<=>](c, d))`},
		{[]engine.Engine{engine.MySQL}, `a || b`, `OrExpr(a, b)`},
		{[]engine.Engine{engine.SQLite, engine.PostgreSQL}, `a || b = 'xy'`, `ComparisonExpr[=](BinaryExpr[||](a, b), 'xy')`},
		{all, `EXISTS (SELECT 1 FROM u WHERE u.id = t.id)`, `ExistsExpr(Subquery(Select(AliasedExpr(1), AliasedTableExpr(u), ComparisonExpr[=](u.id, t.id))))`},
		{all, `x > (SELECT max(y) FROM u)`, `ComparisonExpr[>](x, Subquery(Select(AliasedExpr(max(y)), AliasedTableExpr(u))))`},
		{[]engine.Engine{engine.PostgreSQL, engine.MySQL}, `x = ANY (SELECT y FROM u) AND z > ALL (SELECT y FROM u)`, `AndExpr(ComparisonExpr[=](x, AnyExpr[ANY](Subquery(Select(AliasedExpr(y), AliasedTableExpr(u))))), ComparisonExpr[>](z, AnyExpr[ALL](Subquery(Select(AliasedExpr(y), AliasedTableExpr(u))))))`},
		{[]engine.Engine{engine.PostgreSQL}, `ts >= {variables.from} - interval '90' day AND ts < {variables.to} + interval '1 day'`, `AndExpr(ComparisonExpr[>=](ts, BinaryExpr[-]({variables.from}, IntervalExpr[day]('90'))), ComparisonExpr[<](ts, BinaryExpr[+]({variables.to}, IntervalExpr[]('1 day'))))`},
		{[]engine.Engine{engine.MySQL, engine.ClickHouse}, `ts >= {variables.from} - INTERVAL 90 DAY`, `ComparisonExpr[>=](ts, BinaryExpr[-]({variables.from}, IntervalExpr[DAY](90)))`},
		{[]engine.Engine{engine.PostgreSQL}, `CAST(x AS DATE) <= {variables.d} AND y::timestamp with time zone > now() AND z::numeric(10,2)[] IS NULL`, `AndExpr(AndExpr(ComparisonExpr[<=](ConvertExpr[CAST DATE](x), {variables.d}), ComparisonExpr[>](ConvertExpr[:: timestamp with time zone](y), now)), IsExpr[IS NULL](ConvertExpr[:: numeric(10,2)[]](z)))`},
		{[]engine.Engine{engine.ClickHouse}, `CAST(x, 'Nullable(String)') = '' AND CAST(y AS DateTime64(3, 'UTC')) > now()`, `AndExpr(ComparisonExpr[=](ConvertExpr[CAST, 'Nullable(String)'](x), ''), ComparisonExpr[>](ConvertExpr[CAST DateTime64(3, 'UTC')](y), now))`},
		{[]engine.Engine{engine.MySQL}, `CONVERT(x, DECIMAL(10, 2)) > 1 AND CONVERT(y USING utf8mb4) = 'a'`, `AndExpr(ComparisonExpr[>](ConvertExpr[CONVERT DECIMAL(10, 2)](x), 1), ComparisonExpr[=](ConvertExpr[CONVERT USING utf8mb4](y), 'a'))`},
		{all, `EXTRACT(YEAR FROM ts) = 2024`, `ComparisonExpr[=](ExtractExpr[YEAR](ts), 2024)`},
		{all, `CASE WHEN a > 1 THEN 'x' WHEN a IS NULL THEN NULL ELSE 'y' END = 'x'`, `ComparisonExpr[=](CaseExpr(When(ComparisonExpr[>](a, 1), 'x'), When(IsExpr[IS NULL](a), NULL), 'y'), 'x')`},
		{all, `CASE kind WHEN 1 THEN true END`, `CaseExpr(kind, When(1, true))`},
		{[]engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL}, `props ->> 'plan' = 'pro' AND props -> 'a' IS NOT NULL`, `AndExpr(ComparisonExpr[=](BinaryExpr[->>](props, 'plan'), 'pro'), IsExpr[IS NOT NULL](BinaryExpr[->](props, 'a')))`},
		{[]engine.Engine{engine.PostgreSQL, engine.ClickHouse}, `tags[1] = 'x' AND props['k'] = 'v' AND ARRAY[1, 2] = [1, 2]`, `AndExpr(AndExpr(ComparisonExpr[=](IndexExpr(tags, 1), 'x'), ComparisonExpr[=](IndexExpr(props, 'k'), 'v')), ComparisonExpr[=](ArrayExpr(1, 2), ArrayExpr(1, 2)))`},
		{[]engine.Engine{engine.ClickHouse}, `arrayExists(x -> x > {variables.min}, arr) AND arrayMap((a, b) -> a + b, xs, ys) != []`, `AndExpr(arrayExists(LambdaExpr(ComparisonExpr[>](x, {variables.min})), arr), ComparisonExpr[!=](arrayMap(LambdaExpr(BinaryExpr[+](a, b)), xs, ys), ArrayExpr))`},
		{[]engine.Engine{engine.ClickHouse}, `quantile(0.9)(duration) > 1 AND countIf(ok) > 0 AND x GLOBAL NOT IN (SELECT 1)`, `AndExpr(AndExpr(ComparisonExpr[>](quantile[1 params](0.9, duration), 1), ComparisonExpr[>](countIf(ok), 0)), ComparisonExpr[GLOBAL NOT IN](x, Subquery(Select(AliasedExpr(1)))))`},
		{all, `(a, b) IN ((1, 2), (3, 4))`, `ComparisonExpr[IN](ValTuple(a, b), ValTuple(ValTuple(1, 2), ValTuple(3, 4)))`},
		{[]engine.Engine{engine.PostgreSQL}, `name COLLATE "C" < 'b' AND ts AT TIME ZONE 'UTC' > now()`, `AndExpr(ComparisonExpr[<](CollateExpr["C"](name), 'b'), ComparisonExpr[>](BinaryExpr[AT TIME ZONE](ts, 'UTC'), now))`},
		{all, `DATE '2024-01-01' <= d AND d < CURRENT_DATE`, `AndExpr(ComparisonExpr[<=](DATE '2024-01-01', d), ComparisonExpr[<](d, CURRENT_DATE))`},
		{[]engine.Engine{engine.SQLite}, `a = ? AND b = ?2`, `AndExpr(ComparisonExpr[=](a, ?), ComparisonExpr[=](b, ?2))`},
		{[]engine.Engine{engine.PostgreSQL}, `a = $1`, `ComparisonExpr[=](a, $1)`},
		{[]engine.Engine{engine.MySQL}, `a DIV 2 = b MOD 3 AND c % 2 = 0`, `AndExpr(ComparisonExpr[=](BinaryExpr[DIV](a, 2), BinaryExpr[MOD](b, 3)), ComparisonExpr[=](BinaryExpr[%](c, 2), 0))`},
		{[]engine.Engine{engine.ClickHouse}, `t.1 = 'a' AND convert(x USING utf8) = ''`, `AndExpr(ComparisonExpr[=](IndexExpr(t, 1), 'a'), ComparisonExpr[=](ConvertExpr[CONVERT USING utf8](x), ''))`},
		{[]engine.Engine{engine.PostgreSQL}, `convert(x, 'UTF8', 'LATIN1') = ''`, `ComparisonExpr[=](convert(x, 'UTF8', 'LATIN1'), '')`},
		{[]engine.Engine{engine.PostgreSQL}, `substring(s FROM 2 FOR 3) = trim(BOTH 'x' FROM s) AND position('a' IN s) > 0`, `AndExpr(ComparisonExpr[=](substring(s, 2, 3), trim('x', s)), ComparisonExpr[>](position('a', s), 0))`},
	}
	for _, c := range cases {
		for _, e := range c.engines {
			assert.Equal(t, c.want, whereShape(t, e, c.cond), "%s: %s", e.Name(), c.cond)
		}
	}
}

// TestStatements: the clauses and FROM items analysts write.
func TestStatements(t *testing.T) {
	all := engine.All()
	cases := []struct {
		engines []engine.Engine
		q, want string
	}{
		{all, `WITH a AS (SELECT x FROM t), b (y) AS (SELECT x FROM a) SELECT DISTINCT y AS "Y", b.* FROM b`,
			`Select[DISTINCT](With(CommonTableExpr[a](Subquery(Select(AliasedExpr(x), AliasedTableExpr(t)))), CommonTableExpr[b](Subquery(Select(AliasedExpr(x), AliasedTableExpr(a))))), AliasedExpr["Y"](y), b.*, AliasedTableExpr(b))`},
		{all, `WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 3) SELECT i FROM r`,
			`Select(With(CommonTableExpr[r](Subquery(Union[UNION ALL](Select(AliasedExpr(1)), Select(AliasedExpr(BinaryExpr[+](i, 1)), AliasedTableExpr(r), ComparisonExpr[<](i, 3)))))), AliasedExpr(i), AliasedTableExpr(r))`},
		{all, `(SELECT a FROM t) UNION (SELECT b FROM u) EXCEPT SELECT c FROM v ORDER BY 1 DESC LIMIT 10`,
			`Union[EXCEPT](Union[UNION](ParenSelect(Select(AliasedExpr(a), AliasedTableExpr(t))), ParenSelect(Select(AliasedExpr(b), AliasedTableExpr(u)))), Select(AliasedExpr(c), AliasedTableExpr(v)), Order[DESC](1), Limit(10))`},
		{all, `SELECT a, count(*) n FROM t AS x LEFT OUTER JOIN u ON u.id = x.id CROSS JOIN v, w JOIN z USING (id) WHERE a > 0 GROUP BY a HAVING count(*) > 1 ORDER BY n DESC, a LIMIT 5 OFFSET 10`,
			`Select(AliasedExpr(a), AliasedExpr[n](count(*)), JoinTableExpr[CROSS JOIN](JoinTableExpr[LEFT OUTER JOIN](AliasedTableExpr[x](t), AliasedTableExpr(u), ComparisonExpr[=](u.id, x.id)), AliasedTableExpr(v)), JoinTableExpr[JOIN](AliasedTableExpr(w), AliasedTableExpr(z)), ComparisonExpr[>](a, 0), a, ComparisonExpr[>](count(*), 1), Order[DESC](n), Order[](a), Limit(5, 10))`},
		{all, `SELECT d.n FROM (SELECT count(*) AS n FROM t) d NATURAL JOIN (u JOIN v ON true)`,
			`Select(AliasedExpr(d.n), JoinTableExpr[NATURAL JOIN](AliasedTableExpr[d](Subquery(Select(AliasedExpr[n](count(*)), AliasedTableExpr(t)))), ParenTableExpr(JoinTableExpr[JOIN](AliasedTableExpr(u), AliasedTableExpr(v), true))))`},
		{[]engine.Engine{engine.PostgreSQL}, `SELECT DISTINCT ON (u) u, x FROM t, LATERAL (SELECT 1 AS x) l, generate_series(1, 3) WITH ORDINALITY AS g(v, i) FETCH FIRST 3 ROWS ONLY`,
			`Select[DISTINCT](u, AliasedExpr(u), AliasedExpr(x), AliasedTableExpr(t), AliasedTableExpr[l](Subquery(Select(AliasedExpr[x](1)))), AliasedTableExpr[g](generate_series(1, 3)), Limit(3))`},
		{[]engine.Engine{engine.PostgreSQL, engine.SQLite}, `SELECT event, count(*) FILTER (WHERE ok) AS n, sum(x) OVER (PARTITION BY event ORDER BY ts ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS r, rank() OVER w FROM t WINDOW w AS (ORDER BY ts DESC NULLS LAST)`,
			`Select(AliasedExpr(event), AliasedExpr[n](count(*, ok)), AliasedExpr[r](sum(x, Over(WindowSpec(event, Order[](ts), Frame[ROWS](FrameBound[PRECEDING](6), FrameBound[CURRENT ROW]))))), AliasedExpr(rank(Over[w])), AliasedTableExpr(t), NamedWindow(WindowSpec(Order[DESC NULLS LAST](ts))))`},
		{[]engine.Engine{engine.PostgreSQL}, `SELECT percentile_cont(0.9) WITHIN GROUP (ORDER BY d), string_agg(DISTINCT x, ',' ORDER BY x) FROM t GROUP BY ROLLUP (a, b), CUBE (c), GROUPING SETS ((a), ())`,
			`Select(AliasedExpr(percentile_cont(0.9, Order[](d))), AliasedExpr(string_agg[DISTINCT](x, ',', Order[](x))), AliasedTableExpr(t), GroupingExpr[ROLLUP](a, b), GroupingExpr[CUBE](c), GroupingExpr[GROUPING SETS](ParenExpr(a), ValTuple))`},
		{[]engine.Engine{engine.MySQL}, "SELECT `a`, GROUP_CONCAT(b ORDER BY b SEPARATOR '|') FROM t USE INDEX (i) GROUP BY `a` WITH ROLLUP LIMIT 10, 20",
			"Select[WITH ROLLUP](AliasedExpr(`a`), AliasedExpr(GROUP_CONCAT(b, Order[](b), '|')), AliasedTableExpr[USE INDEX (i)](t), `a`, Limit(10, 20))"},
		{[]engine.Engine{engine.ClickHouse}, `SELECT * EXCEPT (secret), t.* REPLACE (x + 1 AS x) FROM events FINAL SAMPLE 1/10 AS e GLOBAL ANY LEFT JOIN u USING id ARRAY JOIN tags AS tag PREWHERE a = 1 WHERE b = 2 GROUP BY a WITH TOTALS ORDER BY a WITH FILL LIMIT 1 BY a LIMIT 10`,
			`Select[WITH TOTALS](StarExpr(secret), StarExpr(AliasedExpr[x](BinaryExpr[+](x, 1))), JoinTableExpr[ARRAY JOIN](JoinTableExpr[GLOBAL ANY LEFT JOIN](AliasedTableExpr[e][FINAL][SAMPLE 1/10](events), AliasedTableExpr(u)), ArrayJoinExpr(AliasedExpr[tag](tags))), ComparisonExpr[=](a, 1), ComparisonExpr[=](b, 2), a, Order[](a), LimitBy(1, a), Limit(10))`},
		{[]engine.Engine{engine.ClickHouse}, `SELECT * EXCEPT STRICT (a), t.* REPLACE STRICT ((SELECT 1) AS a) FROM t`,
			`Select(StarExpr(a), StarExpr(AliasedExpr[a](Subquery(Select(AliasedExpr(1))))), AliasedTableExpr(t))`},
		{[]engine.Engine{engine.ClickHouse}, `WITH 10 AS n, toDate({variables.d}) AS d SELECT n FROM t QUALIFY x > 1`,
			`Select(With(CommonTableExpr[n](10), CommonTableExpr[d](toDate({variables.d}))), AliasedExpr(n), AliasedTableExpr(t), ComparisonExpr[>](x, 1))`},
		{all, `SELECT n FROM (VALUES (1, 'a'), (2, 'b')) AS v(n, s) UNION ALL VALUES (3, 'c')`,
			`Union[UNION ALL](Select(AliasedExpr(n), AliasedTableExpr[v](Subquery(Values(ValTuple(1, 'a'), ValTuple(2, 'b'))))), Values(ValTuple(3, 'c')))`},
		{[]engine.Engine{engine.PostgreSQL}, `SELECT FROM t`, `Select(AliasedTableExpr(t))`},
		{[]engine.Engine{engine.SQLite}, `SELECT [a] FROM t INDEXED BY i, u NOT INDEXED`,
			`Select(AliasedExpr([a]), AliasedTableExpr[INDEXED BY i](t), AliasedTableExpr[NOT INDEXED](u))`},
	}
	for _, c := range cases {
		for _, e := range c.engines {
			tr, err := Parse(e, c.q)
			if assert.NoError(t, err, "%s: %s", e.Name(), c.q) {
				assert.Equal(t, c.want, shape(c.q, tr.Stmt), "%s: %s", e.Name(), c.q)
				out, err := Print(tr)
				require.NoError(t, err)
				assert.Equal(t, c.q, out)
			}
		}
	}
}
