package materialize

import (
	"time"

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
		{"read twice", "WITH e AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM e JOIN e AS f ON f.event = e.event", CodeUnsupportedQuery, "the WITH query e is read 2 times, which cannot be materialized; repeat it as a subquery in FROM at each place that reads it; a WITH query materializes when it is read exactly once, as a derived table would be (line 1, column 1)"},
		{"never read", "WITH e AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM events", CodeUnsupportedQuery, "the WITH query e is never read"},
		{"recursive", "WITH RECURSIVE e AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM e", CodeUnsupportedQuery, "WITH RECURSIVE cannot be materialized"},
		{"column list", "WITH e(ev) AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM e", CodeUnsupportedQuery, "the WITH query e has a column list, which cannot be materialized; name the columns in its SELECT list (expr AS name)"},
		{"marked materialized", "WITH e AS MATERIALIZED (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM e", CodeUnsupportedQuery, "the WITH query e is marked MATERIALIZED, which cannot be materialized; drop the marker"},
		{"a WITH inside", "WITH e AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM e WHERE e.event IN (WITH x AS (SELECT 'a' AS v) SELECT v FROM x)", CodeUnsupportedQuery, "a WITH clause inside the query cannot be materialized"},
		{"not keyed: grouped by another column, the CTE alone in FROM", "WITH g AS (SELECT distinct_id, count(*) AS n FROM events WHERE event = {variables.e} GROUP BY distinct_id) SELECT count(*) AS users, sum(n) AS n FROM g", "", ""},
		{"not keyed: a LIMIT picks rows first, the CTE alone in FROM", "WITH e AS (SELECT event FROM events WHERE event = {variables.e} ORDER BY event LIMIT 5) SELECT count(*) AS n FROM e", "", ""},
		{"not keyed: grouped by another column, joined", "WITH g AS (SELECT distinct_id, count(*) AS n FROM events WHERE event = {variables.e} GROUP BY distinct_id) SELECT count(*) AS users FROM g JOIN users u ON u.id = g.distinct_id",
			CodeNotInWhere, "variable 'e' is used in a subquery in FROM"},
		{"not keyed: a chain of two aggregations", "WITH g AS (SELECT distinct_id, count(*) AS n FROM events WHERE event = {variables.e} GROUP BY distinct_id), h AS (SELECT n, count(*) AS users FROM g GROUP BY n) SELECT max(users) AS most FROM h", "", ""},
		{"not keyed: a chain whose middle joins a table", "WITH g AS (SELECT distinct_id, count(*) AS n FROM events WHERE event = {variables.e} GROUP BY distinct_id), h AS (SELECT g.n, count(*) AS users FROM g JOIN users u ON u.id = g.distinct_id GROUP BY g.n) SELECT max(users) AS most FROM h",
			CodeNotInWhere, "variable 'e' is used in a subquery in FROM"},
		{"UNION ALL, the variable in every branch", "WITH u AS (SELECT event, distinct_id FROM events WHERE event = {variables.e} UNION ALL SELECT event, distinct_id FROM archive WHERE event = {variables.e}) SELECT count(*) AS n FROM u", "", ""},
		{"UNION of aggregates keyed by the column, a list", "WITH u AS (SELECT event, count(*) AS n FROM events WHERE event IN {variables.e} GROUP BY event UNION SELECT event, count(*) AS n FROM archive WHERE event IN ({variables.e}) GROUP BY event) SELECT sum(n) AS n FROM u", "", ""},
		{"UNION ALL under a chain", "WITH u AS (SELECT x.event AS ev, x.timestamp FROM events x WHERE x.event = {variables.e} UNION ALL SELECT kind, at FROM archive WHERE kind = {variables.e}), v AS (SELECT ev FROM u) SELECT count(*) AS n FROM v", "", ""},
		{"UNION ALL, a branch without the condition", "WITH u AS (SELECT event FROM events WHERE event = {variables.e} UNION ALL SELECT event FROM archive) SELECT count(*) AS n FROM u",
			CodeNotInWhere, "variable 'e' is used in a UNION in FROM; only the outer WHERE can be materialized; compare it in the WHERE of every branch"},
		{"UNION ALL, the condition on another position", "WITH u AS (SELECT event, plan FROM events WHERE event = {variables.e} UNION ALL SELECT plan, event FROM archive WHERE event = {variables.e}) SELECT count(*) AS n FROM u",
			CodeNotInWhere, "variable 'e' is used in a UNION in FROM"},
		{"UNION ALL with a LIMIT", "WITH u AS (SELECT event FROM events WHERE event = {variables.e} UNION ALL SELECT event FROM archive WHERE event = {variables.e} ORDER BY event LIMIT 3) SELECT count(*) AS n FROM u",
			CodeNotInWhere, "variable 'e' is used in a UNION in FROM"},
		{"EXCEPT", "WITH u AS (SELECT event FROM events WHERE event = {variables.e} EXCEPT SELECT event FROM archive WHERE event = {variables.e}) SELECT count(*) AS n FROM u",
			CodeNotInWhere, "variable 'e' is used in a UNION in FROM"},
		{"LEFT JOIN, the CTE on the preserved side", "WITH s AS (SELECT distinct_id, event FROM events WHERE event = {variables.e}) SELECT count(*) AS n, count(u.id) AS known FROM s LEFT JOIN users u ON u.id = s.distinct_id", "", ""},
		{"LEFT JOIN inside the CTE", "WITH s AS (SELECT e.distinct_id, e.event FROM events e LEFT JOIN users u ON u.id = e.distinct_id WHERE e.event = {variables.e}) SELECT count(*) AS n FROM s", "", ""},
		{"RIGHT JOIN, the CTE on the preserved side", "WITH s AS (SELECT distinct_id, event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM users u RIGHT JOIN s ON u.id = s.distinct_id", "", ""},
		{"LEFT JOIN, the CTE on the side of NULLs", "WITH s AS (SELECT distinct_id, event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM users u LEFT JOIN s ON u.id = s.distinct_id",
			CodeNotInWhere, "variable 'e' is used in a subquery on the side of an outer join that gets NULLs; only the outer WHERE can be materialized: the join keeps the other side's rows whatever it matches there, so the condition cannot move to the outer WHERE; compare it with a column of the side the join keeps (line 1, column 64)"},
		{"RIGHT JOIN, the CTE on the side of NULLs", "WITH s AS (SELECT distinct_id, event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM s RIGHT JOIN users u ON u.id = s.distinct_id",
			CodeNotInWhere, "variable 'e' is used in a subquery on the side of an outer join that gets NULLs"},
		{"cross join", "WITH s AS (SELECT distinct_id, event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM s, users u", "", ""},
		{"window in a CTE joined", "WITH r AS (SELECT event, distinct_id, row_number() OVER (ORDER BY timestamp) AS k FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM r JOIN events e ON e.distinct_id = r.distinct_id",
			CodeUnsupportedQuery, "a window function (OVER) in a subquery or a WITH query materializes only where a read computes it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := analyzeCase(t, c.query, Options{Engine: engine.SQLite}, c.code)
			if c.code != "" {
				assert.Contains(t, a.Reasons[0].Located(), c.reason)
			}
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
		// Where the table cannot compute them when it is built, computed
		// at read over the rows it answers (windowsOverRows).
		{"partition by another column", "SELECT a, rank() OVER (PARTITION BY b ORDER BY a) AS r FROM t WHERE k = {variables.k}", true, 0, 0, ""},
		{"no partition", "SELECT a, rank() OVER (ORDER BY a) AS r FROM t WHERE k = {variables.k}", true, 0, 0, ""},
		{"a range variable", "SELECT a, lag(a) OVER (PARTITION BY k ORDER BY ts) AS p FROM t WHERE k = {variables.k} AND ts >= {variables.d}", true, 0, 0, ""},
		{"in a subquery over the rows the variables select", "SELECT r, count(*) AS n FROM (SELECT a, rank() OVER (ORDER BY a) AS r FROM t WHERE k = {variables.k}) x GROUP BY r", true, 0, 0, ""},
		{"in a subquery beside a join", "SELECT x.a FROM (SELECT a, rank() OVER (ORDER BY a) AS r FROM t WHERE k = {variables.k}) x JOIN u ON u.a = x.a", false, 1, 28, "beside a join"},
		// Over the groups of an aggregating query: computed over the read
		// of its groups (windowgroups.go), whatever the variables.
		{"over groups", "SELECT k, count(*) AS n, rank() OVER (PARTITION BY k ORDER BY count(*)) AS r FROM t WHERE k = {variables.k} GROUP BY k", true, 0, 0, ""},
		{"over groups, a range", "SELECT date(ts) AS day, count(*) AS n, sum(count(*)) OVER (ORDER BY date(ts) ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS n_7d FROM t WHERE ts >= {variables.d} GROUP BY date(ts) ORDER BY day", true, 0, 0, ""},
		{"over groups, an item without a name", "SELECT k, count(*), rank() OVER (ORDER BY count(*)) AS r FROM t WHERE k = {variables.k} GROUP BY k", false, 1, 28, "in a query that aggregates materializes when it reads the query's groups: name every SELECT item"},
		{"over groups, a column not grouped by", "SELECT k, a, count(*) AS n, rank() OVER (ORDER BY count(*)) AS r FROM t WHERE k = {variables.k} GROUP BY k", false, 1, 36, "read only group keys and aggregates"},
		// No variable beneath the window: its rows are the same whatever
		// the value, and the table computes it as a run does.
		{"in a subquery in FROM without a variable", "SELECT a FROM (SELECT a, k, rank() OVER (PARTITION BY k ORDER BY a) AS r FROM t) x WHERE k = {variables.k}", true, 0, 0, ""},
		{"in a subquery in FROM over the variable's rows, beside a join", "SELECT x.a FROM (SELECT a, rank() OVER (ORDER BY a) AS r FROM t WHERE k = {variables.k}) x JOIN u ON u.a = x.a", false, 1, 28, "over rows the variables do not select"},
		{"a named window", "SELECT a, rank() OVER w AS r FROM t WHERE k = {variables.k} WINDOW w AS (PARTITION BY k ORDER BY a)", false, 1, 18, "a WINDOW clause"},
		{"under OR", "SELECT a, rank() OVER (PARTITION BY k, j ORDER BY a) AS r FROM t WHERE (k = {variables.k} OR j = {variables.j})", true, 0, 0, ""},
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
	// With a live tail the read adds rows to the partitions: the windows
	// are computed at read, over the stored rows and the newer ones.
	a, err := Analyze("SELECT a, rank() OVER (PARTITION BY k ORDER BY a) AS r FROM t WHERE k = {variables.k}",
		Options{Engine: engine.PostgreSQL, TailColumn: "ts"})
	require.NoError(t, err)
	require.True(t, a.Materializable(), "%v", a.Reasons)
	require.True(t, a.Plan.Tail())
	read, _, err := a.Plan.Read("m", map[string]any{"k": "x", BuiltAtVariable: time.Now()})
	require.NoError(t, err)
	assert.Contains(t, read, `rank() OVER (PARTITION BY "_w`)
	assert.NotContains(t, a.Plan.Precompute(), "OVER")
}

// TestIssueShapes is the audit of issue 37's list of what analysts write
// against the shapes TestReadEqualsInline (and, with a live tail,
// TestTailEqualsInline) proves exact on SQLite, on and off the buckets'
// boundaries: each shape of the list names the shapes that hold it, and
// each of those materializes. The analyst corpus
// (internal/equivalence/testdata/analyst) runs the same shapes on every
// engine.
func TestIssueShapes(t *testing.T) {
	proved := map[string][]string{
		"BETWEEN, as >= and <=":                           {"between_daily"},
		"OR of conditions on stored keys":                 {"or_of_keys"},
		"a variable in a subquery in FROM keyed by it":    {"derived_keyed_range"},
		"a range moved by a constant interval":            {"interval_trailing_week"},
		"windows partitioned by the variables' keys":      {"window_per_user_timeline", "window_running_revenue_by_country"},
		"windows over the groups of an aggregating query": {"window_rolling_7d_daily", "window_rank_per_country_top"},
		"CTE chain through projection":                    {"cte_projection_range", "cte_chain_daily_users"},
		"CTE chain through aggregation by its column":     {"cte_grouped_by_key"},
		"aggregation carried out of a CTE or subquery":    {"nested_per_user_range", "nested_avg_dau", "nested_histogram_top", "nested_window_over_days", "nested_chain_histogram"},
		"CTE chain through DISTINCT and an inner join":    {"cte_distinct_join"},
		"CTE chain through a cross join":                  {"cte_cross_join"},
		"CTE chain through UNION ALL":                     {"cte_union_all_range"},
		"CTE chain through a LEFT join that keeps rows":   {"cte_left_join_funnel"},
		"CTE chain through a RIGHT join that keeps rows":  {"cte_right_join_list"},
		"!=, NOT IN, LIKE, NOT LIKE on a stored key":      {"not_equal_event_range", "like_country_ungrouped", "not_in_not_like_by_plan"},
		"a variable in HAVING or the SELECT list":         {"having_variables_range", "label_and_case_in_select"},
		"windows in a subquery or CTE, computed at read":  {"window_in_subquery_top_per_country", "window_over_rows_in_cte_lag", "ntile_over_rows_subquery", "window_in_cte_over_nested_groups"},
	}
	byName := map[string]shape{}
	for _, s := range shapes {
		byName[s.name] = s
	}
	for what, names := range proved {
		for _, name := range names {
			s, ok := byName[name]
			if !assert.True(t, ok, "%s: no shape %s in TestReadEqualsInline", what, name) {
				continue
			}
			opts := s.options()
			a, err := Analyze(s.query, opts)
			require.NoError(t, err)
			assert.True(t, a.Materializable(), "%s (%s): %s", what, name, a.Reason())
		}
	}
}

// TestCrossJoinMaterializesOnEveryEngine: a CROSS JOIN (or a JOIN without
// ON) materializes on every engine, and the normal form prints it as
// CROSS JOIN, which every engine reads, not as JOIN without ON, which
// PostgreSQL ("syntax error at end of input") and ClickHouse refuse.
func TestCrossJoinMaterializesOnEveryEngine(t *testing.T) {
	cross := "WITH s AS (SELECT distinct_id, event FROM events WHERE event = {variables.e})\nSELECT count(*) AS n FROM s CROSS JOIN users u"
	for _, e := range []engine.Engine{engine.PostgreSQL, engine.ClickHouse, engine.SQLite, engine.MySQL} {
		a, err := Analyze(cross, Options{Engine: e})
		require.NoError(t, err)
		require.True(t, a.Materializable(), "%s: %s", e.Name(), a.Reason())
		assert.Contains(t, a.Plan.Precompute(), " CROSS JOIN ", e.Name())
	}
}
