package equivalence

import (
	"maps"

	"github.com/endpointkit/endpointkit/variable"
)

// The analyst corpus (issue 37): queries written for the demo events the
// way analysts write them (CTE chains, funnels, cohorts and retention,
// top-N per group, rolling windows, joins of the events with themselves,
// percentiles, DAU/WAU, sessions, property breakdowns), with their filters
// as variables. Each has an expected verdict in
// testdata/analyst/verdicts.golden (analyst_test.go checks it), and each
// that materializes is run inline and materialized on every engine that is
// up, on and off the buckets' boundaries, with and without a live tail, in
// the isolation matrix.

// The variables the analyst corpus adds to the corpus's.
func init() {
	variables = append(variables,
		variable.Variable{ID: "00000000-0000-4000-8000-000000000012", Name: "event", CodeName: "event", Type: variable.String},
		variable.Variable{ID: "00000000-0000-4000-8000-000000000013", Name: "step", CodeName: "step", Type: variable.String},
		variable.Variable{ID: "00000000-0000-4000-8000-000000000014", Name: "browser", CodeName: "browser", Type: variable.String},
		variable.Variable{ID: "00000000-0000-4000-8000-000000000015", Name: "events", CodeName: "events", Type: variable.List, IsMulti: true,
			Values: []string{"$pageview", "$autocapture", "signed_up", "purchase", "nothing"}},
	)
}

// analyst is one query of the analyst corpus.
type analyst struct {
	name string
	// shapes are what the query is made of, for the golden table.
	shapes []string
	// engines are the dialects (dialect.name) the query is written for;
	// nil: every engine.
	engines []string
	storage storage
	vars    []string
	sql     func(d *dialect) string
	ordered bool
	// tail is the live tail's column, qualified where the query joins
	// tables: "timestamp" when "", none when noTail.
	tail string
	// arbitrary: the query's rows are any the engine picks (LIMIT without
	// ORDER BY, kept for its verdict), so no two databases need answer
	// alike and the isolation matrix leaves it out (chDB's parallel reads
	// picked different users from one database to the other).
	arbitrary bool
	// runs are made from the range runs (analystRanges) with fixed; or
	// given.
	fixed map[string]any
	runs  []run
}

// noTail is analyst.tail of a query whose FROM has no column holding each
// row's time (its rows are a derived table's aggregates): it runs without
// a live tail, and the library refuses one on the time column of its
// source (TestAnalystTailColumnRefused). It is also the tail of a query
// that materializes only without one (a floating-point sum, which a read
// with a tail adds up again: TestFloatSumVerdicts in materialize).
const noTail = "-"

// analystRanges are the date ranges of the analyst runs: on the buckets'
// boundaries (a day, a Monday), off them, within one day, across the
// whole data, and empty. The default run takes the first three and the
// last.
var analystRanges = [][2]string{
	{"2025-05-01", "2025-05-15"},
	{"2025-05-01 06:30:00", "2025-05-06 12:00:00"},
	{"2025-04-28", "2025-06-02"},
	{"2025-04-30T23:59:59", "2025-05-05T00:00:01"},
	{"2025-03-10 13:15:00", "2025-06-01 23:00:00"},
	{"2025-05-04 23:59:59", "2025-05-05 00:00:00"},
	{"2025-05-12 00:00:00", "2025-05-12 00:00:00"},
}

// runsOf returns the runs of q: its own, or one per range with its fixed
// values (only the range variables q uses).
func (q *analyst) runsOf() []run {
	if q.runs != nil {
		return q.runs
	}
	var runs []run
	for _, r := range analystRanges {
		vars := maps.Clone(q.fixed)
		if vars == nil {
			vars = map[string]any{}
		}
		for _, v := range q.vars {
			switch v {
			case "from":
				vars["from"] = r[0]
			case "to":
				vars["to"] = r[1]
			}
		}
		runs = append(runs, run{vars: vars})
	}
	return runs
}

// runsOn reports whether q is written for the dialect named d.
func (q *analyst) runsOn(d string) bool {
	if q.engines == nil {
		return true
	}
	for _, e := range q.engines {
		if e == d {
			return true
		}
	}
	return false
}

// week is the ISO week of a text timestamp as a user of the engine
// writes it.
func (d *dialect) week(col string) string {
	switch d.name {
	case "postgres":
		return "to_char(CAST(" + col + " AS timestamp), 'IYYY-IW')"
	case "mysql":
		return "yearweek(" + col + ", 3)"
	case "clickhouse":
		return "toYearWeek(parseDateTimeBestEffort(" + col + ", 'UTC'), 3)"
	}
	return "strftime('%Y-%W', " + col + ")"
}

// dayText is the day of a text timestamp compared with a Date variable:
// on SQLite the text of its midnight (a bucketed read needs UTC text
// YYYY-MM-DD HH:MM:SS there; date() alone is refused at refresh), the
// engine's day elsewhere.
func (d *dialect) dayText(col string) string {
	if d.name == "sqlite" {
		return "datetime(date(" + col + "))"
	}
	return d.day(col, asText)
}

// ago is the date variable v moved back by n days, in the engine's
// interval syntax, against a timestamp column stored as s.
func (d *dialect) ago(v string, n string) string {
	switch d.name {
	case "postgres":
		return "CAST(" + v + " AS timestamp) - INTERVAL '" + n + "' DAY"
	case "mysql":
		return v + " - INTERVAL " + n + " DAY"
	case "clickhouse":
		return "toDateTime64(" + v + ", 6, 'UTC') - INTERVAL " + n + " DAY"
	}
	return "datetime(" + v + ", '-" + n + " days')"
}

var (
	sqlOnly   = []string{"sqlite"}
	sqlPG     = []string{"sqlite", "postgres"} // MariaDB: no LIMIT in an IN subquery; ClickHouse: no correlated subqueries
	pgOnly    = []string{"postgres"}
	chOnly    = []string{"clickhouse"}
	notSQLite = []string{"postgres", "mysql", "clickhouse"}
	// notCH: ClickHouse reads a column of the select list's name as
	// the alias (lower(browser) AS browser), or has no correlated
	// subqueries.
	notCH = []string{"sqlite", "postgres", "mysql"}
)

// analystQueries are the analyst corpus.
func analystQueries() []*analyst {
	ev := map[string]any{"event": "$pageview"}
	buy := map[string]any{"event": "purchase"}
	day := func(d *dialect) string { return d.day("timestamp", asText) }
	return []*analyst{
		// Property breakdowns.
		{name: "breakdown_event_range", shapes: []string{"breakdown", "range"}, vars: []string{"from", "to"},
			sql: shared(`SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY event`)},
		{name: "breakdown_browser_users", shapes: []string{"breakdown", "count distinct", "range"}, vars: []string{"event", "from", "to"}, fixed: ev,
			sql: shared(`SELECT browser, count(*) AS n, count(DISTINCT distinct_id) AS users
FROM events_p
WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY browser`)},
		{name: "breakdown_country_list", shapes: []string{"breakdown", "list"}, vars: []string{"countries", "from"},
			fixed: map[string]any{"countries": []string{"US", "DE", "GB"}},
			sql:   shared(`SELECT country, count(*) AS n, min(timestamp) AS first_seen FROM events_p WHERE country IN {variables.countries} AND timestamp >= {variables.from} GROUP BY country`)},
		{name: "breakdown_revenue_plan", shapes: []string{"breakdown", "revenue", "range"}, vars: []string{"from", "to"},
			sql: shared(`SELECT plan, sum(amount) AS revenue, count(*) AS purchases, avg(amount) AS mean
FROM events_p
WHERE event = 'purchase' AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY plan`)},
		{name: "breakdown_country_browser", shapes: []string{"breakdown", "two keys", "range"}, vars: []string{"browser", "from", "to"},
			fixed: map[string]any{"browser": "Chrome"},
			sql: shared(`SELECT country, browser, count(*) AS n, sum(amount) AS revenue
FROM events_p
WHERE browser = {variables.browser} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY country, browser`)},
		{name: "breakdown_event_list", shapes: []string{"breakdown", "list", "range"}, vars: []string{"events", "from", "to"},
			fixed: map[string]any{"events": []string{"signed_up", "purchase"}},
			sql:   shared(`SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users FROM events WHERE event IN {variables.events} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY event`)},
		{name: "breakdown_amount_sizes", shapes: []string{"breakdown", "case", "range"}, vars: []string{"from", "to"},
			sql: shared(`SELECT CASE WHEN amount < 100 THEN 'small' WHEN amount < 300 THEN 'medium' ELSE 'large' END AS size,
  count(*) AS n, sum(amount) AS revenue
FROM events_p
WHERE event = 'purchase' AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY 1`)},
		{name: "breakdown_property_json", shapes: []string{"breakdown", "json property", "range"}, vars: []string{"text", "from", "to"},
			fixed: map[string]any{"text": "US"},
			sql: func(d *dialect) string {
				return `SELECT ` + d.property("properties", "plan") + ` AS plan, count(*) AS n FROM events WHERE ` +
					d.property("properties", "country") + ` = {variables.text} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY 1`
			}},
		{name: "breakdown_lower_browser", shapes: []string{"breakdown", "function of column"}, engines: notCH, vars: []string{"text", "from"},
			fixed: map[string]any{"text": "chrome"},
			sql:   shared(`SELECT lower(browser) AS browser, count(*) AS n FROM events_p WHERE lower(browser) = {variables.text} AND timestamp >= {variables.from} GROUP BY lower(browser)`)},
		{name: "breakdown_var_both_sides", shapes: []string{"breakdown", "function of variable"}, vars: []string{"text", "from"},
			fixed: map[string]any{"text": "Chrome"},
			sql:   shared(`SELECT browser, count(*) AS n FROM events_p WHERE lower(browser) = lower({variables.text}) AND timestamp >= {variables.from} GROUP BY browser`)},

		// Top N.
		{name: "top_countries", shapes: []string{"top-N", "order by limit", "range"}, vars: []string{"event", "from", "to"}, fixed: ev, ordered: true,
			sql: shared(`SELECT country, count(*) AS n
FROM events_p
WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY country
ORDER BY n DESC, country
LIMIT 5`)},
		{name: "top_users_by_events", shapes: []string{"top-N", "order by limit", "range"}, vars: []string{"from", "to"}, ordered: true,
			sql: shared(`SELECT distinct_id, count(*) AS n FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY distinct_id ORDER BY n DESC, distinct_id LIMIT 10`)},
		{name: "top_buyers_revenue", shapes: []string{"top-N", "revenue", "range"}, vars: []string{"from", "to"}, ordered: true,
			sql: shared(`SELECT distinct_id, sum(amount) AS revenue, count(*) AS purchases
FROM events_p
WHERE event = 'purchase' AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY distinct_id
ORDER BY revenue DESC, distinct_id
LIMIT 10`)},
		{name: "top_buyers_having_var", shapes: []string{"top-N", "having"}, vars: []string{"num", "from"},
			fixed: map[string]any{"num": 400},
			sql: shared(`SELECT distinct_id, sum(amount) AS revenue FROM events_p WHERE event = 'purchase' AND timestamp >= {variables.from}
GROUP BY distinct_id HAVING sum(amount) > {variables.num} ORDER BY revenue DESC, distinct_id`)},
		{name: "top_browser_per_country_window", shapes: []string{"top-N per group", "window", "subquery in FROM"}, vars: []string{"from"},
			sql: shared(`SELECT country, browser, n FROM (
  SELECT country, browser, count(*) AS n,
    ROW_NUMBER() OVER (PARTITION BY country ORDER BY count(*) DESC, browser) AS rk
  FROM events_p WHERE timestamp >= {variables.from} GROUP BY country, browser
) ranked WHERE rk <= 2`)},
		{name: "top_pages_per_user_cte", shapes: []string{"top-N per group", "CTE", "window"}, vars: []string{"from", "to"},
			sql: shared(`WITH per_user AS (
  SELECT distinct_id, event, count(*) AS n FROM events
  WHERE timestamp >= {variables.from} AND timestamp < {variables.to}
  GROUP BY distinct_id, event
), ranked AS (
  SELECT distinct_id, event, n, RANK() OVER (PARTITION BY distinct_id ORDER BY n DESC) AS rk FROM per_user
)
SELECT distinct_id, event, n FROM ranked WHERE rk = 1 ORDER BY distinct_id, event`)},
		{name: "top_browser_rank_over_groups", shapes: []string{"top-N per group", "window over groups", "range"}, vars: []string{"from", "to"},
			sql: shared(`SELECT country, browser, count(*) AS n,
  RANK() OVER (PARTITION BY country ORDER BY count(*) DESC, browser) AS rk
FROM events_p WHERE timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY country, browser`)},
		{name: "last_purchase_correlated", tail: "e.timestamp", shapes: []string{"top-N per group", "correlated subquery"}, engines: notCH, vars: []string{"from"}, ordered: true,
			sql: shared(`SELECT e.distinct_id, e.timestamp, e.uuid FROM events e
WHERE e.event = 'purchase' AND e.timestamp >= {variables.from}
  AND e.timestamp = (SELECT max(x.timestamp) FROM events x WHERE x.distinct_id = e.distinct_id AND x.event = 'purchase')
ORDER BY e.distinct_id, e.uuid`)},

		// DAU, WAU, MAU.
		{name: "dau", shapes: []string{"DAU", "count distinct", "group by day"}, vars: []string{"from", "to"},
			sql: func(d *dialect) string {
				return `SELECT ` + day(d) + ` AS day, count(DISTINCT distinct_id) AS users FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY ` + day(d)
			}},
		{name: "dau_of_event", shapes: []string{"DAU", "count distinct", "group by day"}, vars: []string{"event", "from", "to"}, fixed: ev,
			sql: func(d *dialect) string {
				return `SELECT ` + day(d) + ` AS day, count(DISTINCT distinct_id) AS users, count(*) AS events
FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY ` + day(d)
			}},
		{name: "dau_by_country", shapes: []string{"DAU", "breakdown", "list"}, vars: []string{"countries", "from", "to"},
			fixed: map[string]any{"countries": []string{"US", "DE"}},
			sql: func(d *dialect) string {
				return `SELECT ` + day(d) + ` AS day, country, count(DISTINCT distinct_id) AS users
FROM events_p WHERE country IN {variables.countries} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY ` + day(d) + `, country`
			}},
		{name: "wau", shapes: []string{"WAU", "count distinct", "group by week"}, vars: []string{"from", "to"},
			sql: func(d *dialect) string {
				return `SELECT ` + d.week("timestamp") + ` AS week, count(DISTINCT distinct_id) AS users FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY 1`
			}},
		{name: "mau", shapes: []string{"MAU", "count distinct", "group by month"}, vars: []string{"event", "from", "to"}, fixed: ev,
			sql: shared(`SELECT substr(timestamp, 1, 7) AS month, count(DISTINCT distinct_id) AS users
FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY substr(timestamp, 1, 7)`)},
		{name: "users_in_range", shapes: []string{"count distinct", "range"}, vars: []string{"event", "from", "to"}, fixed: ev,
			sql: shared(`SELECT count(DISTINCT distinct_id) AS users, count(*) AS events FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to}`)},
		{name: "hourly_pageviews", shapes: []string{"group by hour", "range"}, vars: []string{"from", "to"}, ordered: true,
			sql: shared(`SELECT substr(timestamp, 1, 13) AS hour, count(*) AS n FROM events WHERE event = '$pageview' AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY substr(timestamp, 1, 13) ORDER BY hour`)},
		{name: "stickiness_dau_mau", shapes: []string{"DAU/MAU", "subquery in FROM"}, vars: []string{"from", "to"},
			sql: func(d *dialect) string {
				return `SELECT avg(users) AS avg_dau FROM (
  SELECT ` + day(d) + ` AS day, count(DISTINCT distinct_id) AS users FROM events
  WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY ` + day(d) + `
) daily`
			}},
		{name: "active_days_per_user", shapes: []string{"count distinct expression", "range"}, vars: []string{"from", "to"},
			sql: func(d *dialect) string {
				return `SELECT distinct_id, count(DISTINCT ` + day(d) + `) AS active_days FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY distinct_id`
			}},
		{name: "day_between", shapes: []string{"BETWEEN", "group by day"}, vars: []string{"from", "to"},
			sql: func(d *dialect) string {
				return `SELECT ` + day(d) + ` AS day, count(*) AS n FROM events WHERE timestamp BETWEEN {variables.from} AND {variables.to} GROUP BY ` + day(d)
			}},

		// Funnels in SQL.
		{name: "funnel_conditional_distinct", shapes: []string{"funnel", "conditional aggregate", "range"}, vars: []string{"from", "to"},
			sql: shared(`SELECT count(DISTINCT CASE WHEN event = 'signed_up' THEN distinct_id END) AS signed_up,
  count(DISTINCT CASE WHEN event = 'purchase' THEN distinct_id END) AS purchased
FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to}`)},
		{name: "funnel_self_join", tail: "a.timestamp", shapes: []string{"funnel", "self join", "range"}, vars: []string{"event", "from", "to"}, fixed: map[string]any{"event": "signed_up"},
			sql: shared(`SELECT count(DISTINCT a.distinct_id) AS started, count(DISTINCT b.distinct_id) AS converted
FROM events a LEFT JOIN events b ON b.distinct_id = a.distinct_id AND b.event = 'purchase' AND b.timestamp > a.timestamp
WHERE a.event = {variables.event} AND a.timestamp >= {variables.from} AND a.timestamp < {variables.to}`)},
		{name: "funnel_join_by_country", tail: "a.timestamp", shapes: []string{"funnel", "self join", "breakdown"}, vars: []string{"event", "step", "from"},
			fixed: map[string]any{"event": "$pageview", "step": "purchase"},
			sql: shared(`SELECT a.country, count(*) AS pairs
FROM events_p a JOIN events_p b ON b.distinct_id = a.distinct_id AND b.timestamp > a.timestamp
WHERE a.event = {variables.event} AND b.event = {variables.step} AND a.timestamp >= {variables.from}
GROUP BY a.country`)},
		{name: "funnel_step_in_on", shapes: []string{"funnel", "self join", "variable in ON"}, vars: []string{"step", "from"},
			fixed: map[string]any{"step": "purchase"},
			sql: shared(`SELECT count(DISTINCT a.distinct_id) AS converted
FROM events a JOIN events b ON b.distinct_id = a.distinct_id AND b.event = {variables.step}
WHERE a.event = 'signed_up' AND a.timestamp >= {variables.from}`)},
		{name: "funnel_exists", tail: "e.timestamp", shapes: []string{"funnel", "EXISTS"}, vars: []string{"from", "to"},
			sql: shared(`SELECT count(DISTINCT distinct_id) AS converted FROM events e
WHERE e.event = 'signed_up' AND e.timestamp >= {variables.from} AND e.timestamp < {variables.to}
  AND EXISTS (SELECT 1 FROM events p WHERE p.distinct_id = e.distinct_id AND p.event = 'purchase')`)},
		{name: "funnel_exists_var", shapes: []string{"funnel", "EXISTS", "variable in subquery"}, vars: []string{"step", "from"},
			fixed: map[string]any{"step": "purchase"},
			sql: shared(`SELECT count(DISTINCT distinct_id) AS converted FROM events e
WHERE e.event = 'signed_up' AND e.timestamp >= {variables.from}
  AND EXISTS (SELECT 1 FROM events p WHERE p.distinct_id = e.distinct_id AND p.event = {variables.step})`)},
		{name: "funnel_per_user_subquery", shapes: []string{"funnel", "subquery in FROM"}, vars: []string{"from", "to"},
			sql: shared(`SELECT count(*) AS users, sum(bought) AS converted FROM (
  SELECT distinct_id, max(CASE WHEN event = 'purchase' THEN 1 ELSE 0 END) AS bought
  FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to}
  GROUP BY distinct_id
) u`)},
		{name: "funnel_cte_steps", shapes: []string{"funnel", "CTE chain", "join"}, vars: []string{"from", "to"},
			sql: shared(`WITH signups AS (
  SELECT distinct_id, min(timestamp) AS at FROM events
  WHERE event = 'signed_up' AND timestamp >= {variables.from} AND timestamp < {variables.to}
  GROUP BY distinct_id
), buyers AS (
  SELECT DISTINCT e.distinct_id FROM events e JOIN signups s ON s.distinct_id = e.distinct_id
  WHERE e.event = 'purchase' AND e.timestamp > s.at
)
SELECT (SELECT count(*) FROM signups) AS signed_up, (SELECT count(*) FROM buyers) AS purchased`)},
		{name: "funnel_cte_left_join", tail: "s.timestamp", shapes: []string{"funnel", "CTE", "LEFT JOIN keeps the CTE's rows", "range"}, vars: []string{"from", "to"},
			sql: shared(`WITH signups AS (
  SELECT distinct_id, timestamp FROM events
  WHERE event = 'signed_up' AND timestamp >= {variables.from} AND timestamp < {variables.to}
)
SELECT count(DISTINCT s.distinct_id) AS started, count(DISTINCT b.distinct_id) AS converted
FROM signups s LEFT JOIN events b ON b.distinct_id = s.distinct_id AND b.event = 'purchase' AND b.timestamp > s.timestamp`)},
		{name: "cte_union_all_steps", shapes: []string{"funnel", "CTE", "UNION ALL", "range"}, vars: []string{"from", "to"},
			sql: shared(`WITH steps AS (
  SELECT timestamp, distinct_id, 'viewed' AS step FROM events
  WHERE event = '$pageview' AND timestamp >= {variables.from} AND timestamp < {variables.to}
  UNION ALL
  SELECT timestamp, distinct_id, 'bought' AS step FROM events
  WHERE event = 'purchase' AND timestamp >= {variables.from} AND timestamp < {variables.to}
)
SELECT step, count(*) AS n, count(DISTINCT distinct_id) AS users FROM steps GROUP BY step`)},
		{name: "cte_union_missing_branch", shapes: []string{"CTE", "UNION ALL", "variable in one branch"}, vars: []string{"from"},
			sql: shared(`WITH steps AS (
  SELECT timestamp, distinct_id FROM events WHERE event = '$pageview' AND timestamp >= {variables.from}
  UNION ALL
  SELECT timestamp, distinct_id FROM events WHERE event = 'purchase'
)
SELECT count(*) AS n FROM steps`)},
		{name: "cte_right_join_buyers", tail: "e.timestamp", shapes: []string{"CTE", "RIGHT JOIN keeps the CTE's rows", "list"}, vars: []string{"events"},
			runs: values("events", []string{"purchase"}, []string{"signed_up", "$pageview"}, []string{"nothing"}),
			sql: shared(`WITH e AS (SELECT distinct_id, event, timestamp FROM events WHERE event IN {variables.events})
SELECT e.event, count(*) AS n, count(b.distinct_id) AS buyers
FROM (SELECT DISTINCT distinct_id FROM events WHERE event = 'purchase') b RIGHT JOIN e ON b.distinct_id = e.distinct_id
GROUP BY e.event`)},
		{name: "cte_left_join_null_side", shapes: []string{"CTE", "LEFT JOIN, the variable on the side of NULLs"}, vars: []string{"from"},
			sql: shared(`WITH buys AS (SELECT distinct_id, timestamp FROM events WHERE event = 'purchase' AND timestamp >= {variables.from})
SELECT count(DISTINCT s.distinct_id) AS signed_up, count(DISTINCT b.distinct_id) AS bought
FROM events s LEFT JOIN buys b ON b.distinct_id = s.distinct_id
WHERE s.event = 'signed_up'`)},
		{name: "cte_per_user_aggregation", shapes: []string{"funnel", "CTE", "aggregation carried out", "range"}, vars: []string{"from", "to"},
			sql: shared(`WITH per_user AS (
  SELECT distinct_id, count(*) AS n, sum(CASE WHEN event = 'purchase' THEN 1 ELSE 0 END) AS buys, min(timestamp) AS first_seen
  FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to}
  GROUP BY distinct_id
)
SELECT count(*) AS users, sum(n) AS events, sum(CASE WHEN buys > 0 THEN 1 ELSE 0 END) AS buyers, min(first_seen) AS first_seen
FROM per_user`)},
		{name: "cte_daily_running_total", shapes: []string{"running total", "CTE", "aggregation carried out", "window over the read"}, vars: []string{"event", "from", "to"}, fixed: ev, ordered: true,
			sql: func(d *dialect) string {
				return `WITH daily AS (
  SELECT ` + day(d) + ` AS day, count(*) AS n FROM events
  WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to}
  GROUP BY ` + day(d) + `
)
SELECT day, n, sum(n) OVER (ORDER BY day) AS running FROM daily ORDER BY day`
			}},
		{name: "cte_two_aggregations", shapes: []string{"CTE chain", "aggregation of an aggregation"}, vars: []string{"from"},
			sql: shared(`WITH per_user AS (
  SELECT distinct_id, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY distinct_id
), histogram AS (
  SELECT n, count(*) AS users FROM per_user GROUP BY n
)
SELECT max(users) AS most_common FROM histogram`)},
		{name: "cte_cross_join_comma", tail: "s.timestamp", shapes: []string{"CTE", "cross join", "list"}, vars: []string{"events"},
			runs: values("events", []string{"purchase"}, []string{"signed_up", "$pageview"}, []string{"nothing"}),
			sql: shared(`WITH s AS (SELECT distinct_id, event, timestamp FROM events WHERE event IN {variables.events}),
plans AS (SELECT DISTINCT plan FROM events_p WHERE event = 'purchase')
SELECT p.plan, s.event, count(*) AS n FROM s, plans p GROUP BY p.plan, s.event`)},
		{name: "cte_cross_join_keyword", tail: "s.timestamp", shapes: []string{"CTE", "CROSS JOIN", "list"}, vars: []string{"events"},
			runs: values("events", []string{"purchase"}, []string{"signed_up", "$pageview"}),
			sql: shared(`WITH s AS (SELECT distinct_id, event, timestamp FROM events WHERE event IN {variables.events}),
plans AS (SELECT DISTINCT plan FROM events_p WHERE event = 'purchase')
SELECT p.plan, s.event, count(*) AS n FROM s CROSS JOIN plans p GROUP BY p.plan, s.event`)},
		{name: "funnel_union_steps", shapes: []string{"funnel", "UNION ALL"}, vars: []string{"from"},
			sql: shared(`SELECT 'signed_up' AS step, count(DISTINCT distinct_id) AS users FROM events WHERE event = 'signed_up' AND timestamp >= {variables.from}
UNION ALL
SELECT 'purchase' AS step, count(DISTINCT distinct_id) AS users FROM events WHERE event = 'purchase' AND timestamp >= {variables.from}`)},
		{name: "funnel_in_subquery_const", shapes: []string{"funnel", "IN subquery"}, vars: []string{"from", "to"},
			sql: shared(`SELECT event, count(*) AS n FROM events
WHERE distinct_id IN (SELECT distinct_id FROM events WHERE event = 'signed_up')
  AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY event`)},
		{name: "funnel_in_subquery_var", shapes: []string{"funnel", "IN subquery", "variable in subquery"}, vars: []string{"step", "from"},
			fixed: map[string]any{"step": "signed_up"},
			sql: shared(`SELECT event, count(*) AS n FROM events
WHERE distinct_id IN (SELECT distinct_id FROM events WHERE event = {variables.step})
  AND timestamp >= {variables.from}
GROUP BY event`)},

		// Cohorts and retention.
		{name: "retention_self_join", tail: "s.timestamp", shapes: []string{"retention", "self join", "group by day"}, vars: []string{"from", "to"},
			sql: func(d *dialect) string {
				return `SELECT ` + d.day("s.timestamp", asText) + ` AS cohort_day, count(DISTINCT s.distinct_id) AS cohort, count(DISTINCT r.distinct_id) AS retained
FROM events s LEFT JOIN events r ON r.distinct_id = s.distinct_id AND r.event = '$pageview' AND r.timestamp > s.timestamp
WHERE s.event = 'signed_up' AND s.timestamp >= {variables.from} AND s.timestamp < {variables.to}
GROUP BY ` + d.day("s.timestamp", asText)
			}},
		{name: "cohort_country_buyers", shapes: []string{"cohort", "self join", "list"}, vars: []string{"countries"},
			runs: values("countries", []string{"US"}, []string{"US", "DE", "GB"}, []string{"ZZ"}),
			sql: shared(`SELECT s.country, count(DISTINCT s.distinct_id) AS buyers
FROM events_p s JOIN events_p p ON p.distinct_id = s.distinct_id AND p.event = 'purchase'
WHERE s.event = 'signed_up' AND s.country IN {variables.countries}
GROUP BY s.country`)},
		{name: "cohort_first_seen", shapes: []string{"cohort", "subquery in FROM"}, vars: []string{"from"},
			sql: shared(`SELECT first_day, count(*) AS users FROM (
  SELECT distinct_id, min(substr(timestamp, 1, 10)) AS first_day FROM events
  WHERE timestamp >= {variables.from} GROUP BY distinct_id
) f GROUP BY first_day`)},
		{name: "cohort_first_seen_outer", tail: noTail, shapes: []string{"cohort", "subquery in FROM", "variable on derived column"}, vars: []string{"from"},
			sql: func(d *dialect) string {
				return `SELECT first_day, count(*) AS users FROM (
  SELECT distinct_id, min(` + d.dayText("timestamp") + `) AS first_day FROM events GROUP BY distinct_id
) f WHERE first_day >= {variables.from} GROUP BY first_day`
			}},
		{name: "retention_cte", shapes: []string{"retention", "CTE chain", "self join"}, vars: []string{"from", "to"},
			sql: shared(`WITH cohort AS (
  SELECT distinct_id, min(substr(timestamp, 1, 10)) AS day0 FROM events
  WHERE event = 'signed_up' AND timestamp >= {variables.from} AND timestamp < {variables.to}
  GROUP BY distinct_id
), activity AS (
  SELECT DISTINCT distinct_id, substr(timestamp, 1, 10) AS day FROM events WHERE event = '$pageview'
)
SELECT c.day0, count(DISTINCT c.distinct_id) AS cohort, count(DISTINCT a.distinct_id) AS returned
FROM cohort c LEFT JOIN activity a ON a.distinct_id = c.distinct_id AND a.day > c.day0
GROUP BY c.day0`)},
		{name: "retention_week_lag", shapes: []string{"retention", "window", "LAG"}, vars: []string{"from"},
			sql: shared(`SELECT distinct_id, timestamp, LAG(timestamp) OVER (PARTITION BY distinct_id ORDER BY timestamp) AS previous
FROM events WHERE event = '$pageview' AND timestamp >= {variables.from} ORDER BY distinct_id, timestamp, previous`)},
		{name: "returning_users_plan", tail: "a.timestamp", shapes: []string{"cohort", "self join", "key"}, vars: []string{"text", "from"},
			fixed: map[string]any{"text": "pro"},
			sql: shared(`SELECT a.plan, count(DISTINCT a.distinct_id) AS users
FROM events_p a JOIN events_p b ON b.distinct_id = a.distinct_id AND b.timestamp > a.timestamp AND b.event = '$pageview'
WHERE a.plan = {variables.text} AND a.event = 'signed_up' AND a.timestamp >= {variables.from}
GROUP BY a.plan`)},

		// Rolling windows.
		{name: "rolling_7d_window", shapes: []string{"rolling window", "window"}, vars: []string{"from", "to"},
			sql: func(d *dialect) string {
				return `SELECT ` + day(d) + ` AS day, count(*) AS n,
  sum(count(*)) OVER (ORDER BY ` + day(d) + ` ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS n_7d
FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY ` + day(d)
			}},
		{name: "trailing_90_days", shapes: []string{"rolling window", "interval"}, storage: asTimestamp, vars: []string{"to"},
			runs: values("to", "2025-05-15", "2025-05-20 12:00:00", "2025-06-01"),
			sql: func(d *dialect) string {
				return `SELECT event, count(*) AS n FROM events WHERE timestamp >= ` + d.ago("{variables.to}", "90") + ` AND timestamp < {variables.to} GROUP BY event`
			}},
		{name: "trailing_7_days_users", shapes: []string{"rolling window", "interval", "count distinct"}, storage: asTimestamp, vars: []string{"to"},
			runs: values("to", "2025-05-15", "2025-05-20 12:00:00", "2025-06-01"),
			sql: func(d *dialect) string {
				return `SELECT count(DISTINCT distinct_id) AS users FROM events WHERE timestamp >= ` + d.ago("{variables.to}", "7") + ` AND timestamp < {variables.to}`
			}},
		{name: "rolling_7d_self_join", tail: "a.timestamp", shapes: []string{"rolling window", "self join"}, vars: []string{"from", "to"},
			sql: func(d *dialect) string {
				return `SELECT ` + d.day("a.timestamp", asText) + ` AS day, count(*) AS n_in_week_before
FROM events a JOIN events b ON b.distinct_id = a.distinct_id AND b.timestamp <= a.timestamp AND b.timestamp > ` + d.day("a.timestamp", asText) + `
WHERE a.event = 'purchase' AND a.timestamp >= {variables.from} AND a.timestamp < {variables.to}
GROUP BY ` + d.day("a.timestamp", asText)
			}},
		{name: "cumulative_revenue_window", shapes: []string{"running total", "window"}, vars: []string{"from"},
			sql: shared(`SELECT timestamp, amount, sum(amount) OVER (ORDER BY timestamp, uuid) AS running
FROM events_p WHERE event = 'purchase' AND timestamp >= {variables.from} ORDER BY timestamp, running, amount`)},

		// Joins of the events with themselves.
		{name: "next_event_pairs", tail: "a.timestamp", shapes: []string{"self join", "path"}, vars: []string{"event", "from", "to"}, fixed: map[string]any{"event": "signed_up"},
			sql: shared(`SELECT a.event AS from_event, b.event AS to_event, count(*) AS n
FROM events a JOIN events b ON b.distinct_id = a.distinct_id AND b.timestamp > a.timestamp
WHERE a.event = {variables.event} AND a.timestamp >= {variables.from} AND a.timestamp < {variables.to}
GROUP BY a.event, b.event`)},
		{name: "same_day_purchase", tail: "v.timestamp", shapes: []string{"self join", "same day"}, vars: []string{"from", "to"},
			sql: func(d *dialect) string {
				return `SELECT count(DISTINCT v.distinct_id) AS users
FROM events v JOIN events p ON p.distinct_id = v.distinct_id AND p.event = 'purchase' AND ` + d.day("p.timestamp", asText) + ` = ` + d.day("v.timestamp", asText) + `
WHERE v.event = '$pageview' AND v.timestamp >= {variables.from} AND v.timestamp < {variables.to}`
			}},
		{name: "users_two_browsers", tail: "a.timestamp", shapes: []string{"self join", "inequality"}, vars: []string{"from"},
			sql: shared(`SELECT a.browser, count(DISTINCT a.distinct_id) AS users
FROM events_p a JOIN events_p b ON b.distinct_id = a.distinct_id AND b.browser <> a.browser
WHERE a.timestamp >= {variables.from}
GROUP BY a.browser`)},
		{name: "self_join_var_both_sides", shapes: []string{"self join", "two columns"}, vars: []string{"from"},
			sql: shared(`SELECT a.event, count(*) AS n
FROM events a JOIN events b ON b.distinct_id = a.distinct_id
WHERE a.timestamp >= {variables.from} AND b.timestamp >= {variables.from}
GROUP BY a.event`)},

		// Sessions, lite.
		{name: "session_hours", shapes: []string{"sessions", "count distinct expression"}, vars: []string{"from", "to"},
			sql: shared(`SELECT distinct_id, count(DISTINCT substr(timestamp, 1, 13)) AS session_hours, count(*) AS events
FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY distinct_id`)},
		{name: "first_last_seen", shapes: []string{"sessions", "min/max"}, vars: []string{"event"}, ordered: true,
			runs: values("event", "$pageview", "purchase", "nothing"),
			sql:  shared(`SELECT distinct_id, min(timestamp) AS first_seen, max(timestamp) AS last_seen, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY distinct_id ORDER BY distinct_id`)},
		{name: "session_gap_lag", shapes: []string{"sessions", "window", "CTE"}, vars: []string{"from"},
			sql: shared(`WITH ordered AS (
  SELECT distinct_id, timestamp, LAG(timestamp) OVER (PARTITION BY distinct_id ORDER BY timestamp) AS prev
  FROM events WHERE timestamp >= {variables.from}
)
SELECT distinct_id, count(*) AS sessions FROM ordered WHERE prev IS NULL GROUP BY distinct_id`)},
		{name: "user_timeline", shapes: []string{"rows", "key", "range"}, vars: []string{"user", "from"}, ordered: true,
			fixed: map[string]any{"user": "user-00007"},
			sql:   shared(`SELECT uuid, event, timestamp FROM events WHERE distinct_id = {variables.user} AND timestamp >= {variables.from} ORDER BY timestamp, uuid`)},

		// Percentiles.
		{name: "median_purchase_pg", shapes: []string{"percentile", "WITHIN GROUP"}, engines: pgOnly, vars: []string{"from"},
			sql: shared(`SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY amount) AS median FROM events_p WHERE event = 'purchase' AND timestamp >= {variables.from}`)},
		{name: "quantile_purchase_ch", shapes: []string{"percentile", "parametric aggregate"}, engines: chOnly, vars: []string{"from"},
			sql: shared(`SELECT quantile(0.9)(amount) AS p90 FROM events_p WHERE event = 'purchase' AND timestamp >= {variables.from}`)},
		{name: "percentile_ntile", shapes: []string{"percentile", "window", "subquery in FROM"}, vars: []string{"from"},
			sql: shared(`SELECT bucket, min(amount) AS lo, max(amount) AS hi FROM (
  SELECT amount, NTILE(4) OVER (ORDER BY amount) AS bucket FROM events_p WHERE event = 'purchase' AND timestamp >= {variables.from}
) q GROUP BY bucket`)},
		{name: "percentile_rank_subquery", shapes: []string{"percentile", "subquery in SELECT"}, vars: []string{"from"},
			sql: shared(`SELECT a.uuid, a.amount, (SELECT count(*) FROM events_p b WHERE b.event = 'purchase' AND b.amount <= a.amount) AS rank_below
FROM events_p a WHERE a.event = 'purchase' AND a.timestamp >= {variables.from}`)},
		{name: "amount_stats", shapes: []string{"min/max/avg", "range"}, vars: []string{"from", "to"},
			sql: shared(`SELECT min(amount) AS lo, max(amount) AS hi, avg(amount) AS mean, sum(amount) AS total, count(amount) AS n
FROM events_p WHERE event = 'purchase' AND timestamp >= {variables.from} AND timestamp < {variables.to}`)},
		{name: "revenue_exact_sum", shapes: []string{"breakdown", "revenue", "exact sum", "range", "rewrite of a refusal"}, vars: []string{"from", "to"},
			sql: func(d *dialect) string {
				return `SELECT plan, ` + exactSum(d, "amount") + ` AS revenue, count(*) AS purchases
FROM events_p
WHERE event = 'purchase' AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY plan`
			}},
		{name: "revenue_tenth_float", shapes: []string{"revenue", "floating-point sum", "range"}, vars: []string{"from", "to"}, engines: []string{"sqlite", "clickhouse"},
			sql: shared(`SELECT plan, sum(amount * 0.1) AS fee FROM events_p
WHERE event = 'purchase' AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY plan`)},
		{name: "revenue_float_day", shapes: []string{"revenue", "group by day", "range"}, vars: []string{"from", "to"}, tail: noTail,
			sql: func(d *dialect) string {
				return `SELECT ` + day(d) + ` AS day, sum(amount) AS revenue
FROM events_p
WHERE event = 'purchase' AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY ` + day(d)
			}},

		// Filters analysts write.
		{name: "between_amount", shapes: []string{"BETWEEN", "number"}, vars: []string{"num", "from"},
			fixed: map[string]any{"num": 100},
			sql:   shared(`SELECT country, count(*) AS n FROM events_p WHERE event = 'purchase' AND amount BETWEEN {variables.num} AND 400 AND timestamp >= {variables.from} GROUP BY country`)},
		{name: "or_browser_country", shapes: []string{"OR of keys"}, vars: []string{"browser", "text", "from"},
			fixed: map[string]any{"browser": "Safari", "text": "DE"},
			sql:   shared(`SELECT browser, country, count(*) AS n FROM events_p WHERE (browser = {variables.browser} OR country = {variables.text}) AND timestamp >= {variables.from} GROUP BY browser, country`)},
		{name: "or_two_events", shapes: []string{"OR of keys", "same column"}, vars: []string{"event", "step", "from", "to"},
			fixed: map[string]any{"event": "signed_up", "step": "purchase"},
			sql:   shared(`SELECT event, count(*) AS n FROM events WHERE (event = {variables.event} OR event = {variables.step}) AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY event`)},
		{name: "optional_filter", shapes: []string{"optional filter", "OR"}, vars: []string{"text", "from"},
			fixed: map[string]any{"text": "US"},
			sql:   shared(`SELECT country, count(*) AS n FROM events_p WHERE (country = {variables.text} OR {variables.text} = 'all') AND timestamp >= {variables.from} GROUP BY country`)},
		{name: "not_equal_event", shapes: []string{"inequality"}, vars: []string{"event", "from"}, fixed: ev,
			sql: shared(`SELECT event, count(*) AS n FROM events WHERE event <> {variables.event} AND timestamp >= {variables.from} GROUP BY event`)},
		{name: "like_browser", shapes: []string{"LIKE"}, vars: []string{"text"},
			runs: values("text", "Chr%", "%fox", "chr%"),
			sql:  shared(`SELECT browser, count(*) AS n FROM events_p WHERE browser LIKE {variables.text} GROUP BY browser`)},
		{name: "like_escape_browser", shapes: []string{"LIKE", "ESCAPE"}, vars: []string{"text"}, engines: []string{"sqlite", "postgres", "mysql"},
			runs: values("text", "Chr%", "%!_%", "Fire!%", "%e", "!%%"),
			sql:  shared(`SELECT browser, count(*) AS n FROM events_p WHERE browser LIKE {variables.text} ESCAPE '!' GROUP BY browser`)},
		{name: "var_in_plain_select", shapes: []string{"variable in SELECT", "rows", "case", "range"}, vars: []string{"text", "event", "from"},
			fixed: map[string]any{"text": "US", "event": "purchase"},
			sql: shared(`SELECT uuid, timestamp, {variables.text} AS asked, CASE WHEN country = {variables.text} THEN 'home' ELSE 'abroad' END AS market
FROM events_p WHERE event = {variables.event} AND timestamp >= {variables.from} ORDER BY timestamp, uuid`)},
		{name: "window_first_touch_fixed", shapes: []string{"window", "subquery without variables", "IN subquery", "range"}, vars: []string{"from"}, tail: noTail,
			sql: shared(`SELECT e.country, count(*) AS n FROM events_p e
WHERE e.distinct_id IN (SELECT distinct_id FROM (SELECT distinct_id, event, ROW_NUMBER() OVER (PARTITION BY distinct_id ORDER BY timestamp, uuid) AS k FROM events) f WHERE k = 1 AND event = 'signed_up')
AND e.timestamp >= {variables.from} GROUP BY e.country`)},
		{name: "label_in_select", shapes: []string{"variable in SELECT"}, vars: []string{"text", "from"},
			fixed: map[string]any{"text": "label"},
			sql:   shared(`SELECT {variables.text} AS label, count(*) AS n FROM events WHERE timestamp >= {variables.from}`)},
		{name: "case_var_in_select", shapes: []string{"variable in SELECT", "case"}, vars: []string{"text", "from"},
			fixed: map[string]any{"text": "US"},
			sql:   shared(`SELECT CASE WHEN country = {variables.text} THEN 'home' ELSE 'abroad' END AS market, count(*) AS n FROM events_p WHERE timestamp >= {variables.from} GROUP BY 1`)},
		{name: "derived_table_outer_where", shapes: []string{"subquery in FROM", "variable on derived column"}, vars: []string{"text"},
			runs: values("text", "US", "DE", "ZZ"),
			sql: shared(`SELECT country, n FROM (
  SELECT country, count(*) AS n FROM events_p GROUP BY country
) t WHERE country = {variables.text}`)},
		{name: "derived_table_keyed_var", shapes: []string{"subquery in FROM", "keyed by variable's column"}, vars: []string{"text"},
			runs: values("text", "US", "DE", "ZZ"),
			sql: shared(`SELECT country, sum(n) AS n, count(*) AS events FROM (
  SELECT country, event, count(*) AS n FROM events_p WHERE country = {variables.text} GROUP BY country, event
) t GROUP BY country`)},
		{name: "derived_rows_range", shapes: []string{"subquery in FROM", "keyed by variable's column", "range"}, vars: []string{"from", "to"}, tail: "e.timestamp",
			sql: shared(`SELECT e.event, count(*) AS n, count(DISTINCT e.distinct_id) AS users FROM (
  SELECT event, distinct_id, timestamp FROM events WHERE event <> '$autocapture' AND timestamp >= {variables.from} AND timestamp < {variables.to}
) e GROUP BY e.event`)},
		{name: "derived_per_user_list", shapes: []string{"subquery in FROM", "keyed by variable's column", "list"}, vars: []string{"events"},
			runs: values("events", []string{"purchase"}, []string{"signed_up", "purchase"}, []string{"nothing"}),
			sql: shared(`SELECT count(*) AS users, sum(n) AS events, max(n) AS most FROM (
  SELECT event, distinct_id, count(*) AS n FROM events WHERE event IN {variables.events} GROUP BY event, distinct_id
) u`)},
		{name: "derived_not_keyed", shapes: []string{"subquery in FROM", "not keyed by variable's column"}, vars: []string{"from"},
			sql: shared(`SELECT count(*) AS users, sum(n) AS events FROM (
  SELECT distinct_id, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY distinct_id
) u`)},
		{name: "label_alias_is_code_name", shapes: []string{"rows", "alias named as the variable"}, engines: notSQLite, vars: []string{"step", "from"},
			fixed: map[string]any{"step": "purchase"}, ordered: true,
			sql: shared(`SELECT uuid, concat(event, '!') AS step FROM events WHERE event = {variables.step} AND timestamp >= {variables.from} ORDER BY uuid`)},
		{name: "distinct_users_plain", shapes: []string{"DISTINCT", "range"}, vars: []string{"event", "from"}, fixed: buy, ordered: true,
			sql: shared(`SELECT DISTINCT distinct_id FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} ORDER BY distinct_id`)},
		{name: "limit_without_order", arbitrary: true, shapes: []string{"LIMIT"}, vars: []string{"event"},
			runs: values("event", "purchase"),
			sql:  shared(`SELECT distinct_id FROM events WHERE event = {variables.event} LIMIT 5`)},
		{name: "select_star", shapes: []string{"SELECT *"}, vars: []string{"user"},
			runs: values("user", "user-00007"),
			sql:  shared(`SELECT * FROM events WHERE distinct_id = {variables.user}`)},
		{name: "day_cast_to", shapes: []string{"function of column", "range"}, vars: []string{"from", "to"},
			sql: func(d *dialect) string {
				return `SELECT ` + d.dayText("timestamp") + ` AS day, count(*) AS n FROM events WHERE ` + d.dayText("timestamp") + ` >= {variables.from} AND ` + d.dayText("timestamp") + ` <= {variables.to} GROUP BY 1`
			}},
		{name: "recent_purchases_sqlite", shapes: []string{"rows", "interval", "engine syntax"}, engines: sqlOnly, vars: []string{"at"},
			runs: values("at", "2025-05-20", "2025-05-31 12:00:00"),
			sql:  shared(`SELECT uuid, timestamp FROM events WHERE event = 'purchase' AND timestamp >= datetime({variables.at}, '-3 days') AND timestamp < {variables.at} ORDER BY timestamp, uuid`)},
		{name: "ilike_browser", shapes: []string{"ILIKE", "engine syntax"}, engines: []string{"postgres", "clickhouse"}, vars: []string{"text", "from"},
			fixed: map[string]any{"text": "chrome"},
			sql:   shared(`SELECT browser, count(*) AS n FROM events_p WHERE browser ILIKE {variables.text} AND timestamp >= {variables.from} GROUP BY browser`)},
		// The rewrites the refusals of funnel_in_subquery_var and
		// funnel_exists_var give: the subquery's rows joined, the variable
		// compared in the outer WHERE.
		{name: "funnel_in_subquery_joined", tail: "e.timestamp", shapes: []string{"funnel", "join of a DISTINCT subquery", "rewrite of a refusal"}, vars: []string{"step", "from"},
			fixed: map[string]any{"step": "signed_up"},
			sql: shared(`SELECT e.event, count(*) AS n FROM events e
JOIN (SELECT DISTINCT distinct_id, event FROM events) s ON s.distinct_id = e.distinct_id
WHERE s.event = {variables.step} AND e.timestamp >= {variables.from}
GROUP BY e.event`)},
		{name: "funnel_exists_joined", tail: "e.timestamp", shapes: []string{"funnel", "join of a DISTINCT subquery", "rewrite of a refusal"}, vars: []string{"step", "from"},
			fixed: map[string]any{"step": "purchase"},
			sql: shared(`SELECT count(DISTINCT e.distinct_id) AS converted FROM events e
JOIN (SELECT DISTINCT distinct_id, event FROM events) p ON p.distinct_id = e.distinct_id
WHERE e.event = 'signed_up' AND e.timestamp >= {variables.from} AND p.event = {variables.step}`)},
		{name: "not_in_events", shapes: []string{"NOT IN", "list", "range"}, vars: []string{"events", "from", "to"},
			fixed: map[string]any{"events": []string{"$pageview", "purchase"}},
			sql: shared(`SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users FROM events
WHERE event NOT IN {variables.events} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY event`)},
		{name: "not_like_browser_total", shapes: []string{"NOT LIKE", "ungrouped", "range"}, vars: []string{"text", "from"},
			fixed: map[string]any{"text": "%fox%"},
			sql:   shared(`SELECT count(*) AS n, min(timestamp) AS first_seen, sum(amount) AS revenue FROM events_p WHERE browser NOT LIKE {variables.text} AND timestamp >= {variables.from}`)},
	}
}

// exactSum is the sum of col a refusal of a floating-point sum suggests
// on d: of a decimal where the engine has one, else of an integer of
// hundredths.
func exactSum(d *dialect, col string) string { return exactAgg(d, "sum", col) }

// exactAgg is the aggregate fn (sum or avg) of the hundredths col holds,
// on d: of a decimal where the engine has one, else of an integer of
// hundredths.
func exactAgg(d *dialect, fn, col string) string {
	if t := d.e.ExactSumType(); t != "" {
		return fn + "(CAST(" + col + " AS " + t + "))"
	}
	return fn + "(CAST(round(" + col + " * 100) AS INTEGER)) / 100.0"
}
