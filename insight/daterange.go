package insight

import (
	"time"

	"github.com/endpointkit/endpointkit/variable"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// timeLayout is how the events table stores timestamps and how bucket
// starts travel between the SQL and the shaping: UTC text that sorts as
// time does.
const timeLayout = "2006-01-02 15:04:05"

// maxBuckets bounds the points of a series (about 7 months of hours).
const maxBuckets = 5000

// parseBound reads a date_from or date_to in the date grammar of package
// variable (variable.ParseDateExpr), the one Date variables read, so that a
// date means the same in a SQL endpoint and in an insight. Decode checks a
// saved bound with it, Apply a run-time one, resolveSpan resolves them.
func parseBound(s string) (variable.DateExpr, error) {
	return variable.ParseDateExpr(s)
}

// resolveBound reads and resolves the bound s against now. Its error names
// field.
func resolveBound(field, s string, now time.Time) (variable.DateExpr, time.Time, error) {
	b, err := parseBound(s)
	if err != nil {
		return b, time.Time{}, errorf(field, "%v", err)
	}
	ts, err := b.Resolve(now)
	if err != nil {
		return b, time.Time{}, errorf(field, "%v", err)
	}
	return b, ts.Time, nil
}

// span is a date range resolved against a now: events are those with
// start <= timestamp < end, and buckets are the starts of the intervals
// from the one holding start up to the one holding end's last second.
type span struct {
	start, end time.Time
	buckets    []time.Time
}

// resolveSpan resolves the date range of q. An empty date_to is now, and
// its interval is included whole. An empty date_from is 7 days back for
// trends, and TotalIntervals periods back (counting the last) for retention.
func resolveSpan(q *Query, now time.Time) (span, error) {
	now = now.UTC()
	var sp span
	if q.DateRange.To == "" {
		sp.end = q.Interval.Next(q.Interval.Floor(now))
	} else {
		b, to, err := resolveBound("dateRange.date_to", q.DateRange.To, now)
		if err != nil {
			return sp, err
		}
		// A date_to includes what it names: a whole day for a date, an hour
		// for -Nh, and the second it names for a date-time (stored
		// timestamps have whole seconds).
		sp.end = to.Truncate(time.Second).Add(max(b.Precision(), time.Second))
	}
	switch {
	case q.DateRange.From != "":
		_, from, err := resolveBound("dateRange.date_from", q.DateRange.From, now)
		if err != nil {
			return sp, err
		}
		if t := from.Truncate(time.Second); !t.Equal(from) {
			from = t.Add(time.Second) // stored timestamps have whole seconds
		}
		sp.start = q.Interval.Floor(from)
	case q.Kind == Retention:
		sp.start = q.Interval.Floor(sp.end.Add(-time.Second))
		for range q.Retention.TotalIntervals - 1 {
			sp.start = q.Interval.Prev(sp.start)
		}
	default:
		sp.start = q.Interval.Floor(engine.Day.Floor(now).AddDate(0, 0, -7))
	}
	if !sp.start.Before(sp.end) {
		// The bounds as the client sent them, then what they resolved to:
		// a date_to of 2025-05-01 ends at 2025-05-02 00:00:00.
		return sp, errorf("dateRange", "%s is not before %s: the range would start at %s and end at %s (a date_to includes what it names)",
			asSent("date_from", q.DateRange.From), asSent("date_to", q.DateRange.To),
			sp.start.Format(timeLayout), sp.end.Format(timeLayout))
	}
	for t := sp.start; t.Before(sp.end); t = q.Interval.Next(t) {
		if len(sp.buckets) == maxBuckets {
			return sp, errorf("dateRange", "the range holds more than %d %ss; choose a shorter range or a longer interval", maxBuckets, q.Interval)
		}
		sp.buckets = append(sp.buckets, t)
	}
	return sp, nil
}

// asSent names a bound of the date range with its value as the query or
// the run gave it.
func asSent(name, value string) string {
	if value == "" {
		return name + " (not set)"
	}
	return name + " '" + value + "'"
}
