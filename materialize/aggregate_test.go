package materialize

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

func TestIsAggregate(t *testing.T) {
	cases := map[string]bool{
		"count(*)": true, "COUNT(DISTINCT a)": true, "sum(a)": true, "min(a)": true, "max(a, b)": false,
		"min(a, b)": false, "avg(a)": true, "uniqExact(a)": true, "group_concat(a)": true,
		"length(a)": false, "json_extract(p, '$.x')": false, "a + 1": false, "db.count(a)": false,
	}
	for src, want := range cases {
		e := parseExpr(t, src)
		got, want := isAggregate(e), want
		require.Equal(t, want, got, "%v: isAggregate(e)", src)
	}
}

func TestHasAggregate(t *testing.T) {
	for src, want := range map[string]bool{
		"select a + count(*) from t":             true,
		"select (select count(*) from u) from t": false,
		"select round(avg(a), 2) from t":         true,
		"select a from t":                        false,
	} {
		sel := parseSelect(t, engine.SQLite, src)
		got, want := hasAggregate(selectNodes(sel.SelectExprs)...), want
		require.Equal(t, want, got, "%v: hasAggregate(sel.SelectExprs)", src)
	}
}
