package materialize

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// SQLite reads a name in WHERE, GROUP BY and HAVING as a column of FROM
// before an output alias; queries where that choice matters are refused.
func TestCheckAliases(t *testing.T) {
	cases := []struct {
		name, query string
		code        Code // "" when materializable
	}{
		{"alias shadowing a column in GROUP BY", "SELECT date(ts) AS ts, count(*) FROM t WHERE a = {variables.x} GROUP BY ts", CodeUnsupportedQuery},
		{"alias shadowing a column in HAVING", "SELECT b AS a, count(*) FROM t WHERE c = {variables.x} GROUP BY b HAVING a = '1' AND max(a) > 0", CodeUnsupportedQuery},
		{"alias shadowing a column used in ORDER BY aggregate", "SELECT b AS a, count(*) FROM t WHERE c = {variables.x} GROUP BY a ORDER BY min(a)", CodeUnsupportedQuery},
		{"alias of the same column", "SELECT t.a AS a, count(*) FROM t WHERE b = {variables.x} GROUP BY a", ""},
		{"alias not shadowing", "SELECT date(ts) AS day, count(*) FROM t WHERE b = {variables.x} GROUP BY day HAVING day > '2025'", ""},
		{"alias only in ORDER BY", "SELECT b AS a FROM t WHERE a = {variables.x} ORDER BY a", CodeNotColumn},
		{"compared to an alias", "SELECT json_extract(p, '$.c') AS country, count(*) FROM t WHERE country = {variables.x} GROUP BY 1", CodeNotColumn},
		{"compared to a qualified column named like an alias", "SELECT json_extract(p, '$.c') AS country, count(*) FROM t WHERE t.country = {variables.x} GROUP BY 1", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			analyzeCase(t, c.query, Options{Engine: engine.SQLite}, c.code)
		})
	}
}
