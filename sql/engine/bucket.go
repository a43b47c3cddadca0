package engine

import "time"

// Bucket is a time bucket: the width of a point of an insight series, the
// period of a retention query, and the granularity a materialized table
// keeps a Date column at. Its JSON is its name ("minute", "hour", "day",
// "week", "month").
type Bucket string

// The time buckets. Weeks start on Monday; all boundaries are in UTC.
const (
	Minute Bucket = "minute"
	Hour   Bucket = "hour"
	Day    Bucket = "day"
	Week   Bucket = "week"
	Month  Bucket = "month"
)

// Valid reports whether b is one of the buckets.
func (b Bucket) Valid() bool {
	switch b {
	case Minute, Hour, Day, Week, Month:
		return true
	}
	return false
}

// Floor returns the first instant (UTC) of the bucket t is in; an unknown
// bucket counts as Day.
func (b Bucket) Floor(t time.Time) time.Time {
	t = t.UTC()
	switch b {
	case Minute:
		return t.Truncate(time.Minute)
	case Hour:
		return t.Truncate(time.Hour)
	}
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch b {
	case Week:
		return day.AddDate(0, 0, -(int(day.Weekday())+6)%7)
	case Month:
		return day.AddDate(0, 0, 1-day.Day())
	}
	return day
}

// Next returns the first instant of the bucket after the one starting at
// start.
func (b Bucket) Next(start time.Time) time.Time { return b.add(start, 1) }

// Prev returns the first instant of the bucket before the one starting at
// start.
func (b Bucket) Prev(start time.Time) time.Time { return b.add(start, -1) }

func (b Bucket) add(start time.Time, n int) time.Time {
	switch b {
	case Minute:
		return start.Add(time.Duration(n) * time.Minute)
	case Hour:
		return start.Add(time.Duration(n) * time.Hour)
	case Week:
		return start.AddDate(0, 0, 7*n)
	case Month:
		return start.AddDate(0, n, 0)
	}
	return start.AddDate(0, 0, n)
}
