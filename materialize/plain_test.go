package materialize

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// Queries without aggregates store their rows; ORDER BY names an output by
// position, or a hidden stored column for what the query does not select.
func TestPlainRewrite(t *testing.T) {
	cases := []struct {
		name, query, pre, read string
	}{
		{"order by alias and hidden expression",
			"SELECT uuid AS id, event FROM events WHERE distinct_id = {variables.u} ORDER BY length(uuid) DESC, id LIMIT 3",
			`SELECT "uuid" AS "_c0", "event" AS "_c1", length("uuid") AS "_o0", "distinct_id" AS "u" FROM "events"`,
			`SELECT "_c0" AS "id", "_c1" AS "event" FROM "t" WHERE "u" = ? ORDER BY "_o0" DESC, 1 ASC LIMIT 3`},
		{"other WHERE terms stay in the pre-compute",
			"SELECT uuid FROM events WHERE (event = 'a' OR event = 'b') AND distinct_id = {variables.u} AND uuid > '0'",
			`SELECT "uuid" AS "_c0", "distinct_id" AS "u" FROM "events" WHERE ("event" = 'a' OR "event" = 'b') AND "uuid" > '0'`,
			`SELECT "_c0" AS "uuid" FROM "t" WHERE "u" = ?`},
		{"distinct",
			"SELECT DISTINCT event FROM events WHERE distinct_id = {variables.u}",
			`SELECT "event" AS "_c0", "distinct_id" AS "u" FROM "events"`,
			`SELECT DISTINCT "_c0" AS "event" FROM "t" WHERE "u" = ?`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := mustPlan(t, c.query, Options{Engine: engine.SQLite})
			got, want := plan.Precompute(), c.pre
			require.Equal(t, want, got, "plan.Precompute()")
			read, _, err := plan.Read("t", map[string]any{"u": "x"})
			require.NoError(t, err)
			require.Equal(t, c.read, read)
		})
	}
}
