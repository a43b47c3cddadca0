package variable

import (
	"strconv"
	"time"
)

const dateFormats = "want YYYY-MM-DD, an RFC 3339 date-time, or a relative date such as -7d, -2w, -3m, -1y or -12h"

func toDate(val any, now time.Time) (any, string) {
	out, reason := dateValue(val, now)
	if reason != "" {
		return nil, reason
	}
	// Every engine reads years 0001 to 9999, and the text form of a
	// Timestamp has room for four digits.
	if y := out.(Timestamp).Time.Year(); y < 1 || y > 9999 {
		return nil, "year outside 0001 to 9999 (in UTC)"
	}
	return out, ""
}

func dateValue(val any, now time.Time) (any, string) {
	switch x := val.(type) {
	case string:
		return parseDate(x, now)
	case time.Time:
		return Timestamp{Time: x.Round(0).UTC()}, ""
	case Timestamp:
		return Timestamp{Time: x.Time.Round(0).UTC(), DateOnly: x.DateOnly}, ""
	case []string, []any:
		return nil, "an array is not a single value"
	}
	return nil, dateFormats
}

// maxRelative bounds N in "-Nd" so that the arithmetic cannot overflow; every
// result it allows before year 1 is rejected anyway.
const maxRelative = 99_999_999

func parseDate(s string, now time.Time) (any, string) {
	if n := len(s); n >= 3 && s[0] == '-' {
		unit := s[n-1]
		digits := s[1 : n-1]
		if (unit == 'd' || unit == 'w' || unit == 'm' || unit == 'y' || unit == 'h') && allDigits(digits) {
			return relativeDate(digits, unit, now)
		}
	}
	if len(s) == len(time.DateOnly) {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			if looksLikeDate(s) {
				return nil, "not a real calendar date"
			}
			return nil, dateFormats
		}
		return Timestamp{Time: t, DateOnly: true}, ""
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, dateFormats
	}
	return Timestamp{Time: t.UTC()}, ""
}

func relativeDate(digits string, unit byte, now time.Time) (any, string) {
	n, err := strconv.Atoi(digits)
	if err != nil || n > maxRelative {
		return nil, "relative date too far in the past"
	}
	now = now.UTC()
	var t time.Time
	if unit == 'h' {
		t = now.Truncate(time.Hour).AddDate(0, 0, -(n / 24)).Add(-time.Duration(n%24) * time.Hour)
	} else {
		day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
		switch unit {
		case 'd':
			t = day.AddDate(0, 0, -n)
		case 'w':
			t = day.AddDate(0, 0, -7*n)
		case 'm':
			t = addMonthsClamped(day, -n)
		case 'y':
			t = addMonthsClamped(day, -12*n)
		}
	}
	return Timestamp{Time: t, DateOnly: unit != 'h'}, ""
}

// addMonthsClamped moves a midnight UTC time by whole months, landing on the
// last day of the target month when the day does not exist there; AddDate
// would roll March 31 minus one month over into March.
func addMonthsClamped(t time.Time, months int) time.Time {
	y, m, d := t.Date()
	total := y*12 + int(m) - 1 + months
	ny := total / 12
	if total%12 < 0 {
		ny--
	}
	nm := time.Month(total - ny*12 + 1)
	if last := daysIn(ny, nm); d > last {
		d = last
	}
	return time.Date(ny, nm, d, 0, 0, 0, 0, time.UTC)
}

func daysIn(year int, m time.Month) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// looksLikeDate reports the shape NNNN-NN-NN, to tell "2025-02-30" (a day
// that does not exist) from text in another format.
func looksLikeDate(s string) bool {
	return len(s) == 10 && allDigits(s[0:4]) && s[4] == '-' && allDigits(s[5:7]) && s[7] == '-' && allDigits(s[8:10])
}
