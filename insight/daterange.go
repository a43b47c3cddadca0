package insight

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// timeLayout is how the events table stores timestamps and how bucket
// starts travel between the SQL and the shaping: UTC text that sorts as
// time does.
const timeLayout = "2006-01-02 15:04:05"

// maxBuckets bounds the points of a series (about 7 months of hours).
const maxBuckets = 5000

// grain is how much time a bound names: a date names a whole day, so a
// date_to includes all of it.
type grain int

const (
	grainSecond grain = iota
	grainHour
	grainDay
)

func (g grain) after(t time.Time) time.Time {
	switch g {
	case grainHour:
		return t.Add(time.Hour)
	case grainDay:
		return t.AddDate(0, 0, 1)
	default:
		return t.Add(time.Second)
	}
}

// bound is a parsed date_from or date_to, resolved against a now.
type bound struct {
	abs      time.Time // when not relative
	relative bool
	n        int  // how many units back
	unit     byte // h, d, w, m, y
	start    bool // "-1mStart": snap to the start of the unit
	grain    grain
}

var absoluteLayouts = []struct {
	layout string
	grain  grain
}{
	{"2006-01-02", grainDay},
	{time.RFC3339Nano, grainSecond},
	{"2006-01-02T15:04:05.999999999", grainSecond},
	{"2006-01-02 15:04:05.999999999", grainSecond},
	{"2006-01-02T15:04", grainSecond},
	{"2006-01-02 15:04", grainSecond},
}

// parseBound reads an absolute or relative date; see DateRange.
func parseBound(s string) (bound, error) {
	if strings.HasPrefix(s, "-") {
		return parseRelative(s)
	}
	for _, l := range absoluteLayouts {
		if t, err := time.Parse(l.layout, s); err == nil {
			if t.Year() < 1 || t.Year() > 9999 {
				break
			}
			return bound{abs: t.UTC(), grain: l.grain}, nil
		}
	}
	return bound{}, fmt.Errorf("%q is not a date (YYYY-MM-DD), a date and time (RFC 3339), or a relative date such as -7d, -24h, -4w, -3m, -1y", s)
}

func parseRelative(s string) (bound, error) {
	b := bound{relative: true}
	body := s[1:]
	if rest, ok := strings.CutSuffix(body, "Start"); ok {
		b.start = true
		body = rest
	}
	if len(body) < 2 {
		return b, fmt.Errorf("%q is not a relative date such as -7d, -24h, -4w, -3m, -1y or -1mStart", s)
	}
	b.unit = body[len(body)-1]
	n, err := strconv.Atoi(body[:len(body)-1])
	if err != nil || n < 0 || n > 100000 || !strings.ContainsRune("hdwmy", rune(b.unit)) || body[0] == '+' {
		return b, fmt.Errorf("%q is not a relative date such as -7d, -24h, -4w, -3m, -1y or -1mStart", s)
	}
	if b.start && b.unit == 'h' {
		return b, fmt.Errorf("%q: Start applies to d, w, m and y only", s)
	}
	b.n = n
	b.grain = grainDay
	if b.unit == 'h' {
		b.grain = grainHour
	}
	return b, nil
}

// at resolves b against now: the first instant it names.
func (b bound) at(now time.Time) time.Time {
	if !b.relative {
		return b.abs
	}
	day := startOf(Day, now)
	switch b.unit {
	case 'h':
		return now.Truncate(time.Hour).Add(-time.Duration(b.n) * time.Hour)
	case 'd':
		return day.AddDate(0, 0, -b.n)
	case 'w':
		t := day.AddDate(0, 0, -7*b.n)
		if b.start {
			t = startOf(Week, t)
		}
		return t
	case 'm':
		t := day.AddDate(0, -b.n, 0)
		if b.start {
			t = startOf(Month, t)
		}
		return t
	default:
		t := day.AddDate(-b.n, 0, 0)
		if b.start {
			t = time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		}
		return t
	}
}

// startOf returns the start of the interval that holds t. Weeks start on
// Monday.
func startOf(iv Interval, t time.Time) time.Time {
	t = t.UTC()
	switch iv {
	case Hour:
		return t.Truncate(time.Hour)
	case Week:
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	case Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	default:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	}
}

// next returns the start of the interval after the one starting at t.
func next(iv Interval, t time.Time) time.Time {
	switch iv {
	case Hour:
		return t.Add(time.Hour)
	case Week:
		return t.AddDate(0, 0, 7)
	case Month:
		return t.AddDate(0, 1, 0)
	default:
		return t.AddDate(0, 0, 1)
	}
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
		sp.end = next(q.Interval, startOf(q.Interval, now))
	} else {
		b, err := parseBound(q.DateRange.To)
		if err != nil {
			return sp, errorf("dateRange.date_to", "%v", err)
		}
		sp.end = b.grain.after(b.at(now).Truncate(time.Second))
	}
	switch {
	case q.DateRange.From != "":
		b, err := parseBound(q.DateRange.From)
		if err != nil {
			return sp, errorf("dateRange.date_from", "%v", err)
		}
		from := b.at(now)
		if t := from.Truncate(time.Second); !t.Equal(from) {
			from = t.Add(time.Second) // stored timestamps have whole seconds
		}
		sp.start = startOf(q.Interval, from)
	case q.Kind == Retention:
		sp.start = startOf(q.Interval, sp.end.Add(-time.Second))
		for range q.Retention.TotalIntervals - 1 {
			sp.start = prev(q.Interval, sp.start)
		}
	default:
		sp.start = startOf(q.Interval, startOf(Day, now).AddDate(0, 0, -7))
	}
	if !sp.start.Before(sp.end) {
		return sp, errorf("dateRange", "date_from (%s) is not before date_to (%s)",
			sp.start.Format(timeLayout), sp.end.Format(timeLayout))
	}
	for t := sp.start; t.Before(sp.end); t = next(q.Interval, t) {
		if len(sp.buckets) == maxBuckets {
			return sp, errorf("dateRange", "the range holds more than %d %ss; choose a shorter range or a longer interval", maxBuckets, q.Interval)
		}
		sp.buckets = append(sp.buckets, t)
	}
	return sp, nil
}

// prev returns the start of the interval before the one starting at t.
func prev(iv Interval, t time.Time) time.Time {
	switch iv {
	case Hour:
		return t.Add(-time.Hour)
	case Week:
		return t.AddDate(0, 0, -7)
	case Month:
		return t.AddDate(0, -1, 0)
	default:
		return t.AddDate(0, 0, -1)
	}
}
