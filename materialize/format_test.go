package materialize

import (
	"errors"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
	"github.com/stretchr/testify/require"
)

// printSelect reads src, written for MySQL, and prints it back in
// dialect d; a query the tree does not read is the tree's error.
func printSelect(t *testing.T, src string, d engine.Engine) (string, error) {
	t.Helper()
	tr, err := tree.Parse(engine.MySQL, src)
	if err != nil {
		return "", err
	}
	require.NoError(t, normalize(tr))
	p := &printer{d: d}
	p.selectStatement(tr.Stmt)
	return p.b.String(), p.err
}

func TestPrinter(t *testing.T) {
	cases := []struct {
		name, src string
		d         engine.Engine
		want      string
	}{
		{"limit offset, not MySQL's limit o, n", "select a from t limit 10, 5", engine.SQLite, `SELECT "a" FROM "t" LIMIT 5 OFFSET 10`},
		{"no from dual", "select 1 + 2", engine.SQLite, `SELECT 1 + 2`},
		{"quotes doubled on SQLite", "select 'it''s' from t", engine.SQLite, `SELECT 'it''s' FROM "t"`},
		{"quotes escaped on MySQL", "select 'it''s' from t", engine.MySQL, "SELECT 'it''s' FROM `t`"},
		{"injection text stays a literal", "select a from t where b = ''' OR 1=1 --'", engine.SQLite, `SELECT "a" FROM "t" WHERE "b" = ''' OR 1=1 --'`},
		{"not equal", "select a from t where a != 1 and b <> 2", engine.PostgreSQL, `SELECT "a" FROM "t" WHERE "a" <> 1 AND "b" <> 2`},
		{"precedence kept", "select (a + b) * c, a + b * c from t where not (a = 1 or b = 2)", engine.SQLite,
			`SELECT ("a" + "b") * "c", "a" + ("b" * "c") FROM "t" WHERE NOT ("a" = 1 OR "b" = 2)`},
		{"case, in, between, is, like", "select case when a in (1, 2) then 'x' else 'y' end from t where b between 1 and 2 and c is not null and d like 'a%' escape '!'",
			engine.SQLite, `SELECT CASE WHEN "a" IN (1, 2) THEN 'x' ELSE 'y' END FROM "t" WHERE "b" BETWEEN 1 AND 2 AND "c" IS NOT NULL AND "d" LIKE 'a%' ESCAPE '!'`},
		{"joins and subqueries", "select e.a from t as e left join (select id from u) as v using (id) where exists (select 1 from w) group by e.a having count(*) > 1 order by 1 desc",
			engine.SQLite, `SELECT "e"."a" FROM "t" AS "e" LEFT JOIN (SELECT "id" FROM "u") AS "v" USING ("id") WHERE EXISTS (SELECT 1 FROM "w") GROUP BY "e"."a" HAVING count(*) > 1 ORDER BY 1 DESC`},
		{"functions keep their spelling", "select COUNT(distinct a), json_extract(p, '$.x'), cast(a as signed) from t", engine.SQLite,
			`SELECT COUNT(DISTINCT "a"), json_extract("p", '$.x'), CAST("a" as signed) FROM "t"`},
		{"union", "select a from t union all select b from u", engine.SQLite, `SELECT "a" FROM "t" UNION ALL SELECT "b" FROM "u"`},
		{"keywords as names are quoted", "select `timestamp`, `order` from `select`", engine.PostgreSQL, `SELECT "timestamp", "order" FROM "select"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := printSelect(t, c.src, c.d)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestPrinterRefuses(t *testing.T) {
	for _, src := range []string{
		"select a from t where a <=> 1",
		"select a div 2 from t",
		"select a from t final",
		"select a from t where b > current_date",
		"select a from t for update",
		"select a from t partition (p0)",
		"select a from t use index (i)",
		"select a from t straight_join u",
		"select match(a) against ('x') from t",
		"select convert(a using utf8) from t",
		"select a from t where a = :x",
	} {
		_, err := printSelect(t, src, engine.SQLite)
		var ue *unsupportedError
		var te *tree.Error
		if !errors.As(err, &te) { // or the tree does not read it
			require.ErrorAs(t, err, &ue, "%v", src)
		}
	}
}

func TestCanonical(t *testing.T) {
	parse := func(s string) tree.Expr { return parseExpr(t, s) }
	got, want := canonical(parse("count(a)")), canonical(parse("COUNT(A)"))
	require.Equal(t, want, got, "canonical(parse(\"count(a)\"))")
	if got, want := canonical(parse("a+b")), canonical(parse("(a + b)")); got != want {
		t.Fatalf("canonical(parse(\"a+b\")) = %q, want %q", got, want)
	}
	if got, want := canonical(parse("a - b")), canonical(parse("a + b")); got == want {
		t.Fatalf("canonical(parse(\"a - b\")) = %q, want anything else", got)
	}
}
