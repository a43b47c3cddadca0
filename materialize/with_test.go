package materialize

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWithChains: a CTE read once stands as a derived table, and the
// conditions of variables in its WHERE are carried out, level by level,
// where its rows are keyed by the compared column; otherwise the query is
// refused with a reason that says which and where.
func TestWithChains(t *testing.T) {
	for _, c := range []struct {
		name, query string
		code        Code // "" when it materializes
		reason      string
	}{
		{"projection", "WITH e AS (SELECT event, distinct_id FROM events WHERE event = {variables.e}) SELECT distinct_id FROM e ORDER BY distinct_id", "", ""},
		{"chain through a qualified column", "WITH a AS (SELECT x.event, x.distinct_id FROM events x WHERE x.event = {variables.e}), b AS (SELECT event, distinct_id FROM a) SELECT count(*) AS n FROM b", "", ""},
		{"grouped by the column", "WITH g AS (SELECT event, count(*) AS n FROM events WHERE event IN {variables.e} GROUP BY event) SELECT sum(n) AS n FROM g", "", ""},
		{"read twice", "WITH e AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM e JOIN e AS f ON f.event = e.event", CodeUnsupportedQuery, "starts with WITH"},
		{"never read", "WITH e AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM events", CodeUnsupportedQuery, "starts with WITH"},
		{"recursive", "WITH RECURSIVE e AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM e", CodeUnsupportedQuery, "starts with WITH"},
		{"column list", "WITH e(ev) AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM e", CodeUnsupportedQuery, "starts with WITH"},
		{"not keyed: grouped by another column", "WITH g AS (SELECT distinct_id, count(*) AS n FROM events WHERE event = {variables.e} GROUP BY distinct_id) SELECT count(*) AS users FROM g",
			CodeNotInWhere, "variable 'e' is used in a subquery in FROM"},
		{"not keyed: a LIMIT picks rows first", "WITH e AS (SELECT event FROM events WHERE event = {variables.e} ORDER BY event LIMIT 5) SELECT count(*) AS n FROM e",
			CodeNotInWhere, "variable 'e' is used in a subquery in FROM"},
		{"window in a CTE", "WITH r AS (SELECT event, row_number() OVER (ORDER BY timestamp) AS k FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM r",
			CodeUnsupportedQuery, "window functions (OVER) materialize only in the outer SELECT list"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := Analyze(c.query, Options{Engine: engine.SQLite})
			require.NoError(t, err)
			if c.code == "" {
				require.True(t, a.Materializable(), "%v", a.Reasons)
				return
			}
			require.False(t, a.Materializable())
			assert.Equal(t, c.code, a.Reasons[0].Code)
			assert.Contains(t, a.Reasons[0].Located(), c.reason)
		})
	}
}

// TestWindows: window functions of the SELECT list whose PARTITION BY
// holds every variable's key materialize; any other window is refused
// with the window's position and what keeps it from materializing.
func TestWindows(t *testing.T) {
	for _, c := range []struct {
		name, query string
		ok          bool
		line, col   int
		why         string // what the refusal says
	}{
		{"partition by the key", "SELECT a, rank() OVER (PARTITION BY k ORDER BY a) AS r FROM t WHERE k = {variables.k}", true, 0, 0, ""},
		{"partition by the key and more, a list", "SELECT a, count(*) OVER (PARTITION BY b, k) AS n FROM t WHERE k IN {variables.k}", true, 0, 0, ""},
		{"partition by another column", "SELECT a, rank() OVER (PARTITION BY b ORDER BY a) AS r FROM t WHERE k = {variables.k}", false, 1, 18, "variable 'k' is compared to \"k\", which the window's PARTITION BY does not hold"},
		{"no partition", "SELECT a, rank() OVER (ORDER BY a) AS r FROM t WHERE k = {variables.k}", false, 1, 18, "variable 'k' is compared to \"k\", which the window's PARTITION BY does not hold"},
		{"a range variable", "SELECT a, lag(a) OVER (PARTITION BY k ORDER BY ts) AS p FROM t WHERE k = {variables.k} AND ts >= {variables.d}", false, 1, 18, "variable 'd' is a range"},
		{"an aggregating query", "SELECT k, count(*) AS n, rank() OVER (PARTITION BY k ORDER BY count(*)) AS r FROM t WHERE k = {variables.k} GROUP BY k", false, 1, 33, "in a query that aggregates"},
		{"in a subquery in FROM", "SELECT a FROM (SELECT a, k, rank() OVER (PARTITION BY k ORDER BY a) AS r FROM t) x WHERE k = {variables.k}", false, 1, 36, "materialize only in the outer SELECT list"},
		{"a named window", "SELECT a, rank() OVER w AS r FROM t WHERE k = {variables.k} WINDOW w AS (PARTITION BY k ORDER BY a)", false, 1, 18, "a WINDOW clause"},
		{"under OR", "SELECT a, rank() OVER (PARTITION BY k, j ORDER BY a) AS r FROM t WHERE (k = {variables.k} OR j = {variables.j})", false, 1, 18, "variable 'k' is under OR"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := Analyze(c.query, Options{Engine: engine.PostgreSQL})
			require.NoError(t, err)
			if c.ok {
				require.True(t, a.Materializable(), "%v", a.Reasons)
				return
			}
			require.False(t, a.Materializable())
			r := a.Reasons[0]
			assert.Equal(t, CodeUnsupportedQuery, r.Code)
			assert.Contains(t, r.Message, c.why)
			assert.Equal(t, [2]int{c.line, c.col}, [2]int{r.Line, r.Column})
		})
	}
	// With a live tail the read adds rows to the partitions: refused.
	a, err := Analyze("SELECT a, rank() OVER (PARTITION BY k ORDER BY a) AS r FROM t WHERE k = {variables.k}",
		Options{Engine: engine.PostgreSQL, TailColumn: "ts"})
	require.NoError(t, err)
	require.False(t, a.Materializable())
	assert.Contains(t, a.Reasons[0].Message, "with a live tail")
}
