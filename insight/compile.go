package insight

import (
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// Compiled is one SQL statement computing an insight, with its bound
// arguments, and what Shape needs to turn its rows into the result.
type Compiled struct {
	// SQL is the statement; it holds no value of the query or of a run,
	// only bind markers.
	SQL string
	// Args are the bound arguments, in marker order.
	Args []any

	q  *Query // the query compiled, for labels and breakdowns
	sp span   // its resolved date range, for filling empty intervals
}

// Compile returns the SQL computing q over the events table in dialect d,
// its date range resolved against now. Run q.Apply first to filter by
// run-time values.
//
// A trends statement returns one row per series, breakdown values and
// non-empty interval: (series, bucket, b0, b1, ..., value), and with
// breakdowns a last column, other, that is 1 on the rows of the series
// folding the values past the limit (see below). A retention statement
// returns one row per breakdown values, cohort and later period with
// returning users: (b0, ..., cohort, period, actors), where the row with
// period = cohort holds the cohort's size. A lifecycle statement returns
// one row per status and interval with users: (status, period, actors),
// status the index of the status in statuses, period the 1-based index of
// the interval in the date range. Shape turns each into PostHog's result
// shape.
//
// The breakdown limit is applied in the statement, as PostHog applies it,
// so that the rows returned stay few whatever the number of values: each
// query series keeps on its own the BreakdownLimit combinations of
// breakdown values whose aggregated value over the range (the sum of the
// series' data, its Count) is largest, ties broken by the values in
// ascending order (the engine's order of text: byte order on SQLite,
// MySQL, whose property text is binary, and ClickHouse; the database's
// collation on PostgreSQL). The other combinations are summed, interval
// by interval, into one series, as PostHog sums them whatever the math
// (so that for dau and avg it is a sum of the values, not a recount),
// unless HideOther drops it (Shape does, so that Result.HasMore still
// tells that values were left out, as PostHog's hasMore does). PostHog ranks the unset value ("") after
// every set one; here it competes by its total like any value, as the
// series have always been ordered by Count. A breakdown variable (Apply)
// filters the events before the ranking, so that it selects its value
// even when that value would not be among the kept ones.
func Compile(q *Query, d engine.Engine, now time.Time) (*Compiled, error) {
	return compile(q, d, now, true)
}

// compile is Compile; limited false leaves the breakdown limit out, for
// the rows a materialized table stores (every value, so that a breakdown
// variable can select any of them).
func compile(q *Query, d engine.Engine, now time.Time, limited bool) (*Compiled, error) {
	sp, err := resolveSpan(q, now)
	if err != nil {
		return nil, err
	}
	g := newGen(d)
	switch {
	case q.Kind == Retention:
		writeRetention(g, q, sp)
	case q.Kind == Lifecycle:
		if len(sp.buckets) > MaxLifecycleIntervals {
			return nil, errorf("dateRange", "a lifecycle holds at most %d intervals, this range %d %ss; choose a shorter range or a longer interval",
				MaxLifecycleIntervals, len(sp.buckets), q.Interval)
		}
		writeLifecycle(g, q, sp)
	case limited && len(q.Breakdowns) > 0:
		writeTopBreakdowns(g, q, func() { writeTrends(g, q, sp) })
	default:
		writeTrends(g, q, sp)
	}
	if err := g.Err(); err != nil {
		return nil, fmt.Errorf("insight: compile for %s: %w", d.Name(), err)
	}
	return &Compiled{SQL: g.SQL(), Args: g.Args(), q: q, sp: sp}, nil
}

// writeTopBreakdowns writes the breakdown limit around the rows that
// source writes, one per series, breakdown values and interval (series,
// bucket, b0, ..., value): a window sums each combination's values over
// the range, a second one ranks the combinations of each series, and the
// outer grouping keeps the first BreakdownLimit as they are and sums the
// rest per interval into rows whose breakdown columns are empty and whose
// other column is 1. Every level names its columns afresh ("y", "k0",
// "total"), so that no engine reads an alias as the column it renames.
// NULL values (an aggregate over no number) count as 0, as Shape reads
// them.
func writeTopBreakdowns(g *gen, q *Query, source func()) {
	n := len(q.Breakdowns)
	limit := q.breakdownLimit()
	g.w("SELECT #, #", "series", "bucket")
	for j := range n {
		g.w(", # AS #", foldedName(j), breakdownName(j))
	}
	g.w(", sum(#) AS #, # AS #\nFROM (\n  SELECT #, #", "y", "value", "other", "other", "series", "bucket")
	for j := range n {
		g.w(", CASE WHEN # <= ", "rank")
		g.Bind(limit)
		g.w(" THEN # ELSE '' END AS #", breakdownName(j), foldedName(j))
	}
	g.w(", CASE WHEN # <= ", "rank")
	g.Bind(limit)
	g.w(" THEN 0 ELSE 1 END AS #, #\n  FROM (\n    SELECT #, #", "other", "y", "series", "bucket")
	g.breakdownColumns(n, "")
	g.w(", #, dense_rank() OVER (PARTITION BY # ORDER BY # DESC", "y", "series", "total")
	g.breakdownColumns(n, "")
	g.w(") AS #\n    FROM (\n      SELECT #, #", "rank", "series", "bucket")
	g.breakdownColumns(n, "")
	g.w(", # AS #, sum(COALESCE(#, 0)) OVER (PARTITION BY #", "value", "y", "value", "series")
	g.breakdownColumns(n, "")
	g.w(") AS #\n      FROM (\n", "total")
	source()
	g.w("\n      ) AS #\n    ) AS #\n  ) AS #\n) AS #\nGROUP BY #, #", "r", "t", "k", "f", "series", "bucket")
	for j := range n {
		g.WriteString(", ")
		g.WriteIdent(foldedName(j))
	}
	g.w(", #", "other")
}

// writeTrends writes a UNION ALL of one grouped select per series. The
// inner select computes each bound expression once, so that the outer
// GROUP BY names columns: an engine cannot tell that two expressions with
// different bind markers are the same. Counts are cast to the engine's
// float, the type of the other maths' values, so that every series' value
// column has one type: ClickHouse finds no common type for an integer
// count and a float sum (it makes a Variant, which no aggregate takes).
func writeTrends(g *gen, q *Query, sp span) {
	for i, s := range q.Series {
		if i > 0 {
			g.WriteString("\nUNION ALL\n")
		}
		g.WriteString(fmt.Sprintf("SELECT %d AS ", i))
		g.w("#, #", "series", "bucket")
		g.breakdownColumns(len(q.Breakdowns), "")
		g.WriteString(", ")
		switch s.Math {
		case Total:
			g.float(func() { g.WriteString("count(*)") })
		case DAU:
			g.float(func() { g.w("count(DISTINCT #)", "actor") })
		default:
			g.w(string(s.Math)+"(#)", "v")
		}
		g.w(" AS #\nFROM (SELECT ", "value")
		g.bucket(q.Interval, colTime)
		g.w(" AS #", "bucket")
		for j, b := range q.Breakdowns {
			g.WriteString(", ")
			g.text(b.Property)
			g.w(" AS #", breakdownName(j))
		}
		if s.Math == DAU {
			g.w(", # AS #", colActor, "actor")
		}
		if s.Math.needsProperty() {
			g.WriteString(", ")
			g.number(s.MathProperty)
			g.w(" AS #", "v")
		}
		g.WriteString("\n  FROM ")
		g.events(q)
		g.WriteString("\n  WHERE 1 = 1")
		if s.Event != "" {
			g.w(" AND # = ", colEvent)
			g.Bind(s.Event)
		}
		g.timeRange(colTime, sp)
		g.filters(q.Properties)
		g.w(") AS #\nGROUP BY #", "e", "bucket")
		g.breakdownColumns(len(q.Breakdowns), "")
	}
}

// writeRetention writes the cohorts (users by breakdown values and period
// of their start), the periods in which they returned, and counts of
// both. A user's breakdown values are those of their events, as PostHog
// groups actors by (actor, breakdown value): so filtering by a breakdown
// value yields exactly that value's cohorts.
func writeRetention(g *gen, q *Query, sp span) {
	r := q.Retention
	n := len(q.Breakdowns)
	g.w("WITH #", "e")
	g.materialized()
	g.w("(\n  SELECT # AS #", colActor, "actor")
	for j, b := range q.Breakdowns {
		g.WriteString(", ")
		g.text(b.Property)
		g.w(" AS #", breakdownName(j))
	}
	g.w(", # AS #, ", colTime, "ts")
	g.bucket(q.Interval, colTime)
	g.w(" AS #,\n    CASE WHEN # = ", "period", colEvent)
	g.Bind(r.TargetEvent)
	g.w(" THEN 1 ELSE 0 END AS #, CASE WHEN # = ", "is_target", colEvent)
	g.Bind(r.ReturningEvent)
	g.w(" THEN 1 ELSE 0 END AS #\n  FROM ", "is_return")
	g.events(q)
	g.w("\n  WHERE # IN (", colEvent)
	g.Bind([]string{r.TargetEvent, r.ReturningEvent})
	g.WriteString(")")
	g.filters(q.Properties)
	if r.Type == Recurring {
		// First-time cohorts need every earlier target event, recurring
		// ones only the range.
		g.timeRange(colTime, sp)
	}
	g.w("\n),\n#", "starts")
	g.materialized()
	g.WriteString("(\n")
	if r.Type == Recurring {
		g.w("  SELECT DISTINCT #", "actor")
		g.breakdownColumns(n, "")
		g.w(", # AS # FROM # WHERE # = 1", "period", "cohort", "e", "is_target")
	} else {
		g.w("  SELECT #", "actor")
		g.breakdownColumns(n, "")
		g.WriteString(", ")
		g.bucket(q.Interval, "first_ts")
		g.w(" AS #\n  FROM (SELECT #", "cohort", "actor")
		g.breakdownColumns(n, "")
		g.w(", min(#) AS # FROM # WHERE # = 1 GROUP BY #", "ts", "first_ts", "e", "is_target", "actor")
		g.breakdownColumns(n, "")
		g.w(") AS #\n  WHERE 1 = 1", "f")
		g.timeRange("first_ts", sp)
	}
	g.w("\n),\n#", "returns")
	g.materialized()
	g.w("(\n  SELECT DISTINCT #", "actor")
	g.breakdownColumns(n, "")
	g.w(", # FROM # WHERE # = 1", "period", "e", "is_return")
	if r.Type == FirstTime {
		g.timeRange("ts", sp)
	}
	g.WriteString("\n)\nSELECT ")
	for j := range n {
		g.WriteIdent(breakdownName(j))
		g.WriteString(", ")
	}
	g.w("#, # AS #, count(*) AS # FROM # GROUP BY #", "cohort", "cohort", "period", "actors", "starts", "cohort")
	g.breakdownColumns(n, "")
	g.WriteString("\nUNION ALL\nSELECT ")
	for j := range n {
		g.w("#.#, ", "s", breakdownName(j))
	}
	g.w("#.#, #.#, count(*)\nFROM # AS # JOIN # AS # ON #.# = #.#",
		"s", "cohort", "r", "period", "starts", "s", "returns", "r", "r", "actor", "s", "actor")
	for j := range n {
		b := breakdownName(j)
		g.w(" AND #.# = #.#", "r", b, "s", b)
	}
	g.w("\nWHERE #.# > #.#\nGROUP BY #.#, #.#", "r", "period", "s", "cohort", "s", "cohort", "r", "period")
	g.breakdownColumns(n, "s")
}
