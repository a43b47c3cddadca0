package variable

import (
	"encoding/json"
	"testing"
	"time"
)

func day(y int, m time.Month, d int) Timestamp {
	return Timestamp{Time: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), DateOnly: true}
}

func at(y int, m time.Month, d, h, min, s, ns int) Timestamp {
	return Timestamp{Time: time.Date(y, m, d, h, min, s, ns, time.UTC)}
}

func TestCoerceDate(t *testing.T) {
	// now is 2025-03-31T15:47:12.5Z (see runCoerce): the last day of a month
	// with 31 days, to show how month steps clamp.
	v := Variable{CodeName: "date_from", Type: Date}
	berlin := time.FixedZone("CET", 3600)
	runCoerce(t, v, append([]coerceCase{
		{raw: "2025-01-31", want: day(2025, 1, 31)},
		{raw: "2024-02-29", want: day(2024, 2, 29)},
		{raw: "0001-01-01", want: day(1, 1, 1)},
		{raw: "9999-12-31", want: day(9999, 12, 31)},
		{raw: json.RawMessage(`"2025-01-31"`), want: day(2025, 1, 31)},
		{raw: "2025-01-02T03:04:05Z", want: at(2025, 1, 2, 3, 4, 5, 0)},
		{raw: "2025-01-02T03:04:05.25+02:00", want: at(2025, 1, 2, 1, 4, 5, 250_000_000)},
		{raw: "2025-01-01T00:30:00+01:00", want: at(2024, 12, 31, 23, 30, 0, 0)},
		{raw: "2025-01-02T03:04:05-05:30", want: at(2025, 1, 2, 8, 34, 5, 0)},
		{raw: time.Date(2025, 1, 2, 3, 4, 5, 6, berlin), want: at(2025, 1, 2, 2, 4, 5, 6)},
		{raw: day(2025, 1, 2), want: day(2025, 1, 2)},

		// Relative dates count back from now's UTC day.
		{raw: "-0d", want: day(2025, 3, 31)},
		{raw: "-1d", want: day(2025, 3, 30)},
		{raw: "-7d", want: day(2025, 3, 24)},
		{raw: "-31d", want: day(2025, 2, 28)},
		{raw: "-365d", want: day(2024, 3, 31)},
		{raw: "-2w", want: day(2025, 3, 17)},
		{raw: "-1m", want: day(2025, 2, 28)}, // March 31 has no February twin: clamp
		{raw: "-3m", want: day(2024, 12, 31)},
		{raw: "-13m", want: day(2024, 2, 29)}, // leap year
		{raw: "-1y", want: day(2024, 3, 31)},
		{raw: "-2024y", want: day(1, 3, 31)},
		{raw: "-0h", want: at(2025, 3, 31, 15, 0, 0, 0)},
		{raw: "-12h", want: at(2025, 3, 31, 3, 0, 0, 0)},
		{raw: "-16h", want: at(2025, 3, 30, 23, 0, 0, 0)},
		{raw: "-49h", want: at(2025, 3, 29, 14, 0, 0, 0)},
		{raw: "-007d", want: day(2025, 3, 24)},
		{raw: json.RawMessage(`"-7d"`), want: day(2025, 3, 24)},

		{raw: "2025-02-30", reason: "not a real calendar date"},
		{raw: "2025-13-01", reason: "not a real calendar date"},
		{raw: "2025-00-10", reason: "not a real calendar date"},
		{raw: "2023-02-29", reason: "not a real calendar date"},
		{raw: "0000-01-01", reason: "year outside 0001 to 9999 (in UTC)"},
		{raw: "0001-01-01T00:00:00+01:00", reason: "year outside 0001 to 9999 (in UTC)"},
		{raw: "9999-12-31T23:00:00-01:00", reason: "year outside 0001 to 9999 (in UTC)"},
		{raw: "-2025y", reason: "year outside 0001 to 9999 (in UTC)"},
		{raw: "-99999999d", reason: "year outside 0001 to 9999 (in UTC)"},
		{raw: "-100000000d", reason: "relative date too far in the past"},
		{raw: "-99999999999999999999h", reason: "relative date too far in the past"},
		{raw: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), reason: "year outside 0001 to 9999 (in UTC)"},
		{raw: "2025-1-02", reason: dateFormats},
		{raw: "2025/01/02", reason: dateFormats},
		{raw: "02-01-2025", reason: dateFormats},
		{raw: "20250102", reason: dateFormats},
		{raw: "2025-01-02T03:04:05", reason: dateFormats}, // no offset: ambiguous
		{raw: "2025-01-02 03:04:05Z", reason: dateFormats},
		{raw: "2025-01-02T24:00:00Z", reason: dateFormats},
		{raw: "", reason: dateFormats},
		{raw: "today", reason: dateFormats},
		{raw: "7d", reason: dateFormats},
		{raw: "+7d", reason: dateFormats},
		{raw: "-d", reason: dateFormats},
		{raw: "-7", reason: dateFormats},
		{raw: "-7D", reason: dateFormats},
		{raw: "-7s", reason: dateFormats},
		{raw: "-1.5d", reason: dateFormats},
		{raw: "- 7d", reason: dateFormats},
		{raw: 1735776000, reason: dateFormats}, // no epoch seconds
		{raw: true, reason: dateFormats},
		{raw: []any{"2025-01-02"}, reason: "an array is not a single value"},
	}, rejectedByAll...))
}

// The clock is read in UTC whatever its zone, and only for relative dates.
func TestCoerceDateClock(t *testing.T) {
	v := Variable{CodeName: "d", Type: Date}
	// 01:30 on April 1st in UTC+3 is still March 31st in UTC.
	now := time.Date(2025, 4, 1, 1, 30, 0, 0, time.FixedZone("UTC+3", 3*3600))
	for _, tc := range []struct {
		raw  string
		want Timestamp
	}{
		{"-0d", day(2025, 3, 31)},
		{"-1d", day(2025, 3, 30)},
		{"-1h", at(2025, 3, 31, 21, 0, 0, 0)},
	} {
		got, err := v.Coerce(tc.raw, now)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Coerce(%q) at %v = %v, want %v", tc.raw, now, got, tc.want)
		}
		if loc := got.(Timestamp).Time.Location(); loc != time.UTC {
			t.Errorf("Coerce(%q) location %v, want UTC", tc.raw, loc)
		}
	}
	// An absolute date ignores the clock, even the zero one.
	got, err := v.Coerce("2025-01-02", time.Time{})
	if err != nil || got != day(2025, 1, 2) {
		t.Errorf("Coerce(2025-01-02) with a zero clock = %v, %v", got, err)
	}
}

func TestAddMonthsClamped(t *testing.T) {
	for _, tc := range []struct {
		from   Timestamp
		months int
		want   Timestamp
	}{
		{day(2025, 3, 31), -1, day(2025, 2, 28)},
		{day(2024, 3, 31), -1, day(2024, 2, 29)},
		{day(2025, 1, 31), -2, day(2024, 11, 30)},
		{day(2025, 1, 15), -1, day(2024, 12, 15)},
		{day(2025, 1, 15), -12, day(2024, 1, 15)},
		{day(2025, 1, 15), -25, day(2022, 12, 15)},
		{day(2024, 2, 29), -12, day(2023, 2, 28)},
		{day(2025, 5, 31), 1, day(2025, 6, 30)},
		{day(1, 1, 1), -1, day(0, 12, 1)},
	} {
		got := addMonthsClamped(tc.from.Time, tc.months)
		if !got.Equal(tc.want.Time) {
			t.Errorf("addMonthsClamped(%v, %d) = %v, want %v", tc.from, tc.months, got, tc.want)
		}
	}
}
