package tree_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// normal reads src for r and prints it in the normal form of d.
func normal(t *testing.T, r engine.Engine, src string, d engine.Engine) (string, error) {
	t.Helper()
	return tree.Normal{Engine: d}.Statement(parse(t, r, src).Stmt)
}

// firstExpr is the first expression of the select list of src, read as
// PostgreSQL.
func firstExpr(t *testing.T, src string) tree.Expr {
	t.Helper()
	return parse(t, engine.PostgreSQL, src).Stmt.(*tree.Select).SelectExprs[0].(*tree.AliasedExpr).Expr
}

func TestNormal(t *testing.T) {
	cases := []struct {
		name, src string
		r, d      engine.Engine
		want      string
	}{
		{"limit offset, not MySQL's limit o, n", "select a from t limit 10, 5", engine.MySQL, engine.SQLite, `SELECT "a" FROM "t" LIMIT 5 OFFSET 10`},
		{"no from dual", "select 1 + 2 from dual", engine.MySQL, engine.SQLite, `SELECT 1 + 2`},
		{"quotes doubled on SQLite", "select 'it''s' from t", engine.MySQL, engine.SQLite, `SELECT 'it''s' FROM "t"`},
		{"quotes on MySQL", "select 'it''s' from t", engine.MySQL, engine.MySQL, "SELECT 'it''s' FROM `t`"},
		{"injection text stays a literal", "select a from t where b = ''' OR 1=1 --'", engine.SQLite, engine.SQLite, `SELECT "a" FROM "t" WHERE "b" = ''' OR 1=1 --'`},
		{"not equal", "select a from t where a != 1 and b <> 2", engine.PostgreSQL, engine.PostgreSQL, `SELECT "a" FROM "t" WHERE "a" <> 1 AND "b" <> 2`},
		{"precedence kept", "select (a + b) * c, a + b * c from t where not (a = 1 or b = 2)", engine.SQLite, engine.SQLite,
			`SELECT ("a" + "b") * "c", "a" + ("b" * "c") FROM "t" WHERE NOT ("a" = 1 OR "b" = 2)`},
		{"and chains, or under and", "select a from t where a = 1 and b = 2 and (c = 3 or d = 4) and not e", engine.SQLite, engine.SQLite,
			`SELECT "a" FROM "t" WHERE "a" = 1 AND "b" = 2 AND ("c" = 3 OR "d" = 4) AND (NOT "e")`},
		{"case, in, between, is, like", "select case when a in (1, 2) then 'x' else 'y' end from t where b between 1 and 2 and c is not null and d like 'a%' escape '!'",
			engine.SQLite, engine.SQLite, `SELECT CASE WHEN "a" IN (1, 2) THEN 'x' ELSE 'y' END FROM "t" WHERE "b" BETWEEN 1 AND 2 AND "c" IS NOT NULL AND "d" LIKE 'a%' ESCAPE '!'`},
		{"joins and subqueries", "select e.a from t as e left outer join (select id from u) v using (id) where exists (select 1 from w) group by e.a having count(*) > 1 order by 1 desc",
			engine.SQLite, engine.SQLite, `SELECT "e"."a" FROM "t" AS "e" LEFT JOIN (SELECT "id" FROM "u") AS "v" USING ("id") WHERE EXISTS (SELECT 1 FROM "w") GROUP BY "e"."a" HAVING count(*) > 1 ORDER BY 1 DESC`},
		{"functions keep their spelling", "select COUNT(distinct a), json_extract(p, '$.x'), cast(a as signed) from t", engine.MySQL, engine.SQLite,
			`SELECT COUNT(DISTINCT "a"), json_extract("p", '$.x'), CAST("a" as signed) FROM "t"`},
		{"casts as written", "select x::double precision, CAST(y AS Nullable(String)), cast(z, 'String') from t", engine.ClickHouse, engine.ClickHouse,
			"SELECT `x`::double precision, CAST(`y` AS Nullable(String)), CAST(`z`, 'String') FROM `t`"},
		{"convert is a cast", "select convert(a, signed) from t", engine.MySQL, engine.MySQL, "SELECT CAST(`a` AS SIGNED) FROM `t`"},
		{"extract, substring, mod, interval", "select extract(year from d), substring(s from 2 for 3), a mod 2, d - interval '1' day from t", engine.PostgreSQL, engine.PostgreSQL,
			`SELECT EXTRACT(year FROM "d"), substr("s", 2, 3), "a" % 2, "d" - INTERVAL '1' DAY FROM "t"`},
		{"windows", "select sum(a) over (partition by b order by c rows between unbounded preceding and current row) from t", engine.PostgreSQL, engine.PostgreSQL,
			`SELECT sum("a") OVER (PARTITION BY "b" ORDER BY "c" ASC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM "t"`},
		{"union", "select a from t union all select b from u", engine.SQLite, engine.SQLite, `SELECT "a" FROM "t" UNION ALL SELECT "b" FROM "u"`},
		{"keywords as names are quoted", "select `timestamp`, `order` from `select`", engine.MySQL, engine.PostgreSQL, `SELECT "timestamp", "order" FROM "select"`},
		{"null and booleans in capitals", "select null, true from t where a is not false", engine.PostgreSQL, engine.PostgreSQL, `SELECT NULL, TRUE FROM "t" WHERE "a" IS NOT FALSE`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := normal(t, c.r, c.src, c.d)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestNormalRefuses(t *testing.T) {
	for _, c := range []struct {
		e        engine.Engine
		src, why string
	}{
		{engine.MySQL, "select a from t where a <=> 1", "the operator <=>"},
		{engine.MySQL, "select a div 2 from t", "the operator DIV"},
		{engine.ClickHouse, "select a from t final", "partitions and index hints"},
		{engine.PostgreSQL, "select a from t where b > current_date", "the expression CURRENT_DATE"},
		{engine.MySQL, "select a from t partition (p0)", "partitions and index hints"},
		{engine.MySQL, "select a from t use index (i)", "partitions and index hints"},
		{engine.MySQL, "select convert(a using utf8) from t", "a character set in CAST"},
		{engine.PostgreSQL, "select a from t where a = {variables.x}", "a variable here"},
		{engine.PostgreSQL, "with w as (select 1) select * from w", "WITH"},
		{engine.PostgreSQL, "select count(*) filter (where a) from t", "FILTER"},
		{engine.PostgreSQL, "select date '2024-01-01' from t", "the typed literal date '2024-01-01'"},
		{engine.PostgreSQL, "select a from t where b = any (select c from u)", "the operator = ANY"},
		{engine.PostgreSQL, "select a from t order by a nulls first", "ORDER BY ... NULLS FIRST"},
		{engine.PostgreSQL, "select trim(both 'x' from a) from t", "the call trim with keywords"},
	} {
		_, err := normal(t, c.e, c.src, engine.SQLite)
		var te *tree.Error
		require.ErrorAs(t, err, &te, c.src)
		assert.ErrorIs(t, err, tree.ErrUnprintable, c.src)
		assert.Equal(t, c.why, te.Detail, c.src)
	}
}

func TestCanonical(t *testing.T) {
	expr := func(s string) tree.Expr { return firstExpr(t, "select "+s) }
	for _, same := range [][2]string{
		{"count(a)", "COUNT(A)"},
		{"a+b", "(a + b)"},
		{"a != 1", "a <> 1"},
		{"cast(a as INT)", "CAST(a AS int)"},
	} {
		assert.Equal(t, tree.Canonical(expr(same[0])), tree.Canonical(expr(same[1])), same[0])
	}
	for _, other := range [][2]string{
		{"a - b", "a + b"},
		{"'A'", "'a'"},
		{"(a + b) * c", "a + b * c"},
	} {
		assert.NotEqual(t, tree.Canonical(expr(other[0])), tree.Canonical(expr(other[1])), other[0])
	}
}

func TestNormalHook(t *testing.T) {
	e := firstExpr(t, "select sum(a) + b from t")
	hook := func(e tree.Expr) (string, bool, error) {
		switch x := e.(type) {
		case *tree.FuncExpr:
			return `"_a0"`, true, nil
		case *tree.ColName:
			return "", false, errors.New("the column " + x.Name.Name)
		}
		return "", false, nil
	}
	_, err := tree.Normal{Engine: engine.PostgreSQL, Hook: hook}.Expr(e)
	require.EqualError(t, err, "the column b")
	e = firstExpr(t, "select sum(a) + 1 from t")
	got, err := tree.Normal{Engine: engine.PostgreSQL, Hook: hook}.Expr(e)
	require.NoError(t, err)
	require.Equal(t, `"_a0" + 1`, got)
}

// FuzzNormal: the normal form never panics, and what it prints is read
// back by the same engine's parser and prints the same again.
func FuzzNormal(f *testing.F) {
	for _, q := range loadCorpus(f) {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, e := range engine.All() {
			tr, err := tree.Parse(e, q)
			if err != nil {
				continue
			}
			out, err := tree.Normal{Engine: e}.Statement(tr.Stmt)
			if err != nil {
				require.ErrorIs(t, err, tree.ErrUnprintable)
				continue
			}
			again, err := tree.Parse(e, out)
			require.NoError(t, err, "%s: %s", e.Name(), out)
			out2, err := tree.Normal{Engine: e}.Statement(again.Stmt)
			require.NoError(t, err, "%s: %s", e.Name(), out)
			require.Equal(t, out, out2, e.Name())
		}
	})
}

// TestNormalRefusalSaysWhere: with the source, a refusal says where the
// construct stands.
func TestNormalRefusalSaysWhere(t *testing.T) {
	src := "select a\nfrom t\nwhere b = any (select c from u)"
	_, err := tree.Normal{Engine: engine.PostgreSQL, Src: src}.Statement(parse(t, engine.PostgreSQL, src).Stmt)
	var te *tree.Error
	require.ErrorAs(t, err, &te)
	assert.Equal(t, [2]int{3, 7}, [2]int{te.Line, te.Column})
	assert.Equal(t, "sql: the operator = ANY (line 3, column 7)", err.Error())
}

// TestNodeWords: a construct is named in a user's words in messages, never
// by its Go type.
func TestNodeWords(t *testing.T) {
	assert.Equal(t, "index expression", tree.NodeWords(&tree.IndexExpr{}))
	assert.Equal(t, "aliased table expression", tree.NodeWords(&tree.AliasedTableExpr{}))
	assert.Equal(t, "select", tree.NodeWords(&tree.Select{}))
}
