package materialize

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// Each aggregate is stored as parts and combined again by the read; those
// that cannot be combined over a range pass through only when every
// variable is compared with =, and DISTINCT ones keep their argument in the
// stored grain.
func TestCombine(t *testing.T) {
	cases := []struct {
		agg   string
		equal string // the read expression with an = variable; "" if refused
		rng   string // with a range variable; "" if refused
	}{
		{"count(*)", `coalesce(sum("_a0"), 0)`, `coalesce(sum("_a0"), 0)`},
		{"count(b)", `coalesce(sum("_a0"), 0)`, `coalesce(sum("_a0"), 0)`},
		{"sum(b)", `sum("_a0")`, `sum("_a0")`},
		{"total(b)", `total("_a0")`, `total("_a0")`},
		{"min(b)", `min("_a0")`, `min("_a0")`},
		{"max(DISTINCT b)", `max("_a0")`, `max("_a0")`},
		{"avg(b)", `(sum("_a0") / CAST(sum("_a1") AS REAL))`, `(sum("_a0") / CAST(sum("_a1") AS REAL))`},
		{"2 / avg(b)", `2 / (sum("_a0") / CAST(sum("_a1") AS REAL))`, `2 / (sum("_a0") / CAST(sum("_a1") AS REAL))`},
		{"count(DISTINCT b)", `coalesce(max("_a0"), 0)`, `count(DISTINCT "_d0")`},
		{"sum(DISTINCT b)", `max("_a0")`, `sum(DISTINCT "_d0")`},
		{"avg(DISTINCT b)", `max("_a0")`, `avg(DISTINCT "_d0")`},
		{"count(DISTINCT b) + count(*)", `coalesce(max("_a0"), 0) + coalesce(sum("_a1"), 0)`, `count(DISTINCT "_d0") + coalesce(sum("_a0"), 0)`},
		{"median(b)", "", ""}, // no known value over no rows, and no GROUP BY here
		{"json_group_array(b)", "", ""},
		{"avg(b) * 2 + count(*)", `((sum("_a0") / CAST(sum("_a1") AS REAL)) * 2) + coalesce(sum("_a2"), 0)`, `((sum("_a0") / CAST(sum("_a1") AS REAL)) * 2) + coalesce(sum("_a2"), 0)`},
	}
	opts := Options{Engine: engine.SQLite, Types: map[string]variable.Type{"x": variable.Number}, ExactColumns: []string{"t.b"}}
	for _, c := range cases {
		for _, op := range []string{"=", ">="} {
			want := c.equal
			if op != "=" {
				want = c.rng
			}
			a, err := Analyze("SELECT "+c.agg+" AS v FROM t WHERE a "+op+" {variables.x}", opts)
			require.NoError(t, err)
			if want == "" {
				require.False(t, a.Materializable(), "%s with %s: a.Materializable() is true", c.agg, op)
				require.Equal(t, CodeAggregate, a.Reasons[0].Code)
				continue
			}
			require.True(t, a.Materializable(), "%s with %s: %s: a.Materializable() is false", c.agg, op, a.Reason())
			read, _, err := a.Plan.Read("t", map[string]any{"x": int64(1)})
			require.NoError(t, err)
			if got, want := read, "SELECT "+want+` AS "v" FROM "t" WHERE "x" `+op+" ?"; got != want {
				t.Fatalf("%s with %s: read = %q, want %q", c.agg, op, got, want)
			}
		}
	}
}

// With GROUP BY, an aggregate without a known value over no rows passes
// through under = : a group that matches nothing is no row at all.
func TestCombineGrouped(t *testing.T) {
	plan := mustPlan(t, "SELECT c, median(b) AS m FROM t WHERE a = {variables.x} GROUP BY c ORDER BY m", Options{Engine: engine.SQLite})
	read, _, err := plan.Read("t", map[string]any{"x": "y"})
	require.NoError(t, err)
	require.Equal(t, `SELECT "_k0" AS "c", max("_a0") AS "m" FROM "t" WHERE "x" = ? GROUP BY "_k0" ORDER BY 2 ASC`, read)
}

// TestAverageTypePerDialect: a stored average reads back with avg's own
// type: SQLite's and ClickHouse's avg is a double, so the count is cast to
// one; PostgreSQL's and MySQL's is a decimal over integers and decimals, a
// double over doubles, which the sum of the stored sums over the sum of
// the stored counts is too (a double division answered "12.5" as a number
// where the inline run answered the decimal "12.5000" as text).
func TestAverageTypePerDialect(t *testing.T) {
	for d, want := range map[engine.Engine]string{engine.SQLite: `(sum("_a0") / CAST(sum("_a1") AS REAL))`,
		engine.PostgreSQL: `(sum("_a0") / sum("_a1"))`, engine.MySQL: "(sum(`_a0`) / sum(`_a1`))",
		engine.ClickHouse: "(sum(`_a0`) / CAST(sum(`_a1`) AS Float64))"} {
		plan := mustPlan(t, "SELECT avg(b) FROM t WHERE a >= {variables.x}", Options{Engine: d, ExactColumns: []string{"T.B"}})
		read, _, err := plan.Read("t", map[string]any{"x": int64(1)})
		require.NoError(t, err)
		require.Contains(t, read, want, "%v", d.Name())
	}
}

// TestCountTypePerDialect: a stored count reads back as the engine's
// integer, the type of count inline: PostgreSQL's sum of bigints is a
// numeric and MySQL's a DECIMAL, which their drivers answer as text ("113"
// where the inline run answered 113).
func TestCountTypePerDialect(t *testing.T) {
	for d, want := range map[engine.Engine]string{engine.SQLite: `coalesce(sum("_a0"), 0) AS`,
		engine.PostgreSQL: `CAST(coalesce(sum("_a0"), 0) AS bigint) AS`, engine.MySQL: "CAST(coalesce(sum(`_a0`), 0) AS SIGNED) AS",
		engine.ClickHouse: "coalesce(sum(`_a0`), 0) AS"} {
		plan := mustPlan(t, "SELECT count(*) AS n FROM t WHERE a >= {variables.x}", Options{Engine: d})
		read, _, err := plan.Read("t", map[string]any{"x": int64(1)})
		require.NoError(t, err)
		require.Contains(t, read, want, "%v", d.Name())
	}
}
