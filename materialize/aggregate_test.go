package materialize

import (
	"testing"

	"github.com/xwb1989/sqlparser"
)

func TestIsAggregate(t *testing.T) {
	cases := map[string]bool{
		"count(*)": true, "COUNT(DISTINCT a)": true, "sum(a)": true, "min(a)": true, "max(a, b)": false,
		"min(a, b)": false, "avg(a)": true, "uniqExact(a)": true, "group_concat(a)": true,
		"length(a)": false, "json_extract(p, '$.x')": false, "a + 1": false, "db.count(a)": false,
	}
	for src, want := range cases {
		stmt, err := sqlparser.Parse("select " + src + " from t")
		if err != nil {
			t.Fatalf("%v: unexpected error: %v", src, err)
		}
		e := stmt.(*sqlparser.Select).SelectExprs[0].(*sqlparser.AliasedExpr).Expr
		if got, want := isAggregate(e), want; got != want {
			t.Fatalf("%v: isAggregate(e) = %v, want %v", src, got, want)
		}
	}
}

func TestHasAggregate(t *testing.T) {
	for src, want := range map[string]bool{
		"select a + count(*) from t":             true,
		"select (select count(*) from u) from t": false,
		"select round(avg(a), 2) from t":         true,
		"select a from t":                        false,
	} {
		stmt, err := sqlparser.Parse(src)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := hasAggregate(stmt.(*sqlparser.Select).SelectExprs), want; got != want {
			t.Fatalf("%v: hasAggregate(stmt.(*sqlparser.Select).SelectExprs) = %v, want %v", src, got, want)
		}
	}
}
