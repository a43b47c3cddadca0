package materialize

import (
	"time"

	"github.com/endpointkit/endpointkit/placeholder"
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
// column does: text YYYY-MM-DD HH:MM:SS on SQLite and MySQL, a timestamp on
// PostgreSQL, a DateTime on ClickHouse.
func (b Bucket) expr(d placeholder.Dialect, col string) string {
	switch d {
	case placeholder.PostgreSQL:
		return "date_trunc('" + string(b) + "', " + col + ")"
	case placeholder.MySQL:
		switch b {
		case Minute:
			return "DATE_FORMAT(" + col + ", '%Y-%m-%d %H:%i:00')"
		case Hour:
			return "DATE_FORMAT(" + col + ", '%Y-%m-%d %H:00:00')"
		case Week:
			return "DATE_FORMAT(DATE_SUB(" + col + ", INTERVAL WEEKDAY(" + col + ") DAY), '%Y-%m-%d 00:00:00')"
		case Month:
			return "DATE_FORMAT(" + col + ", '%Y-%m-01 00:00:00')"
		}
		return "DATE_FORMAT(" + col + ", '%Y-%m-%d 00:00:00')"
	case placeholder.ClickHouse:
		switch b {
		case Minute:
			return "toStartOfMinute(" + col + ")"
		case Hour:
			return "toStartOfHour(" + col + ")"
		case Week:
			return "toDateTime(toMonday(" + col + "), 'UTC')"
		case Month:
			return "toDateTime(toStartOfMonth(" + col + "), 'UTC')"
		}
		return "toStartOfDay(" + col + ")"
	}
	return sqliteGuard(col, b.sqlite(col))
}

// sqliteGuard makes a SQLite bucket fail the refresh on a value that is not
// UTC text YYYY-MM-DD HH:MM:SS. Inline, SQLite compares such text with the
// bound date as text, which for other spellings ('2025-05-01T10:00:00Z',
// a bare date, a number) is not comparing instants, and the buckets would
// answer differently. The error names the value; json_extract is the one
// core function whose error message carries text of the query's choice.
func sqliteGuard(col, bucket string) string {
	msg := string(placeholder.SQLite.AppendString(nil, "materialize: "+col+" is not UTC text YYYY-MM-DD HH:MM:SS: "))
	return "CASE WHEN " + col + " IS NULL OR " + col + " = strftime('%Y-%m-%d %H:%M:%S', " + col + ") THEN " +
		bucket + " ELSE json_extract('{}', " + msg + " || " + col + ") END"
}

func (b Bucket) sqlite(col string) string {
	switch b {
	case Minute:
		return "strftime('%Y-%m-%d %H:%M:00', " + col + ")"
	case Hour:
		return "strftime('%Y-%m-%d %H:00:00', " + col + ")"
	case Week:
		// weekday 0 moves to the coming Sunday (or stays on one); six days
		// back is that week's Monday.
		return "strftime('%Y-%m-%d 00:00:00', " + col + ", 'weekday 0', '-6 days')"
	case Month:
		return "strftime('%Y-%m-01 00:00:00', " + col + ")"
	}
	return "strftime('%Y-%m-%d 00:00:00', " + col + ")"
}
