package materialize

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// purchases is a derived table of the demo purchases with their country
// and amount as columns, since only columns can be materialized. The
// amount is cast to an integer (the demo's amounts are): a sum whose
// stored parts a read adds up again must add up values known exact.
const purchases = `(SELECT timestamp, distinct_id, json_extract(properties, '$.country') AS country,
	json_extract(properties, '$.plan') AS plan, CAST(json_extract(properties, '$.amount') AS INTEGER) AS amount
	FROM events WHERE event = 'purchase') AS p`

// withProps is every demo event with its country and plan as columns
// (and its amount, an integer as in purchases).
const withProps = `(SELECT uuid, event, distinct_id, timestamp, json_extract(properties, '$.country') AS country,
	json_extract(properties, '$.plan') AS plan, CAST(json_extract(properties, '$.amount') AS INTEGER) AS amount
	FROM events) AS e`

// shape is one materializable query of the equivalence test.
type shape struct {
	name  string
	query string
	dates []string                 // Date variables
	bkts  map[string]engine.Bucket // bucket overrides
	// ordered: the query's ORDER BY is total, so row order must match too.
	ordered bool
	values  func(p *pools) map[string]any
	// sampled: the default run draws sampledRuns values, -tags long the
	// 60 of every shape.
	sampled bool
}

// options are the analysis options of s on SQLite: its buckets, and its
// Date variables typed so.
func (s shape) options() Options {
	opts := Options{Engine: engine.SQLite, Types: map[string]variable.Type{}, Buckets: s.bkts}
	for _, d := range s.dates {
		opts.Types[d] = variable.Date
	}
	return opts
}

// refreshInto runs plan's refresh into table on db.
func refreshInto(t *testing.T, db *sql.DB, plan *Plan, table string) {
	t.Helper()
	r, err := plan.Refresh(table)
	require.NoError(t, err)
	for _, st := range r.Statements() {
		_, err := db.Exec(st)
		require.NoError(t, err, "%v", st)
	}
}

// sampledRuns is the number of values a sampled shape is run with
// without -tags long.
const sampledRuns = 20

var shapes = []shape{
	{name: "eq_count_ungrouped", query: `SELECT count(*) AS n FROM ` + withProps + ` WHERE country = {variables.country}`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"country": p.country()} }},
	{name: "eq_reversed_grouped_count_distinct", query: `SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users
		FROM ` + withProps + ` WHERE {variables.plan} = plan GROUP BY event ORDER BY event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"plan": p.plan()} }},
	{name: "eq_user_events", query: `SELECT event, count(*), min(timestamp) AS first FROM events
		WHERE distinct_id = {variables.user} GROUP BY event`,
		values: func(p *pools) map[string]any { return map[string]any{"user": p.user()} }},
	{name: "range_daily", query: `SELECT date(timestamp) AS day, count(*) AS n FROM events
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY day ORDER BY day`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "daily_purchases_revenue_country", query: dailyRevenue,
		dates: []string{"date_from", "date_to"}, ordered: true, values: func(p *pools) map[string]any {
			v := rangeValues(p)
			v["country"] = p.country()
			return v
		}},
	{name: "range_min_max_by_event", query: `SELECT event, count(*) AS n, min(timestamp) AS first, max(timestamp) AS last
		FROM events WHERE timestamp >= {variables.date_from} GROUP BY event ORDER BY event`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"date_from": p.date(engine.Day)}
		}},
	{name: "range_avg_sum_by_country", query: `SELECT country, avg(amount) AS mean, sum(amount) AS total, count(amount) AS k
		FROM ` + purchases + ` WHERE timestamp < {variables.date_to} GROUP BY country ORDER BY country`,
		dates: []string{"date_to"}, ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"date_to": p.date(engine.Day)}
		}},
	{name: "range_weekly", query: `SELECT strftime('%Y-%W', timestamp) AS week, count(*) AS n FROM events
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY 1 ORDER BY 1`,
		dates: []string{"date_from", "date_to"}, bkts: map[string]engine.Bucket{"date_from": engine.Week, "date_to": engine.Week},
		ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"date_from": p.date(engine.Week), "date_to": p.date(engine.Week)}
		}},
	{name: "range_hourly_top_events", query: `SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.since}
		GROUP BY event ORDER BY 2 DESC, 1`,
		dates: []string{"since"}, bkts: map[string]engine.Bucket{"since": engine.Hour}, ordered: true,
		values: func(p *pools) map[string]any { return map[string]any{"since": p.date(engine.Hour)} }},
	{name: "range_monthly_ungrouped", query: `SELECT count(*) AS n, sum(length(uuid)) AS s, max(timestamp) AS last FROM events
		WHERE timestamp < {variables.until}`,
		dates: []string{"until"}, bkts: map[string]engine.Bucket{"until": engine.Month}, ordered: true,
		values: func(p *pools) map[string]any { return map[string]any{"until": p.date(engine.Month)} }},
	{name: "number_greater_than", query: `SELECT event, count(*) AS n, sum(amount) AS s FROM ` + withProps + `
		WHERE amount > {variables.min_amount} GROUP BY event ORDER BY event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"min_amount": p.amount()} }},
	{name: "number_at_most_and_country", query: `SELECT plan, avg(amount) AS mean, min(amount) AS lo, max(amount) AS hi
		FROM ` + purchases + ` WHERE amount <= {variables.max_amount} AND country = {variables.country}
		GROUP BY plan ORDER BY plan`,
		ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"max_amount": p.amount(), "country": p.country()}
		}},
	{name: "rows_of_user", query: `SELECT uuid, event, timestamp FROM events WHERE distinct_id = {variables.user}
		ORDER BY timestamp DESC, uuid LIMIT 5`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"user": p.user()} }},
	{name: "rows_in_range", query: `SELECT uuid, distinct_id FROM events WHERE event = 'signed_up'
		AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to} ORDER BY uuid LIMIT 20 OFFSET 3`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "distinct_events_of_user", query: `SELECT DISTINCT event FROM events WHERE distinct_id = {variables.user} ORDER BY event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"user": p.user()} }},
	{name: "having_top_users", query: `SELECT distinct_id, count(*) AS n FROM events
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to}
		GROUP BY distinct_id HAVING count(*) >= 3 ORDER BY n DESC, distinct_id LIMIT 10`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "four_variables", query: `SELECT plan, count(*) AS n, max(timestamp) AS last FROM ` + withProps + `
		WHERE event = {variables.event} AND country = {variables.country} AND timestamp >= {variables.date_from}
		AND timestamp < {variables.date_to} GROUP BY plan ORDER BY plan`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: func(p *pools) map[string]any {
			v := rangeValues(p)
			v["event"], v["country"] = p.event(), p.country()
			return v
		}},
	{name: "ungrouped_aggregates_of_range", query: `SELECT min(amount) AS lo, max(amount) AS hi, avg(amount) AS mean, count(amount) AS k
		FROM ` + purchases + ` WHERE country = {variables.country} AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to}`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: func(p *pools) map[string]any {
			v := rangeValues(p)
			v["country"] = p.country()
			return v
		}},
	{name: "expressions_over_aggregates", query: `SELECT plan, round(100.0 * sum(amount) / count(*), 2) AS per_purchase,
		1000 / avg(amount) AS inverse, max(amount) - min(amount) AS spread FROM ` + purchases + `
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY plan ORDER BY plan`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "date_equality_unbucketed", query: `SELECT event, count(*) AS n FROM (SELECT event, date(timestamp) AS day FROM events) AS d
		WHERE day = {variables.day} GROUP BY event ORDER BY event`,
		dates: []string{"day"}, ordered: true, values: func(p *pools) map[string]any { return map[string]any{"day": p.date(engine.Day)} }},
	{name: "property_equality", query: `SELECT event, count(*) AS n FROM events
		WHERE json_extract(properties, '$.country') = {variables.country} GROUP BY event ORDER BY event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"country": p.country()} }},
	{name: "lower_coalesce_property_range_distinct", query: `SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users,
		count(*) AS n FROM events WHERE lower(coalesce(json_extract(properties, '$.plan'), 'none')) = {variables.plan}
		AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY day ORDER BY day`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: func(p *pools) map[string]any {
			v := rangeValues(p)
			v["plan"] = p.plan()
			return v
		}},
	{name: "list_of_countries", query: `SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users, avg(CAST(json_extract(properties, '$.amount') AS INTEGER)) AS mean
		FROM events WHERE json_extract(properties, '$.country') IN {variables.countries} GROUP BY event ORDER BY event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"countries": p.countries()} }},
	{name: "list_in_parentheses_ungrouped", query: `SELECT count(DISTINCT distinct_id) AS users, sum(DISTINCT CAST(json_extract(properties, '$.amount') AS INTEGER)) AS amounts
		FROM events WHERE event IN ({variables.events})`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
	{name: "distinct_users_over_range", query: `SELECT count(DISTINCT distinct_id) AS users, count(DISTINCT json_extract(properties, '$.country')) AS countries
		FROM events WHERE timestamp >= {variables.date_from}`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"date_from": p.date(engine.Day)}
		}},
	// One-bucket groups (see onebucket.go): the hour determines its day,
	// two DISTINCT arguments keep their DISTINCT in the read.
	{name: "hourly_two_distincts_day_bucket", query: `SELECT strftime('%Y-%m-%d %H:00', timestamp) AS hour,
		count(DISTINCT distinct_id) AS users, count(DISTINCT json_extract(properties, '$."$current_url"')) AS urls, count(*) AS n
		FROM events WHERE event = {variables.event} AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to}
		GROUP BY hour ORDER BY hour`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: func(p *pools) map[string]any {
			v := rangeValues(p)
			v["event"] = p.event()
			return v
		}},
	// The day determines its month; one DISTINCT argument, which the
	// read aggregates without DISTINCT; a HAVING over the merged groups.
	{name: "daily_distinct_amounts_month_bucket_having", query: `SELECT date(timestamp) AS day, sum(DISTINCT amount) AS s,
		avg(DISTINCT amount) AS mean, count(DISTINCT amount) AS k, count(*) AS n FROM ` + purchases + `
		WHERE country = {variables.country} AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to}
		GROUP BY day HAVING count(*) > 1 ORDER BY day`,
		dates: []string{"date_from", "date_to"}, bkts: map[string]engine.Bucket{"date_from": engine.Month, "date_to": engine.Month},
		ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"country": p.country(), "date_from": p.date(engine.Month), "date_to": p.date(engine.Month)}
		}},
	// Not one-bucket: a list holds many values a group; the week does not
	// determine its month; the order names no output column.
	{name: "daily_by_event_list", query: `SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users FROM events
		WHERE event IN {variables.events} AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to}
		GROUP BY day ORDER BY day`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: func(p *pools) map[string]any {
			v := rangeValues(p)
			v["events"] = p.events()
			return v
		}},
	{name: "weekly_groups_month_bucket", query: `SELECT strftime('%Y-%W', timestamp) AS week, count(DISTINCT distinct_id) AS users
		FROM events WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY 1 ORDER BY 1`,
		dates: []string{"date_from", "date_to"}, bkts: map[string]engine.Bucket{"date_from": engine.Month, "date_to": engine.Month},
		ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"date_from": p.date(engine.Month), "date_to": p.date(engine.Month)}
		}},
	{name: "daily_ordered_by_last", query: `SELECT date(timestamp) AS day, count(*) AS n FROM events
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY day ORDER BY max(timestamp) DESC`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	// CTE chains (see inlineWith): a variable in a CTE's WHERE carried out
	// through projection, a second CTE, DISTINCT, GROUP BY its column and
	// an inner join, to the stored grain.
	{name: "cte_projection_range", query: `WITH e AS (SELECT timestamp, event, distinct_id FROM events
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to})
		SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users FROM e GROUP BY event ORDER BY event`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "cte_chain_daily_users", query: `WITH a AS (SELECT timestamp, distinct_id, event FROM events
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to}),
		b AS (SELECT timestamp, distinct_id FROM a WHERE event = '$pageview')
		SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users FROM b GROUP BY day ORDER BY day`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "cte_grouped_by_key", query: `WITH daily AS (SELECT date(timestamp) AS day, event, count(*) AS n FROM events
		WHERE event = {variables.event} GROUP BY date(timestamp), event)
		SELECT d.day, d.n FROM daily d ORDER BY d.day`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "cte_distinct_join", query: `WITH p AS (SELECT distinct_id, json_extract(properties, '$.country') AS country
		FROM events WHERE event = 'purchase'),
		c AS (SELECT DISTINCT distinct_id, country FROM p WHERE country = {variables.country})
		SELECT count(*) AS n FROM c JOIN events e ON e.distinct_id = c.distinct_id WHERE e.event = '$pageview'`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"country": p.country()} }},
	// The shapes of issue 37 that analysts write (see TestIssueShapes):
	// BETWEEN read as >= and <=; an OR of keys; a range inside a subquery
	// in FROM whose rows it keys; a range moved by a constant interval; a
	// cross join of a CTE.
	{name: "between_daily", query: `SELECT date(timestamp) AS day, count(*) AS n FROM events
		WHERE timestamp BETWEEN {variables.date_from} AND {variables.date_to} GROUP BY day ORDER BY day`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "or_of_keys", query: `SELECT event, count(*) AS n FROM ` + withProps + `
		WHERE (country = {variables.country} OR plan = {variables.plan}) AND timestamp >= {variables.date_from}
		GROUP BY event ORDER BY event`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"country": p.country(), "plan": p.plan(), "date_from": p.date(engine.Day)}
		}},
	{name: "derived_keyed_range", query: `SELECT d.event, count(*) AS n, count(DISTINCT d.distinct_id) AS users FROM (
		SELECT event, distinct_id, timestamp FROM events WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to}
		) d GROUP BY d.event ORDER BY d.event`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "interval_trailing_week", query: `SELECT event, count(*) AS n FROM events
		WHERE timestamp >= datetime({variables.date_to}, '-7 days') AND timestamp < {variables.date_to} GROUP BY event ORDER BY event`,
		dates: []string{"date_to"}, ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"date_to": p.date(engine.Day)}
		}},
	{name: "cte_cross_join", query: `WITH s AS (SELECT distinct_id, event FROM events WHERE event = {variables.event}),
		k AS (SELECT 'a' AS kind UNION ALL SELECT 'b')
		SELECT k.kind, count(*) AS n FROM s, k GROUP BY k.kind ORDER BY k.kind`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	// A UNION ALL in a CTE whose every branch compares the range with the
	// column it selects at one position (see liftUnion), and CTEs on the
	// side of an outer join that keeps its rows (see liftFrom).
	{name: "cte_union_all_range", query: `WITH u AS (SELECT timestamp, distinct_id, event FROM events
		WHERE event = '$pageview' AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to}
		UNION ALL SELECT timestamp, distinct_id, 'bought' FROM events
		WHERE event = 'purchase' AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to})
		SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users FROM u GROUP BY event ORDER BY event`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "cte_left_join_funnel", query: `WITH s AS (SELECT distinct_id, timestamp FROM events
		WHERE event = 'signed_up' AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to})
		SELECT count(DISTINCT s.distinct_id) AS started, count(DISTINCT b.distinct_id) AS bought
		FROM s LEFT JOIN events b ON b.distinct_id = s.distinct_id AND b.event = 'purchase' AND b.timestamp > s.timestamp`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "cte_right_join_list", query: `WITH s AS (SELECT distinct_id, event FROM events WHERE event IN {variables.events})
		SELECT s.event, count(*) AS n, count(p.distinct_id) AS buyers
		FROM (SELECT DISTINCT distinct_id FROM events WHERE event = 'purchase' ORDER BY distinct_id LIMIT 20) p
		RIGHT JOIN s ON p.distinct_id = s.distinct_id
		GROUP BY s.event ORDER BY s.event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
	// Aggregation carried out of a CTE or subquery in FROM (see
	// nested.go): the variables stay in the one subquery, which groups by
	// another column; the stored table is the subquery's, and the outer
	// query is computed over its exact read.
	{name: "nested_per_user_range", query: `WITH per_user AS (SELECT distinct_id, count(*) AS n, max(timestamp) AS last FROM events
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY distinct_id)
		SELECT count(*) AS users, sum(n) AS events, max(n) AS most, max(last) AS last FROM per_user`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "nested_avg_dau", query: `SELECT avg(users) AS avg_dau, max(users) AS peak, count(*) AS days FROM (
		SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users FROM events
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY date(timestamp)) daily`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "nested_histogram_top", query: `SELECT n, count(*) AS users FROM (
		SELECT distinct_id, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY distinct_id) u
		GROUP BY n ORDER BY users DESC, n LIMIT 5`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event()} }},
	{name: "nested_chain_histogram", query: `WITH per_user AS (SELECT distinct_id, count(*) AS n FROM events
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY distinct_id),
		histogram AS (SELECT n, count(*) AS users FROM per_user GROUP BY n)
		SELECT max(users) AS most_common, count(*) AS sizes, sum(n * users) AS events FROM histogram`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "nested_window_over_days", query: `SELECT day, n, sum(n) OVER (ORDER BY day) AS running FROM (
		SELECT date(timestamp) AS day, count(*) AS n FROM events WHERE event = {variables.event}
		AND timestamp >= {variables.date_from} GROUP BY date(timestamp)) d ORDER BY day`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"event": p.event(), "date_from": p.date(engine.Day)}
		}},
	// Windows over the groups of an aggregating query (see
	// windowgroups.go): computed over the read of its groups, whatever
	// the variables (a range included).
	{name: "window_rolling_7d_daily", query: `SELECT date(timestamp) AS day, count(*) AS n,
		sum(count(*)) OVER (ORDER BY date(timestamp) ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS n_7d,
		count(DISTINCT distinct_id) AS users
		FROM events WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY date(timestamp) ORDER BY day`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "window_rank_per_country_top", query: `SELECT json_extract(properties, '$.country') AS country, event, count(*) AS n,
		rank() OVER (PARTITION BY json_extract(properties, '$.country') ORDER BY count(*) DESC, event) AS rk
		FROM events WHERE timestamp >= {variables.date_from} GROUP BY 1, event ORDER BY country, rk LIMIT 12`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"date_from": p.date(engine.Day)}
		}},
	// Window functions whose PARTITION BY holds the variables' keys (see
	// windowsRefusal): computed when the table is built, partitions kept whole.
	{name: "window_per_user_timeline", query: `SELECT distinct_id, timestamp, event,
		row_number() OVER (PARTITION BY distinct_id ORDER BY timestamp, uuid) AS k,
		lag(event) OVER (PARTITION BY distinct_id ORDER BY timestamp, uuid) AS previous
		FROM events WHERE distinct_id = {variables.user} ORDER BY timestamp, uuid`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"user": p.user()} }},
	{name: "window_running_revenue_by_country", query: `SELECT distinct_id, timestamp, amount,
		sum(amount) OVER (PARTITION BY country ORDER BY timestamp) AS running,
		count(*) OVER (PARTITION BY country, plan) AS in_plan
		FROM ` + purchases + ` WHERE country = {variables.country}`,
		values: func(p *pools) map[string]any { return map[string]any{"country": p.country()} }},
	// Operators over a stored key (see judgeMatch): the read applies !=,
	// NOT IN, LIKE and NOT LIKE to the stored key column, over a range,
	// ungrouped (a group spans many stored keys) and grouped by another
	// column.
	{name: "not_equal_event_range", sampled: true, query: `SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users FROM events
		WHERE event <> {variables.event} AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to}
		GROUP BY event ORDER BY event`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: func(p *pools) map[string]any {
			v := rangeValues(p)
			v["event"] = p.event()
			return v
		}},
	{name: "like_country_ungrouped", sampled: true, query: `SELECT count(*) AS n, sum(amount) AS s, max(timestamp) AS last FROM ` + purchases + `
		WHERE country LIKE {variables.pattern}`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"pattern": p.pattern()} }},
	{name: "not_in_not_like_by_plan", sampled: true, query: `SELECT plan, count(*) AS n, avg(amount) AS mean, min(timestamp) AS first FROM ` + withProps + `
		WHERE plan NOT IN {variables.plans} AND country NOT LIKE {variables.pattern} GROUP BY plan ORDER BY plan`,
		ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"plans": p.list(p.plan), "pattern": p.pattern()}
		}},
	// Variables computed at read (see atread.go): in HAVING, over the
	// groups the read combines again, on and off the buckets' boundaries;
	// in the SELECT list, alone and in a group key over a stored column
	// (the stored table groups by the country, the read by the CASE).
	{name: "having_variables_range", sampled: true, query: `SELECT distinct_id, count(*) AS n, sum(amount) AS s, max(timestamp) AS last FROM ` + purchases + `
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to}
		GROUP BY distinct_id HAVING count(*) >= {variables.min_n} AND max(amount) > {variables.min_amount} ORDER BY n DESC, distinct_id`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: func(p *pools) map[string]any {
			v := rangeValues(p)
			v["min_n"], v["min_amount"] = int64(1+p.rng.IntN(3)), p.amount()
			return v
		}},
	{name: "label_and_case_in_select", sampled: true, query: `SELECT {variables.label} AS label, CASE WHEN country = {variables.country} THEN 'home' ELSE 'abroad' END AS market,
		count(*) AS n, count(DISTINCT distinct_id) AS users, min(timestamp) AS first FROM ` + withProps + `
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY 2 ORDER BY market`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: func(p *pools) map[string]any {
			v := rangeValues(p)
			v["label"], v["country"] = "label "+p.plan(), p.country()
			return v
		}},
	// Windows in a subquery or a WITH query (see windowsOverRows and
	// windowsInside): computed at read over the groups or rows the stored
	// table answers exactly, whatever the variables are compared with; a
	// condition under a window is not carried out over it.
	{name: "window_in_subquery_top_per_country", sampled: true, query: `SELECT country, event, n FROM (
		SELECT country, event, count(*) AS n, row_number() OVER (PARTITION BY country ORDER BY count(*) DESC, event) AS rk
		FROM ` + withProps + ` WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY country, event
		) ranked WHERE rk <= 2 ORDER BY country, n DESC, event`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	{name: "window_over_rows_in_cte_lag", sampled: true, query: `WITH ordered AS (SELECT distinct_id, timestamp,
		lag(timestamp) OVER (PARTITION BY distinct_id ORDER BY timestamp, uuid) AS prev FROM events
		WHERE event = {variables.event} AND timestamp >= {variables.date_from})
		SELECT distinct_id, count(*) AS firsts, max(prev) AS last_prev FROM ordered WHERE prev IS NULL OR prev < timestamp GROUP BY distinct_id ORDER BY distinct_id`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"event": p.event(), "date_from": p.date(engine.Day)}
		}},
	{name: "ntile_over_rows_subquery", sampled: true, query: `SELECT tile, min(amount) AS lo, max(amount) AS hi, count(*) AS n FROM (
		SELECT amount, ntile(4) OVER (ORDER BY amount) AS tile FROM ` + purchases + ` WHERE country LIKE {variables.pattern} AND timestamp < {variables.date_to}
		) q GROUP BY tile ORDER BY tile`,
		dates: []string{"date_to"}, ordered: true, values: func(p *pools) map[string]any {
			return map[string]any{"pattern": p.pattern(), "date_to": p.date(engine.Day)}
		}},
	{name: "window_in_cte_over_nested_groups", sampled: true, query: `WITH per_user AS (SELECT distinct_id, event, count(*) AS n FROM events
		WHERE timestamp >= {variables.date_from} AND timestamp < {variables.date_to} GROUP BY distinct_id, event),
		ranked AS (SELECT distinct_id, event, n, rank() OVER (PARTITION BY distinct_id ORDER BY n DESC) AS rk FROM per_user)
		SELECT distinct_id, event, n FROM ranked WHERE rk = 1 ORDER BY distinct_id, event`,
		dates: []string{"date_from", "date_to"}, ordered: true, values: rangeValues},
	// LIKE with ESCAPE on a stored key: the read applies the same
	// operator and escape to the key.
	{name: "like_escape_key", sampled: true, query: `SELECT event, count(*) AS n, max(timestamp) AS last FROM events
		WHERE event LIKE {variables.pattern} ESCAPE '!' AND timestamp >= {variables.date_from} GROUP BY event ORDER BY event`,
		dates: []string{"date_from"}, ordered: true, values: escapeValues},
	// Windows in subqueries with no variable beneath them: over rows no
	// value selects, computed when the table is built as a run does.
	{name: "window_fixed_subquery_join", sampled: true, query: `SELECT d.event, d.r, count(*) AS n FROM
		(SELECT event, rank() OVER (ORDER BY c DESC, event) AS r FROM (SELECT event, count(*) AS c FROM events GROUP BY event) g) d
		JOIN events e ON e.event = d.event WHERE e.timestamp >= {variables.date_from} GROUP BY d.event, d.r ORDER BY d.event`,
		dates: []string{"date_from"}, ordered: true, values: func(p *pools) map[string]any {
			if p.rng.IntN(5) == 0 { // past the data: matches nothing
				return map[string]any{"date_from": variable.Timestamp{Time: demo.End.AddDate(0, 0, 7)}}
			}
			return map[string]any{"date_from": p.date(engine.Day)}
		}},
	{name: "window_fixed_subquery_in", sampled: true, query: `SELECT e.event, count(*) AS n FROM events e
		WHERE e.distinct_id IN (SELECT distinct_id FROM (SELECT distinct_id, event, row_number() OVER (PARTITION BY distinct_id ORDER BY timestamp, uuid) AS k FROM events) x
		WHERE k = 1 AND event = 'signed_up') AND e.event IN {variables.events} GROUP BY e.event ORDER BY e.event`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"events": p.events()} }},
	// A variable in the SELECT list of a query that does not aggregate:
	// the read computes the item over the stored columns it reads.
	{name: "variable_in_plain_select", sampled: true, query: `SELECT uuid, {variables.event} AS asked,
		CASE WHEN event = {variables.event} THEN 1 ELSE 0 END AS hit, timestamp FROM events
		WHERE distinct_id = {variables.user} ORDER BY timestamp, uuid`,
		ordered: true, values: func(p *pools) map[string]any { return map[string]any{"event": p.event(), "user": p.user()} }},
}

// escapeValues are the values of like_escape_key: patterns that escape
// _ and % with !, and some that use them as wildcards.
func escapeValues(p *pools) map[string]any {
	patterns := []string{"signed!_up", "%!_%", "%_%", "$%", "purchase", "%e!%", "!$page%", "s%!_u_"}
	return map[string]any{"pattern": patterns[p.rng.IntN(len(patterns))], "date_from": p.date(engine.Day)}
}

// unbucketed are the shapes with a Date variable whose stored table keeps
// the dates as they are (an equality, rows): no read merges partial
// buckets.
var unbucketed = []string{"date_equality_unbucketed", "rows_in_range", "window_over_rows_in_cte_lag", "ntile_over_rows_subquery"}

// dailyRevenue is the query of the benchmarks too.
const dailyRevenue = `SELECT date(timestamp) AS day, count(*) AS purchases, sum(amount) AS revenue FROM ` + purchases + `
	WHERE country = {variables.country} AND timestamp >= {variables.date_from} AND timestamp < {variables.date_to}
	GROUP BY day ORDER BY day`

func rangeValues(p *pools) map[string]any {
	from := p.date(engine.Day)
	to := p.date(engine.Day)
	if p.rng.IntN(4) > 0 { // mostly a forward range, sometimes an empty one
		span := time.Duration(1+p.rng.IntN(40)) * 24 * time.Hour
		to = variable.Timestamp{Time: from.(variable.Timestamp).Time.Add(span), DateOnly: from.(variable.Timestamp).DateOnly}
	}
	return map[string]any{"date_from": from, "date_to": to}
}

// pools draws variable values from the demo data, including values that
// match no row and dates off bucket boundaries.
type pools struct {
	rng   *rand.Rand
	users []string
}

func (p *pools) pick(values []string, missing string) string {
	if p.rng.IntN(8) == 0 {
		return missing
	}
	return values[p.rng.IntN(len(values))]
}

func (p *pools) country() string { return p.pick(demo.Countries, "ZZ") }
func (p *pools) plan() string    { return p.pick(demo.Plans, "platinum") }
func (p *pools) event() string   { return p.pick(demo.EventNames, "no_such_event") }
func (p *pools) user() string    { return p.pick(p.users, "user-none") }
func (p *pools) amount() int64   { return int64(p.rng.IntN(520)) - 10 }

// pattern is a LIKE pattern of countries: a prefix, a part, one of
// another case (SQLite's LIKE ignores the case of ASCII letters), one
// character, all of them, and one that matches none.
func (p *pools) pattern() string {
	return []string{"U%", "%e%", "de", "_R", "%", "ZZ%", "g%", p.country()}[p.rng.IntN(8)]
}

// countries and events are lists of 1 to 4 values, at times with one
// that matches nothing, at times of nothing that matches.
func (p *pools) countries() []string { return p.list(p.country) }
func (p *pools) events() []string    { return p.list(p.event) }

func (p *pools) list(one func() string) []string {
	if p.rng.IntN(6) == 0 {
		return []string{"none-" + one()} // matches nothing
	}
	out := make([]string, 1+p.rng.IntN(4))
	for i := range out {
		out[i] = one()
	}
	return out
}

// date returns a date around the demo's 90 days (and a little outside):
// a whole day, the start of a bucket b, or an instant off any boundary.
func (p *pools) date(b engine.Bucket) any {
	day := demo.End.AddDate(0, 0, -demo.Days-5+p.rng.IntN(demo.Days+10))
	switch p.rng.IntN(6) {
	case 0:
		return variable.Timestamp{Time: day, DateOnly: true}
	case 1:
		return variable.Timestamp{Time: day.Add(time.Duration(p.rng.IntN(86400)) * time.Second)}
	}
	switch b {
	case engine.Minute, engine.Hour:
		return variable.Timestamp{Time: day.Add(time.Duration(p.rng.IntN(24)) * time.Hour)}
	case engine.Week:
		for day.Weekday() != time.Monday {
			day = day.AddDate(0, 0, -1)
		}
	case engine.Month:
		day = time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return variable.Timestamp{Time: day, DateOnly: p.rng.IntN(2) == 0}
}

func openDemo(t testing.TB, n int) *sql.DB {
	db := testdb.SQLite(t)
	require.NoError(t, loadDemo(db, n))
	return db
}

func loadDemo(db *sql.DB, n int) error {
	return demo.Load(context.Background(), db, n, 42)
}

// inlineAndRead answers values on db twice: inline (tpl rendered, its
// text q) and from the stored table through plan's read (its text rq),
// each answer's rows sorted unless ordered tells that their order counts.
func inlineAndRead(t *testing.T, db *sql.DB, tpl *placeholder.Template, plan *Plan, table string, values map[string]any, ordered bool) (want, got result, q, rq string) {
	t.Helper()
	q, args, err := tpl.Render(engine.SQLite, values)
	require.NoError(t, err)
	want = query(t, db, q, args)
	rq, rargs, err := plan.Read(table, values)
	require.NoError(t, err)
	got = query(t, db, rq, rargs)
	if !ordered {
		sortRows(want.rows)
		sortRows(got.rows)
	}
	return want, got, q, rq
}

type result struct {
	columns []string
	rows    [][]any
}

func query(t testing.TB, db *sql.DB, q string, args []any) result {
	rows, err := db.Query(q, args...)
	require.NoError(t, err, "%v", q)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	res := result{columns: cols, rows: [][]any{}}
	for rows.Next() {
		row := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		res.rows = append(res.rows, row)
	}
	require.NoError(t, rows.Err())
	return res
}

// matchedNothing reports whether r is the answer to a run that matched no
// row: no rows, or the one row of aggregates over nothing (0 or NULL).
func matchedNothing(r result) bool {
	if len(r.rows) != 1 {
		return len(r.rows) == 0
	}
	for _, v := range r.rows[0] {
		if v != nil && v != int64(0) {
			return false
		}
	}
	return true
}

func sortRows(rows [][]any) {
	sort.Slice(rows, func(i, j int) bool { return fmt.Sprint(rows[i]) < fmt.Sprint(rows[j]) })
}

// TestReadEqualsInline runs every shape materialized and inline on the
// demo data on SQLite, for 60 values each, and requires identical results,
// whole and in pages: the same columns, the same values of the same Go
// types (avg included: the read divides the same integer sum by the same
// count in float64, as SQLite's avg does), in the same order where the
// query's ORDER BY is total. The cross-engine TestEquivalence, through the
// Service on SQLite, PostgreSQL and MySQL, is in internal/equivalence.
func TestReadEqualsInline(t *testing.T) {
	skipUnderRace(t)
	t.Parallel() // a database of its own: the sweeps share the CPUs
	// 20,000 events with -tags long; 5,000 by default, as -short had them:
	// the larger set took most of the package's CPU.
	n := 5000
	if long {
		n = 20000
	}
	db := openDemo(t, n)
	a, b := len(shapes), 15
	require.True(t, (a >= b), "len(shapes) = %v, want >= %v", a, b)
	p := demoPools(t, db, 7, 7)
	pageRng := rand.New(rand.NewPCG(8, 8)) // apart from p's, which draws the values
	for i, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			opts := s.options()
			a, err := Analyze(s.query, opts)
			require.NoError(t, err)
			require.True(t, a.Materializable(), "%v: a.Materializable() is false", a.Reasons)
			table := fmt.Sprintf("mat_%d", i)
			refreshInto(t, db, a.Plan, table)
			tpl, err := placeholder.Compile(s.query)
			require.NoError(t, err)
			materialized, merged, empty := 0, 0, 0
			runs := 60
			if s.sampled && !long {
				runs = sampledRuns
			}
			for range runs {
				values := s.values(p)
				want, got, q, rq := inlineAndRead(t, db, tpl, a.Plan, table, values, s.ordered)
				if strings.Contains(rq, "stored_parts") {
					merged++
				}
				materialized++
				if matchedNothing(want) {
					empty++
				}
				require.Equal(t, want.columns, got.columns)
				if got, want := got.rows, want.rows; !reflect.DeepEqual(got, want) {
					t.Fatalf("values %v\ninline: %s\nread: %s: got.rows = %+v, want %+v", values, q, rq, got, want)
				}
				checkPages(t, db, a.Plan, table, values, want.rows, s.ordered, pageRng)
			}
			if a, b := materialized, 20; !(a >= b) {
				t.Fatalf("too few runs answered from the stored table: materialized = %v, want >= %v", a, b)
			}
			if a, b := empty, 0; !(a > b) {
				t.Fatalf("no run matched nothing: empty = %v, want > %v", a, b)
			}
			if len(s.dates) > 0 && !slices.Contains(unbucketed, s.name) {
				a, b := merged, 0
				require.True(t, (a > b), "no date off a bucket boundary: merged = %v, want > %v", a, b)
			}
		})
	}
}

// checkPages compares a page of a materialized read (ReadPage) with the
// same page of the inline answer want: the rows the inline query paged
// with LIMIT and OFFSET returns when its order is total. Where it is not,
// the page holds every row and is compared as a set. One page per run
// keeps the test quick; over 60 runs the pages cover empty ones, first
// ones, middle ones and ones past the end.
func checkPages(t *testing.T, db *sql.DB, plan *Plan, table string, values map[string]any, want [][]any, ordered bool, rng *rand.Rand) {
	t.Helper()
	n := len(want)
	limit, offset := n+1, 0
	if ordered {
		limit, offset = rng.IntN(7), rng.IntN(n+2)
		if rng.IntN(4) == 0 {
			offset = 0
		}
	}
	rq, rargs, err := plan.ReadPage(table, values, int64(limit), int64(offset))
	require.NoError(t, err)
	got := query(t, db, rq, rargs).rows
	page := want[min(offset, n):min(offset+limit, n)]
	if !ordered {
		page = slices.Clone(want)
		sortRows(page)
		sortRows(got)
	}
	if got, want := len(got), len(page); got != want {
		t.Fatalf("values %v, limit %d offset %d\nread: %s: len(got) = %v, want %v", values, limit, offset, rq, got, want)
	}
	for i := range page {
		got, want := got[i], page[i]
		require.Equal(t, want, got, "values %v, limit %d offset %d, row %d\nread: %s: got[i]", values, limit, offset, i, rq)
	}
}

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
	p := demoPools(t, db, 3, 9)
	pageRng := rand.New(rand.NewPCG(4, 4))
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
				want, got, q, rq := inlineAndRead(t, db, tpl, a.Plan, table, values, s.ordered)
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
	p := demoPools(t, db, 11, 11)
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
