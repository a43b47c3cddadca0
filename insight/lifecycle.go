package insight

import (
	"fmt"
	"slices"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// LifecycleSeries is one status of a lifecycle result, as PostHog's
// LifecycleQuery runner returns it.
type LifecycleSeries struct {
	// Action describes the query's series, as PostHog's legacy clients
	// read it.
	Action LifecycleAction `json:"action"`
	// Data holds the users of the status in each interval; dormant users
	// are negative.
	Data []float64 `json:"data"`
	// Count is the sum of Data.
	Count float64 `json:"count"`
	// Labels are the interval starts as PostHog's charts label them.
	Labels []string `json:"labels"`
	// Days are the interval starts, "YYYY-MM-DD" ("YYYY-MM-DD HH:MM:SS"
	// for hours).
	Days []string `json:"days"`
	// Label is "<event> - <status>" ("All events - new" for a series of
	// every event).
	Label string `json:"label"`
	// Status is the lifecycle status.
	Status Status `json:"status"`
}

// LifecycleAction is the "action" object of a lifecycle series: the
// query's series as an events entity. ID is its event, nil (JSON null)
// for all events.
type LifecycleAction struct {
	// ID is the event; nil for every event.
	ID *string `json:"id"`
	// Name is the event, or "All events".
	Name string `json:"name"`
	// Type is "events".
	Type string `json:"type"`
	// Order is the series' index, 0.
	Order int `json:"order"`
	// Math is "total", as PostHog writes it.
	Math string `json:"math"`
}

// MaxLifecycleIntervals is the most intervals a lifecycle's date range may
// hold (125 days of hours, 8 years of days): its statement binds one start
// per interval, and stays well within the 256 KiB of text a ClickHouse
// server parses by default (max_query_size).
const MaxLifecycleIntervals = 3000

// lifecycleWindow returns the events a lifecycle of sp reads: from the
// start of the interval before the first one, so that the first interval's
// users can be returning and its dormant ones counted, to the end of the
// last interval, which counts whole (PostHog's lifecycle does, whatever
// date_to's instant: an interval's status needs the whole interval).
func lifecycleWindow(iv engine.Bucket, sp span) (start, end time.Time) {
	return iv.Prev(sp.start), iv.Next(sp.buckets[len(sp.buckets)-1])
}

// writeLifecycle writes the lifecycle of q's series over sp: one row per
// status and interval with users, (status, period, actors), where status
// is the index of the status in statuses and period the 1-based index of
// the interval in sp's buckets (0 is the interval before them).
//
// The intervals are numbered by comparing each interval start with the
// starts of the range, bound as text, so that "the interval before" is a
// number minus one on every engine, with no date arithmetic.
// Each (actor, interval) with an event gives a row "here", and a row
// "before" for the next interval; grouped per actor and interval they say
// who was active now, before, or both. First seen is read from every event
// of the actor, whatever the series' event and filters, as PostHog reads
// its person's created_at.
func writeLifecycle(g *gen, q *Query, sp span) {
	s := q.Series[0]
	start, end := lifecycleWindow(q.Interval, sp)
	g.w("WITH #", "e")
	g.materialized()
	g.w("(\n  SELECT DISTINCT # AS #, ", colActor, "actor")
	g.bucket(q.Interval, colTime)
	g.w(" AS #\n  FROM ", "period")
	g.events(q)
	g.WriteString("\n  WHERE 1 = 1")
	if s.Event != "" {
		g.w(" AND # = ", colEvent)
		g.Bind(s.Event)
	}
	g.w(" AND # >= ", colTime)
	g.Bind(start.Format(timeLayout))
	g.w(" AND # < ", colTime)
	g.Bind(end.Format(timeLayout))
	g.filters(q.Properties)
	g.w("\n),\n#", "a")
	g.materialized()
	g.w("(\n  SELECT #, ", "actor")
	writeIntervalNumber(g, append([]time.Time{start}, sp.buckets...), 0, len(sp.buckets)+1)
	g.w(" AS #, # FROM #\n),\n#", "idx", "period", "e", "seen")
	g.materialized()
	g.w("(\n  SELECT #, ", "actor")
	g.bucket(q.Interval, "first_ts")
	g.w(" AS #\n  FROM (SELECT # AS #, min(#) AS # FROM ", "first_period", colActor, "actor", colTime, "first_ts")
	g.events(q)
	g.w(" WHERE 1 = 1 AND # IN (SELECT # FROM #) GROUP BY #) AS #\n),\n#", colActor, "actor", "e", colActor, "f", "m")
	g.materialized()
	g.w("(\n  SELECT #.# AS #, #.# AS #, 1 AS #, 0 AS #, CASE WHEN #.# = #.# THEN 1 ELSE 0 END AS #\n  FROM # JOIN # AS # ON #.# = #.#",
		"a", "actor", "actor", "a", "idx", "idx", "here", "before", "s", "first_period", "a", "period", "fresh",
		"a", "seen", "s", "s", "actor", "a", "actor")
	g.w("\n  UNION ALL\n  SELECT #, # + 1, 0, 1, 0 FROM #\n)\n", "actor", "idx", "a")
	// Per actor and interval: not here, so active before only (dormant);
	// here and first seen now (new); here and before (returning); here
	// only (resurrecting).
	g.w("SELECT #, # AS #, count(*) AS #\nFROM (\n  SELECT #, #, ", "status", "idx", "period", "actors", "actor", "idx")
	g.w(fmt.Sprintf("CASE WHEN max(#) = 0 THEN %d WHEN max(#) = 1 THEN %d WHEN max(#) = 1 THEN %d ELSE %d END AS ",
		statusIndex(Dormant), statusIndex(New), statusIndex(Returning), statusIndex(Resurrecting)), "here", "fresh", "before")
	g.w("#\n  FROM # GROUP BY #, #\n) AS #\n", "status", "m", "actor", "idx", "g")
	g.w("WHERE # >= 1 AND # <= ", "idx", "idx")
	g.WriteString(fmt.Sprintf("%d", len(sp.buckets)))
	g.w("\nGROUP BY #, #", "status", "idx")
}

// writeIntervalNumber writes the number of the interval whose start is
// the column period, among starts[lo:hi] (sorted, as text in timeLayout,
// which sorts as time does): a search tree of CASE WHEN period < start,
// so that a row takes a handful of comparisons however many intervals the
// range holds. A calendar table (a UNION ALL of one SELECT per interval)
// would need as many terms as intervals, more than SQLite takes in one
// compound SELECT (500) and than ClickHouse plans (it gives up on query
// plans of a thousand unions).
func writeIntervalNumber(g *gen, starts []time.Time, lo, hi int) {
	if hi-lo == 1 {
		g.WriteString(fmt.Sprintf("%d", lo))
		return
	}
	mid := (lo + hi) / 2
	g.w("CASE WHEN # < ", "period")
	g.Bind(starts[mid].Format(timeLayout))
	g.WriteString(" THEN ")
	writeIntervalNumber(g, starts, lo, mid)
	g.WriteString(" ELSE ")
	writeIntervalNumber(g, starts, mid, hi)
	g.WriteString(" END")
}

// statusIndex is the index of st in statuses.
func statusIndex(st Status) int {
	for i, s := range statuses {
		if s == st {
			return i
		}
	}
	panic("insight: unknown status " + string(st))
}

// shapeLifecycle turns rows (status, period, actors) into the four series
// of a lifecycle result, in PostHog's order: new, returning, resurrecting,
// dormant, each with one point per interval (0 without a row).
func (c *Compiled) shapeLifecycle(rows [][]any) ([]LifecycleSeries, error) {
	n := len(c.sp.buckets)
	data := make([][]float64, len(statuses))
	for i := range data {
		data[i] = make([]float64, n)
	}
	for r, row := range rows {
		if len(row) != 3 {
			return nil, fmt.Errorf("insight: shape: row %d has %d columns, want 3", r, len(row))
		}
		st, err := toInt(row[0])
		if err != nil || st < 0 || st >= len(statuses) {
			return nil, fmt.Errorf("insight: shape: row %d: bad status %v", r, row[0])
		}
		p, err := toInt(row[1])
		if err != nil || p < 1 || p > n {
			return nil, fmt.Errorf("insight: shape: row %d: period %v is not an interval of the date range", r, row[1])
		}
		v, err := toFloat(row[2])
		if err != nil {
			return nil, fmt.Errorf("insight: shape: row %d: actors: %w", r, err)
		}
		if statuses[st] == Dormant {
			v = -v
		}
		data[st][p-1] = v
	}
	days, labels := c.dayLabels()
	ev := c.q.Series[0]
	action := LifecycleAction{Name: ev.label(), Type: "events", Math: string(Total)}
	if ev.Event != "" {
		event := ev.Event
		action.ID = &event
	}
	out := make([]LifecycleSeries, len(statuses))
	for i, st := range statuses {
		// Each series its own days, labels and action: a host may write
		// to one.
		a := action
		if a.ID != nil {
			id := *a.ID
			a.ID = &id
		}
		s := LifecycleSeries{Action: a, Data: data[i], Labels: slices.Clone(labels), Days: slices.Clone(days), Label: ev.label() + " - " + string(st), Status: st}
		for _, v := range data[i] {
			s.Count += v
		}
		out[i] = s
	}
	return out, nil
}
