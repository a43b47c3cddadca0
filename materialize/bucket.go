package materialize

import (
	"time"

	"github.com/endpointkit/endpointkit/endpoint/engine"
)

// Bucket is the time granularity a stored table keeps a Date range
// variable's column at. Coarser buckets make smaller tables; a run whose
// date is not on a boundary of the bucket runs inline.
type Bucket string

// The buckets. Weeks start on Monday; all boundaries are in UTC.
const (
	Minute Bucket = "minute"
	Hour   Bucket = "hour"
	Day    Bucket = "day"
	Week   Bucket = "week"
	Month  Bucket = "month"
)

// DefaultBucket is the bucket of a Date range variable without an override.
const DefaultBucket = Day

func (b Bucket) valid() bool {
	switch b {
	case Minute, Hour, Day, Week, Month:
		return true
	}
	return false
}

// boundary reports whether t is the first instant of a bucket.
func (b Bucket) boundary(t time.Time) bool {
	t = t.UTC()
	if t.Nanosecond() != 0 || t.Second() != 0 {
		return false
	}
	if b == Minute {
		return true
	}
	if t.Minute() != 0 {
		return false
	}
	if b == Hour {
		return true
	}
	if t.Hour() != 0 {
		return false
	}
	switch b {
	case Week:
		return t.Weekday() == time.Monday
	case Month:
		return t.Day() == 1
	}
	return true
}

// expr returns the SQL that truncates col (printed) to the start of its
// bucket, as a value that compares with a bound date-time the way the
// column does. The timestamp is read strictly (see engine.StrictTimestamp):
// a value an engine would compare as text but bucket otherwise fails the
// refresh instead of answering differently from the inline query.
func (b Bucket) expr(e engine.Engine, col string) string {
	return e.Truncate(engine.Unit(b), e.StrictTimestamp(col))
}

// floor returns the first instant of the bucket t (UTC) is in.
func (b Bucket) floor(t time.Time) time.Time {
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

// next returns the first instant of the bucket after the one starting at
// start.
func (b Bucket) next(start time.Time) time.Time {
	switch b {
	case Minute:
		return start.Add(time.Minute)
	case Hour:
		return start.Add(time.Hour)
	case Week:
		return start.AddDate(0, 0, 7)
	case Month:
		return start.AddDate(0, 1, 0)
	}
	return start.AddDate(0, 0, 1)
}
