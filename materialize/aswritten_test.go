package materialize

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// TestPrintsAsWritten: the plans of queries in each engine's syntax print
// every literal and cast type as the user wrote it.
func TestPrintsAsWritten(t *testing.T) {
	cases := []struct {
		name, query string
		d           engine.Engine
		want        []string // in the pre-compute query
	}{
		{"clickhouse regex", `SELECT REGEXP_REPLACE(Referer, '^https?://(?:www\.)?([^/]+)/.*$', '\1') AS d, count() AS n FROM hits WHERE CounterID = {variables.c} GROUP BY d`,
			engine.ClickHouse, []string{`'^https?://(?:www\.)?([^/]+)/.*$'`, `'\1'`}},
		{"mysql escapes", `SELECT count(*) AS n FROM t WHERE a = 'it\'s \\ \%' AND b = {variables.b}`, engine.MySQL, []string{`'it\'s \\ \%'`}},
		// (A literal ending in a backslash is refused by the placeholder
		// scanner on SQLite, issue 27 item 5, before this package reads it.)
		{"sqlite backslash", `SELECT count(*) AS n FROM t WHERE a = 'C:\x\.' AND b = {variables.b}`, engine.SQLite, []string{`'C:\x\.'`}},
		{"postgres casts", `SELECT sum(CAST(j AS double precision)) AS s, sum(k::numeric(10, 2)) AS k FROM t WHERE (p::jsonb ->> 'c')::text = {variables.b}`,
			engine.PostgreSQL, []string{`CAST("j" AS double precision)`, `"k"::numeric(10, 2)`, `("p"::jsonb ->> 'c')::text`}},
		{"extract and ilike", `SELECT extract(minute FROM ts) AS m, count(*) AS n FROM t WHERE name ILIKE 'a%' AND b = {variables.b} GROUP BY 1`,
			engine.PostgreSQL, []string{`extract(minute FROM "ts")`, `"name" ILIKE 'a%'`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := mustPlan(t, c.query, Options{Engine: c.d})
			for _, w := range c.want {
				s, sub := plan.Precompute(), w
				require.Contains(t, s, sub)
			}
		})
	}
}
