package insight

import (
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/engine"
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
// non-empty interval: (series, bucket, b0, b1, ..., value). A retention
// statement returns one row per breakdown values, cohort and later period
// with returning users: (b0, ..., cohort, period, actors), where the row
// with period = cohort holds the cohort's size. Shape turns either into
// PostHog's result shape.
func Compile(q *Query, d engine.Engine, now time.Time) (*Compiled, error) {
	sp, err := resolveSpan(q, now)
	if err != nil {
		return nil, err
	}
	g := newGen(d)
	if q.Kind == Retention {
		writeRetention(g, q, sp)
	} else {
		writeTrends(g, q, sp)
	}
	if err := g.Err(); err != nil {
		return nil, fmt.Errorf("insight: compile for %s: %w", d.Name(), err)
	}
	return &Compiled{SQL: g.SQL(), Args: g.Args(), q: q, sp: sp}, nil
}

// writeTrends writes a UNION ALL of one grouped select per series. The
// inner select computes each bound expression once, so that the outer
// GROUP BY names columns: an engine cannot tell that two expressions with
// different bind markers are the same.
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
			g.WriteString("count(*)")
		case DAU:
			g.w("count(DISTINCT #)", "actor")
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
		g.w("\n  FROM #\n  WHERE 1 = 1", eventsTable)
		g.tenant(q.Tenant)
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
	g.w(" THEN 1 ELSE 0 END AS #\n  FROM #\n  WHERE # IN (", "is_return", eventsTable, colEvent)
	g.Bind([]string{r.TargetEvent, r.ReturningEvent})
	g.WriteString(")")
	g.tenant(q.Tenant)
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
