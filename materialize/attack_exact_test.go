package materialize

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// unionAffinityShapes: a union whose branches compare the variable with
// columns of different types (SQLite: an INTEGER column of a subquery
// and a TEXT column), where the comparison moved out of the union loses
// each branch's type. The analysis must refuse them.
var unionAffinityShapes = []shape{
	{name: "union_affinity", query: `SELECT count(*) AS n FROM (SELECT distinct_id AS k FROM events WHERE distinct_id = {variables.user}
		UNION ALL SELECT n AS k FROM (SELECT CAST(length(uuid) AS INTEGER) AS n FROM events) x WHERE n = {variables.user}) u`,
		ordered: true, values: func(p *pools) map[string]any {
			if p.rng.IntN(2) == 0 {
				return map[string]any{"user": "36"}
			}
			return map[string]any{"user": p.user()}
		}},
	{name: "union_affinity2", query: `SELECT count(*) AS n FROM (SELECT n AS k FROM (SELECT CAST(length(uuid) AS INTEGER) AS n FROM events) x WHERE n = {variables.user}
		UNION ALL SELECT distinct_id AS k FROM events WHERE distinct_id = {variables.user}) u`,
		ordered: true, values: func(p *pools) map[string]any {
			if p.rng.IntN(2) == 0 {
				return map[string]any{"user": "36"}
			}
			return map[string]any{"user": p.user()}
		}},
}

// exploreShapes are shapes of UNION, outer joins, subqueries at their
// grain and windows over groups that attack the promise of issue 37:
// each the analysis accepts must read exactly as inline (paged too);
// each it refuses is logged.
var exploreShapes = []shape{
	{name: "left_join_on_kept_side_variable", query: `WITH s AS (SELECT distinct_id, event FROM events WHERE event = 'signed_up')
		SELECT count(*) AS n, count(b.uuid) AS k FROM s LEFT JOIN events b ON b.distinct_id = s.distinct_id AND s.event = {variables.event}`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "union_branch_window", query: `SELECT event, max(r) AS m, count(*) AS n FROM (SELECT event, row_number() OVER (ORDER BY timestamp, uuid) AS r FROM events WHERE event IN {variables.events}
		UNION ALL SELECT event, row_number() OVER (ORDER BY timestamp, uuid) AS r FROM events WHERE event IN {variables.events}) u GROUP BY event ORDER BY event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
	{name: "derived_window", query: `SELECT event, max(r) AS m FROM (SELECT event, row_number() OVER (ORDER BY timestamp, uuid) AS r FROM events WHERE event IN {variables.events}) u GROUP BY event ORDER BY event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
	{name: "nested_inner_window", query: `SELECT max(r) AS m, count(*) AS n FROM (SELECT distinct_id, count(*) AS c, rank() OVER (ORDER BY count(*) DESC) AS r FROM events WHERE timestamp >= {variables.date_from} GROUP BY distinct_id) t`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "full_join_kept", query: `WITH s AS (SELECT distinct_id, event FROM events WHERE event = {variables.event})
		SELECT count(*) AS n FROM s FULL JOIN (SELECT DISTINCT distinct_id FROM events WHERE event = 'purchase') p ON p.distinct_id = s.distinct_id`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "union_branch_agg_having", query: `SELECT event, sum(n) AS n FROM (SELECT event, count(*) AS n FROM events WHERE event IN {variables.events} GROUP BY event HAVING count(*) > 500
		UNION SELECT event, count(*) AS n FROM events WHERE event IN {variables.events} GROUP BY event) u GROUP BY event ORDER BY event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
	{name: "union_dedup_partial_bucket", query: `SELECT count(*) AS n FROM (SELECT distinct_id, timestamp FROM events WHERE timestamp >= {variables.date_from}
		UNION SELECT distinct_id, timestamp FROM events WHERE timestamp >= {variables.date_from}) u`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "nested_range_outer_key_day", query: `SELECT day, count(*) AS users FROM (SELECT distinct_id, min(date(timestamp)) AS day FROM events WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY distinct_id) t GROUP BY day ORDER BY day`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "window_groups_range_lag", query: `SELECT date(timestamp) AS day, count(*) AS n, lag(count(*)) OVER (ORDER BY date(timestamp)) AS prev, first_value(count(*)) OVER (ORDER BY date(timestamp)) AS first
		FROM events WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY date(timestamp) ORDER BY day`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "window_groups_hour_month_bucket", query: `SELECT strftime('%Y-%m-%d %H', timestamp) AS h, count(*) AS n, sum(count(*)) OVER (ORDER BY strftime('%Y-%m-%d %H', timestamp)) AS run
		FROM events WHERE timestamp >= {variables.date_from} GROUP BY strftime('%Y-%m-%d %H', timestamp) ORDER BY h DESC LIMIT 30`,
		dates: []string{"date_from"}, bkts: map[string]engine.Bucket{"date_from": engine.Month}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Hour)} }},
	{name: "float_nested_sum", query: `SELECT sum(a) AS s FROM (SELECT distinct_id, avg(amount * 0.1) AS a FROM ` + purchases + ` WHERE timestamp >= {variables.date_from} GROUP BY distinct_id) t`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "nested_inner_order_group_concat", query: `SELECT group_concat(distinct_id) AS ids FROM (SELECT distinct_id, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY distinct_id ORDER BY n DESC, distinct_id) t`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "nested_star", query: `SELECT * FROM (SELECT distinct_id, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY distinct_id) t ORDER BY n DESC, distinct_id LIMIT 4`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "union_dedup_count", query: `WITH u AS (SELECT distinct_id, event FROM events WHERE event = {variables.event}
		UNION SELECT distinct_id, event FROM events WHERE event = {variables.event}) SELECT count(*) AS n FROM u`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "union_dedup_range", query: `WITH u AS (SELECT date(timestamp) AS day, distinct_id, timestamp FROM events WHERE timestamp >= {variables.date_from}
		UNION SELECT date(timestamp) AS day, distinct_id, timestamp FROM events WHERE timestamp >= {variables.date_from}) SELECT day, count(*) AS n FROM u GROUP BY day ORDER BY day`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "union_expr_branch", query: `WITH u AS (SELECT distinct_id, event FROM events WHERE event = {variables.event}
		UNION ALL SELECT distinct_id, upper(event) AS event FROM events WHERE event = {variables.event}) SELECT event, count(*) AS n FROM u GROUP BY event ORDER BY event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "union_other_column", query: `WITH u AS (SELECT distinct_id AS k, event FROM events WHERE distinct_id = {variables.user}
		UNION ALL SELECT event AS k, event FROM events WHERE event = {variables.user}) SELECT event, count(*) AS n FROM u GROUP BY event ORDER BY event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"user": p.user()} }},
	{name: "union_branch_limit_paren", query: `SELECT event, count(*) AS n FROM (SELECT distinct_id, event FROM events WHERE event = {variables.event}
		UNION ALL SELECT distinct_id, event FROM (SELECT distinct_id, event FROM events ORDER BY uuid LIMIT 50) x WHERE event = {variables.event}) u GROUP BY event ORDER BY event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "right_join_null_side", query: `WITH s AS (SELECT distinct_id, event FROM events WHERE event = {variables.event})
		SELECT count(*) AS n, count(s.distinct_id) AS k FROM s RIGHT JOIN (SELECT DISTINCT distinct_id FROM events) p ON p.distinct_id = s.distinct_id`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "left_join_null_side", query: `WITH s AS (SELECT distinct_id, event FROM events WHERE event = {variables.event})
		SELECT count(*) AS n, count(s.distinct_id) AS k FROM (SELECT DISTINCT distinct_id FROM events) p LEFT JOIN s ON p.distinct_id = s.distinct_id`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "left_join_where_other", query: `WITH s AS (SELECT distinct_id, event FROM events WHERE event = {variables.event})
		SELECT count(*) AS n, count(b.distinct_id) AS k FROM s LEFT JOIN events b ON b.distinct_id = s.distinct_id AND b.event = 'purchase' WHERE b.uuid IS NULL`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "nested_limit_inside", query: `SELECT sum(n) AS s, count(*) AS k FROM (SELECT distinct_id, count(*) AS n FROM events
		WHERE timestamp >= {variables.date_from} GROUP BY distinct_id ORDER BY n DESC, distinct_id LIMIT 5) t`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "nested_having_inside", query: `SELECT count(*) AS k, sum(n) AS s FROM (SELECT distinct_id, count(*) AS n FROM events
		WHERE timestamp >= {variables.date_from} GROUP BY distinct_id HAVING count(*) > 3) t`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "nested_avg_int", query: `SELECT avg(n) AS a, sum(n) / count(*) AS d, total(n) AS t FROM (SELECT distinct_id, count(*) AS n FROM events
		WHERE timestamp >= {variables.date_from} GROUP BY distinct_id) t`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "nested_outer_limit_ties", query: `SELECT n, count(*) AS users FROM (SELECT distinct_id, count(*) AS n FROM events
		WHERE timestamp >= {variables.date_from} GROUP BY distinct_id) t GROUP BY n ORDER BY users DESC LIMIT 3`,
		dates: []string{"date_from"}, ordered: false, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "nested_distinct_inner", query: `SELECT count(*) AS k FROM (SELECT DISTINCT distinct_id, event FROM events
		WHERE timestamp >= {variables.date_from}) t`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "nested_count_col_nulls", query: `SELECT count(*) AS k, count(c) AS kc, count(DISTINCT c) AS dc FROM (SELECT distinct_id, max(json_extract(properties, '$.country')) AS c FROM events
		WHERE timestamp >= {variables.date_from} GROUP BY distinct_id) t`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "nested_null_key", query: `SELECT count(*) AS k, sum(n) AS s FROM (SELECT json_extract(properties, '$.plan') AS plan, count(*) AS n FROM events
		WHERE timestamp >= {variables.date_from} GROUP BY json_extract(properties, '$.plan')) t`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "nested_ungrouped_inner", query: `SELECT n * 2 AS m FROM (SELECT count(*) AS n FROM events WHERE timestamp >= {variables.date_from}) t`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "nested_inner_where_on_agg_col", query: `SELECT count(*) AS k FROM (SELECT distinct_id, count(*) AS n, min(timestamp) AS first FROM events
		WHERE event = {variables.event} GROUP BY distinct_id) t WHERE n > 2`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "window_groups_having", query: `SELECT date(timestamp) AS day, count(*) AS n, sum(count(*)) OVER (ORDER BY date(timestamp)) AS run
		FROM events WHERE timestamp >= {variables.date_from} GROUP BY date(timestamp) HAVING count(*) > 100 ORDER BY day`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "window_groups_limit", query: `SELECT date(timestamp) AS day, count(*) AS n, sum(count(*)) OVER (ORDER BY date(timestamp)) AS run
		FROM events WHERE timestamp >= {variables.date_from} GROUP BY date(timestamp) ORDER BY day DESC LIMIT 3`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "window_groups_ungrouped", query: `SELECT count(*) AS n, sum(count(*)) OVER () AS total FROM events WHERE timestamp >= {variables.date_from}`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "window_groups_order_agg", query: `SELECT event, count(*) AS n, rank() OVER (ORDER BY max(timestamp) DESC) AS r
		FROM events WHERE timestamp >= {variables.date_from} GROUP BY event ORDER BY event`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "window_groups_partition_hidden", query: `SELECT event, count(*) AS n, count(*) OVER (PARTITION BY date(timestamp)) AS c
		FROM events WHERE timestamp >= {variables.date_from} GROUP BY event, date(timestamp) ORDER BY event, c`,
		dates: []string{"date_from"}, ordered: false, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "window_groups_distinct", query: `SELECT DISTINCT count(*) OVER () AS groups
		FROM events WHERE timestamp >= {variables.date_from} GROUP BY event`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "window_groups_avg", query: `SELECT event, avg(count(*)) OVER () AS a, avg(json_extract(properties, '$.amount')) AS m
		FROM events WHERE timestamp >= {variables.date_from} GROUP BY event ORDER BY event`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"date_from": p.date(engine.Day)} }},
	{name: "in_list_case", query: `SELECT event, count(*) AS n FROM events WHERE event IN {variables.events} GROUP BY event ORDER BY event`,
		ordered: true, values: func(p *pools) map[string]any {
			l := p.events()
			if len(l) > 0 {
				l = append(l, strings.ToUpper(l[0]))
			}
			return map[string]any{"events": l}
		}},
	{name: "distinct_wrong_grain_union", query: `SELECT count(*) AS n FROM (SELECT distinct_id FROM events WHERE event = {variables.event}
		UNION SELECT distinct_id FROM events WHERE event = {variables.event}) u`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "order_ties_limit", query: `SELECT distinct_id, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY distinct_id ORDER BY n DESC LIMIT 3`,
		ordered: false, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "union_dedup_outer_agg_nonkey", query: `SELECT count(*) AS n FROM (SELECT distinct_id, event FROM events WHERE event IN {variables.events}
		UNION SELECT distinct_id, 'x' AS event FROM events WHERE event IN {variables.events}) u`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
}

// runExactShapes materializes each shape of list on the demo data on
// SQLite and compares 40 reads with inline; explore logs a refusal
// instead of failing on it.
func runExactShapes(t *testing.T, list []shape, explore bool) {
	db := openDemo(t, 5000)
	p := &pools{rng: rand.New(rand.NewPCG(3, 9))}
	pageRng := rand.New(rand.NewPCG(4, 4))
	users := query(t, db, "SELECT DISTINCT distinct_id FROM events ORDER BY distinct_id LIMIT 40", nil)
	for _, r := range users.rows {
		p.users = append(p.users, r[0].(string))
	}
	for i, s := range list {
		t.Run(s.name, func(t *testing.T) {
			opts := s.options()
			a, err := Analyze(s.query, opts)
			require.NoError(t, err)
			if !a.Materializable() {
				if explore {
					t.Logf("REFUSED %s: %v", s.name, a.Reasons)
					return
				}
				t.Fatalf("%v", a.Reasons)
			}
			table := fmt.Sprintf("atk_%d", i)
			refreshInto(t, db, a.Plan, table)
			tpl, err := placeholder.Compile(s.query)
			require.NoError(t, err)
			for range 40 {
				values := s.values(p)
				q, args, err := tpl.Render(engine.SQLite, values)
				require.NoError(t, err)
				want := query(t, db, q, args)
				rq, rargs, err := a.Plan.Read(table, values)
				require.NoError(t, err)
				got := query(t, db, rq, rargs)
				if !s.ordered {
					sortRows(want.rows)
					sortRows(got.rows)
				}
				if !reflect.DeepEqual(got.rows, want.rows) || !reflect.DeepEqual(got.columns, want.columns) {
					t.Fatalf("DIFF values %v\ninline: %s\nread: %s\ngot %v %+v\nwant %v %+v", values, q, rq, got.columns, got.rows, want.columns, want.rows)
				}
				checkPages(t, db, a.Plan, table, values, want.rows, s.ordered, pageRng)
			}
			if explore {
				t.Logf("HELD %s", s.name)
			}
		})
	}
}

// TestAttackShapesHold: every accepted shape of exploreShapes reads as
// inline, for 40 values each, whole and in pages.
func TestAttackShapesHold(t *testing.T) {
	skipUnderRace(t)
	t.Parallel() // a database of its own: the sweeps share the CPUs
	runExactShapes(t, exploreShapes, true)
}

// exploreTail are accepted shapes read with a live tail: rows arrive
// after the build, and the read must still equal inline.
var exploreTail = []shape{
	{name: "tail_union_dedup_no_ts", query: `SELECT event, count(*) AS n FROM (SELECT distinct_id, event FROM events WHERE event IN {variables.events}
		UNION SELECT distinct_id, event FROM events WHERE event IN {variables.events}) u GROUP BY event ORDER BY event`,
		values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
	{name: "tail_distinct_no_ts", query: `SELECT count(*) AS n FROM (SELECT DISTINCT distinct_id, event FROM events WHERE event IN {variables.events}) u`,
		values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
	{name: "tail_nested_distinct", query: `SELECT count(*) AS n, sum(k) AS s FROM (SELECT distinct_id, count(DISTINCT event) AS k FROM events WHERE event IN {variables.events} GROUP BY distinct_id) u`,
		values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
	{name: "tail_window_groups_list", query: `SELECT event, count(*) AS n, rank() OVER (ORDER BY count(*) DESC, event) AS r FROM events WHERE event IN {variables.events} GROUP BY event ORDER BY event`,
		values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
	{name: "tail_window_per_user", query: `SELECT distinct_id, timestamp, row_number() OVER (PARTITION BY distinct_id ORDER BY timestamp, uuid) AS k FROM events WHERE distinct_id = {variables.user}`,
		values: func(p *pools) map[string]any { return map[string]any{"user": p.user()} }},
	{name: "tail_cte_left_join", query: `WITH s AS (SELECT distinct_id, timestamp FROM events WHERE event IN {variables.events})
		SELECT count(*) AS n, count(b.uuid) AS k FROM s LEFT JOIN events b ON b.distinct_id = s.distinct_id AND b.event = 'purchase'`,
		values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
	{name: "tail_distinct_users", query: `SELECT DISTINCT distinct_id FROM events WHERE event IN {variables.events}`,
		values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
}

// TestAttackTailHold: every accepted shape of exploreTail with a tail
// reads as inline after rows arrive past the build instant.
func TestAttackTailHold(t *testing.T) {
	skipUnderRace(t)
	t.Parallel() // a database of its own: the sweeps share the CPUs
	db := openDemo(t, 5000)
	builtAt := demo.End.AddDate(0, 0, -5).Add(7*time.Hour + 30*time.Minute)
	p := &pools{rng: rand.New(rand.NewPCG(11, 11))}
	users := query(t, db, "SELECT DISTINCT distinct_id FROM events ORDER BY distinct_id LIMIT 40", nil)
	for _, r := range users.rows {
		p.users = append(p.users, r[0].(string))
	}
	type built struct {
		tail  *Plan
		shape shape
	}
	plans := map[int]built{}
	for i, s := range exploreTail {
		opts := Options{Engine: engine.SQLite, Types: map[string]variable.Type{}, Buckets: s.bkts, TailColumn: "timestamp"}
		a, err := Analyze(s.query, opts)
		require.NoError(t, err)
		if !a.Materializable() {
			t.Logf("REFUSED %s: %v", s.name, a.Reasons)
			continue
		}
		if !a.Plan.Tail() {
			t.Logf("NOTAIL %s", s.name)
			continue
		}
		buildAt(t, db, a.Plan, fmt.Sprintf("tail_%d", i), builtAt)
		plans[i] = built{a.Plan, s}
	}
	insertLate(t, db)
	for i, b := range plans {
		t.Run(b.shape.name, func(t *testing.T) {
			tpl, err := placeholder.Compile(b.shape.query)
			require.NoError(t, err)
			for range 40 {
				values := b.shape.values(p)
				q, args, err := tpl.Render(engine.SQLite, values)
				require.NoError(t, err)
				want := query(t, db, q, args)
				rq, got := readTail(t, db, b.tail, fmt.Sprintf("tail_%d", i), values, builtAt)
				sortRows(got.rows)
				sortRows(want.rows)
				if !reflect.DeepEqual(got.rows, want.rows) {
					t.Fatalf("DIFF values %v\ninline: %s\nread: %s\ngot %+v\nwant %+v", values, q, rq, got.rows, want.rows)
				}
			}
			t.Logf("HELD %s", b.shape.name)
		})
	}
}

// TestUnionOfDifferentTypesRefused: the inline query finds the value 36
// in the branch whose column is an INTEGER (the branch compares with its
// column's type), the union's column has no type, and a read of the
// stored table compared '36' with 36 and found nothing (0 instead of
// 5000). A union term is carried out only from a table's column.
func TestUnionOfDifferentTypesRefused(t *testing.T) {
	for _, s := range unionAffinityShapes {
		a, err := Analyze(s.query, Options{Engine: engine.SQLite})
		require.NoError(t, err)
		require.False(t, a.Materializable(), "%s: a.Materializable() is true", s.name)
		require.Contains(t, fmt.Sprint(a.Reasons), "UNION")
	}
	runExactShapes(t, unionAffinityShapes, true) // inline only: refused
}

// TestPostgreSQLDividedSumRefused: on PostgreSQL the read adds up stored
// sums, and the sum of a bigint is a numeric: sum(length(uuid)) / 7
// inline is an integer division (18 / 7 = 2), read it kept the fraction
// (2.5714285714285714). Such divisions are refused on PostgreSQL, at the
// top and over a subquery's sum; a cast sum divides as the read does and
// materializes, as do the same queries on the other engines.
func TestPostgreSQLDividedSumRefused(t *testing.T) {
	date := map[string]variable.Type{"date_from": variable.Date}
	refused := []string{
		`SELECT event, sum(length(uuid)) / 7 AS x FROM events WHERE timestamp >= {variables.date_from} GROUP BY event`,
		`SELECT event, sum(length(uuid)) % 7 AS x FROM events WHERE timestamp >= {variables.date_from} GROUP BY event`,
		`SELECT event, 100 * sum(length(uuid)) / count(*) AS x FROM events WHERE timestamp >= {variables.date_from} GROUP BY event`,
		`SELECT s / 7 AS x FROM (SELECT distinct_id, sum(length(uuid)) AS s FROM events WHERE timestamp >= {variables.date_from} GROUP BY distinct_id) t`,
		`WITH per_user AS (SELECT distinct_id, sum(length(uuid)) AS s FROM events WHERE timestamp >= {variables.date_from} GROUP BY distinct_id),
			h AS (SELECT s, count(*) AS users FROM per_user GROUP BY s) SELECT sum(s * users) / 2 AS half FROM h`,
		`SELECT event, sum(length(uuid)) / 7 AS x, rank() OVER (ORDER BY count(*)) AS r FROM events WHERE timestamp >= {variables.date_from} GROUP BY event`,
	}
	for _, q := range refused {
		a, err := Analyze(q, Options{Engine: engine.PostgreSQL, Types: date})
		require.NoError(t, err)
		require.False(t, a.Materializable(), "%s: a.Materializable() is true", q)
		require.Contains(t, fmt.Sprint(a.Reasons), "sum()")
		for _, e := range []engine.Engine{engine.SQLite, engine.MySQL} {
			a, err := Analyze(q, Options{Engine: e, Types: date})
			require.NoError(t, err)
			require.True(t, a.Materializable(), "%s on %s: %v", q, e.Name(), a.Reasons)
		}
	}
	kept := []string{
		`SELECT event, CAST(sum(length(uuid)) AS numeric) / 7 AS x FROM events WHERE timestamp >= {variables.date_from} GROUP BY event`,
		`SELECT event, sum(length(uuid)) AS s, count(*) / 2 AS half FROM events WHERE timestamp >= {variables.date_from} GROUP BY event`,
		`SELECT n / 2 AS half, count(*) AS users FROM (SELECT distinct_id, count(*) AS n FROM events WHERE timestamp >= {variables.date_from} GROUP BY distinct_id) t GROUP BY n / 2`,
	}
	for _, q := range kept {
		a, err := Analyze(q, Options{Engine: engine.PostgreSQL, Types: date})
		require.NoError(t, err)
		require.True(t, a.Materializable(), "%s: %v", q, a.Reasons)
	}
}
