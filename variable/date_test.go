package variable

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func day(y int, m time.Month, d int) Timestamp {
	return Timestamp{Time: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), DateOnly: true}
}

func at(y int, m time.Month, d, h, min, s, ns int) Timestamp {
	return Timestamp{Time: time.Date(y, m, d, h, min, s, ns, time.UTC), DateOnly: false}
}

// dateNow is the clock of the date tests: 15:47:12.5 on Monday 2025-03-31,
// the last day of a month with 31 days, to show how month steps clamp.
var dateNow = time.Date(2025, 3, 31, 15, 47, 12, 500_000_000, time.UTC)

// TestParseDate covers every form of the grammar, accepted and refused.
func TestParseDate(t *testing.T) {
	for _, tc := range []struct {
		in       string
		want     Timestamp
		problem  string // when set, ParseDate must fail with this Problem
		expected string // and this Expected
	}{
		// Calendar dates.
		{in: "2025-01-31", want: day(2025, 1, 31)},
		{in: "2024-02-29", want: day(2024, 2, 29)},
		{in: "0001-01-01", want: day(1, 1, 1)},
		{in: "9999-12-31", want: day(9999, 12, 31)},

		// Date-times without a zone are UTC, with T or a space, seconds optional.
		{in: "2025-01-02 03:04:05", want: at(2025, 1, 2, 3, 4, 5, 0)},
		{in: "2025-01-02T03:04:05", want: at(2025, 1, 2, 3, 4, 5, 0)},
		{in: "2025-01-02 03:04", want: at(2025, 1, 2, 3, 4, 0, 0)},
		{in: "2025-01-02T03:04", want: at(2025, 1, 2, 3, 4, 0, 0)},
		{in: "2025-01-02 00:00:00", want: at(2025, 1, 2, 0, 0, 0, 0)},
		{in: "2025-01-02 03:04:05.25", want: at(2025, 1, 2, 3, 4, 5, 250_000_000)},
		{in: "2025-01-02T03:04:05.123456789", want: at(2025, 1, 2, 3, 4, 5, 123_456_789)},
		{in: "2025-01-02 03:04:05.000001", want: at(2025, 1, 2, 3, 4, 5, 1_000)},

		// With a zone (RFC 3339), converted to UTC.
		{in: "2025-01-02T03:04:05Z", want: at(2025, 1, 2, 3, 4, 5, 0)},
		{in: "2025-01-02T03:04:05.25+02:00", want: at(2025, 1, 2, 1, 4, 5, 250_000_000)},
		{in: "2025-01-01T00:30:00+01:00", want: at(2024, 12, 31, 23, 30, 0, 0)},
		{in: "2025-01-02T03:04:05-05:30", want: at(2025, 1, 2, 8, 34, 5, 0)},
		{in: "2025-01-02T03:04:05-00:00", want: at(2025, 1, 2, 3, 4, 5, 0)},
		{in: "2025-01-02 03:04:05Z", want: at(2025, 1, 2, 3, 4, 5, 0)},
		{in: "2025-01-02T03:04+01:00", want: at(2025, 1, 2, 2, 4, 0, 0)},
		{in: "0000-12-31T23:30:00-01:00", want: at(1, 1, 1, 0, 30, 0, 0)}, // year 1 in UTC
		{in: "9999-12-31T23:59:59.999999999Z", want: at(9999, 12, 31, 23, 59, 59, 999_999_999)},

		// Relative dates count back from now's UTC day.
		{in: "-0d", want: day(2025, 3, 31)},
		{in: "-1d", want: day(2025, 3, 30)},
		{in: "-7d", want: day(2025, 3, 24)},
		{in: "-007d", want: day(2025, 3, 24)},
		{in: "-00000000000000000001d", want: day(2025, 3, 30)}, // leading zeros do not count
		{in: "-31d", want: day(2025, 2, 28)},
		{in: "-365d", want: day(2024, 3, 31)},
		{in: "-2w", want: day(2025, 3, 17)},
		{in: "-1m", want: day(2025, 2, 28)}, // March 31 has no February twin: clamp
		{in: "-3m", want: day(2024, 12, 31)},
		{in: "-13m", want: day(2024, 2, 29)}, // leap year
		{in: "-1y", want: day(2024, 3, 31)},
		{in: "-2024y", want: day(1, 3, 31)},
		{in: "-0h", want: at(2025, 3, 31, 15, 0, 0, 0)},
		{in: "-12h", want: at(2025, 3, 31, 3, 0, 0, 0)},
		{in: "-16h", want: at(2025, 3, 30, 23, 0, 0, 0)},
		{in: "-24h", want: at(2025, 3, 30, 15, 0, 0, 0)},
		{in: "-49h", want: at(2025, 3, 29, 14, 0, 0, 0)},

		// Start and End: the first or last day of the day, week (Monday to
		// Sunday; now is a Monday), month or year.
		{in: "dStart", want: day(2025, 3, 31)},
		{in: "dEnd", want: day(2025, 3, 31)},
		{in: "-7dStart", want: day(2025, 3, 24)},
		{in: "-7dEnd", want: day(2025, 3, 24)},
		{in: "wStart", want: day(2025, 3, 31)},
		{in: "wEnd", want: day(2025, 4, 6)},
		{in: "-1wStart", want: day(2025, 3, 24)},
		{in: "-1wEnd", want: day(2025, 3, 30)},
		{in: "-0wStart", want: day(2025, 3, 31)},
		{in: "mStart", want: day(2025, 3, 1)},
		{in: "mEnd", want: day(2025, 3, 31)},
		{in: "-1mStart", want: day(2025, 2, 1)},
		{in: "-1mEnd", want: day(2025, 2, 28)},
		{in: "-13mEnd", want: day(2024, 2, 29)},
		{in: "yStart", want: day(2025, 1, 1)},
		{in: "yEnd", want: day(2025, 12, 31)},
		{in: "-1yStart", want: day(2024, 1, 1)},
		{in: "-1yEnd", want: day(2024, 12, 31)},

		// Not a date at all.
		{in: "", problem: "empty", expected: DateForms},
		{in: "today", problem: "not a date", expected: DateForms},
		{in: "yesterday", problem: "not a date", expected: DateForms},
		{in: "d", problem: "not a date", expected: DateForms},
		{in: "Start", problem: "not a date", expected: DateForms},
		{in: "mstart", problem: "not a date", expected: DateForms},
		{in: "7d", problem: "not a date", expected: DateForms},
		{in: "+7d", problem: "not a date", expected: DateForms},
		{in: "20250102", problem: "not a date", expected: DateForms},
		{in: "02-01-2025", problem: "not a date", expected: DateForms},
		{in: "2025/01/02", problem: "not a date", expected: DateForms},
		{in: " 2025-01-02", problem: "not a date", expected: DateForms},
		{in: "１２３４-01-02", problem: "not a date", expected: DateForms}, // full-width digits

		// An absolute date of the wrong shape.
		{in: "2025-1-02", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-2", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02 ", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02T", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02 03", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02T3:04:05", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02t03:04:05Z", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02T03:04:05z", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02T03:04:05.", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02T03:04:05.1234567890", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02T03:04:05,5", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02T03:04.5", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02T03:04:05+0100", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02T03:04:05+01", problem: "not a date", expected: absoluteForms},
		{in: "2025-01-02T03:04:05 +01:00", problem: "not a date", expected: absoluteForms},
		{in: "+2025-01-02", problem: "not a date", expected: DateForms},
		{in: "12025-01-02", problem: "not a date", expected: DateForms},

		// The right shape, but no such day or time.
		{in: "2025-02-30", problem: "not a real calendar date", expected: "a day from 01 to 28 (2025-02 has 28 days)"},
		{in: "2023-02-29", problem: "not a real calendar date", expected: "a day from 01 to 28 (2023-02 has 28 days)"},
		{in: "2025-04-31", problem: "not a real calendar date", expected: "a day from 01 to 30 (2025-04 has 30 days)"},
		{in: "2025-01-00", problem: "not a real calendar date", expected: "a day from 01 to 31 (2025-01 has 31 days)"},
		{in: "2025-13-01", problem: "not a real calendar date", expected: "a month from 01 to 12"},
		{in: "2025-00-10", problem: "not a real calendar date", expected: "a month from 01 to 12"},
		{in: "2025-02-30 10:00:00", problem: "not a real calendar date", expected: "a day from 01 to 28 (2025-02 has 28 days)"},
		{in: "2025-01-02T24:00:00Z", problem: "not a real time of day", expected: "an hour from 00 to 23"},
		{in: "2025-01-02 23:60", problem: "not a real time of day", expected: "minutes from 00 to 59"},
		{in: "2025-01-02T23:59:60Z", problem: "not a real time of day", expected: "seconds from 00 to 59"},
		{in: "2025-01-02T03:04:05+24:00", problem: "not a real zone offset", expected: "a zone offset from -23:59 to +23:59"},
		{in: "2025-01-02T03:04:05-01:60", problem: "not a real zone offset", expected: "a zone offset from -23:59 to +23:59"},

		// Outside the years 0001 to 9999, in UTC.
		{in: "0000-01-01", problem: "outside the years 0001 to 9999 (in UTC)", expected: inRange},
		{in: "0001-01-01T00:00:00+01:00", problem: "outside the years 0001 to 9999 (in UTC)", expected: inRange},
		{in: "9999-12-31T23:00:00-01:00", problem: "outside the years 0001 to 9999 (in UTC)", expected: inRange},
		{in: "-2025y", problem: "outside the years 0001 to 9999 (in UTC)", expected: inRange},
		{in: "-99999999d", problem: "outside the years 0001 to 9999 (in UTC)", expected: inRange},
		{in: "-99999999h", problem: "outside the years 0001 to 9999 (in UTC)", expected: inRange},
		{in: "-2025yStart", problem: "outside the years 0001 to 9999 (in UTC)", expected: inRange},
		{in: "-100000000d", problem: "too far in the past", expected: "at most 99999999 units back"},
		{in: "-99999999999999999999h", problem: "too far in the past", expected: "at most 99999999 units back"},

		// Not a relative date.
		{in: "-", problem: "not a relative date", expected: relativeForms},
		{in: "-d", problem: "not a relative date", expected: relativeForms},
		{in: "-dStart", problem: "not a relative date", expected: relativeForms},
		{in: "-7", problem: "not a relative date", expected: relativeForms},
		{in: "-7D", problem: "not a relative date", expected: relativeForms},
		{in: "-7M", problem: "not a relative date", expected: relativeForms},
		{in: "-7s", problem: "not a relative date", expected: relativeForms},
		{in: "-7q", problem: "not a relative date", expected: relativeForms},
		{in: "-1.5d", problem: "not a relative date", expected: relativeForms},
		{in: "- 7d", problem: "not a relative date", expected: relativeForms},
		{in: "--7d", problem: "not a relative date", expected: relativeForms},
		{in: "-+7d", problem: "not a relative date", expected: relativeForms},
		{in: "-7d ", problem: "not a relative date", expected: relativeForms},
		{in: "-7dd", problem: "not a relative date", expected: relativeForms},
		{in: "-7dstart", problem: "not a relative date", expected: relativeForms},
		{in: "-7dStar", problem: "not a relative date", expected: relativeForms},
		{in: "-7dStartEnd", problem: "not a relative date", expected: relativeForms},
		{in: "-2025-01-02", problem: "not a relative date", expected: relativeForms},
		{in: "-1hStart", problem: "not a relative date", expected: "Start or End after d, w, m or y only (-Nh already starts at an hour)"},
		{in: "hEnd", problem: "not a relative date", expected: "Start or End after d, w, m or y only (-Nh already starts at an hour)"},
	} {
		got, err := ParseDate(tc.in, dateNow)
		if tc.problem == "" {
			if err != nil {
				t.Errorf("ParseDate(%q): %v", tc.in, err)
			} else if got != tc.want || got.Time.Location() != time.UTC {
				t.Errorf("ParseDate(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
			continue
		}
		var de *DateError
		if !assert.ErrorAs(t, err, &de, "ParseDate(%q) = %v", tc.in, got) {
			continue
		}
		if de.Problem != tc.problem || de.Expected != tc.expected || de.Input != tc.in || de.Truncated {
			t.Errorf("ParseDate(%q) error = %#v, want Problem %q, Expected %q", tc.in, de, tc.problem, tc.expected)
		}
		if got != (Timestamp{}) {
			t.Errorf("ParseDate(%q) returned %v beside its error", tc.in, got)
		}
	}
}

// TestMonthEndClamp: a month or year step that lands on a day its month
// lacks goes to that month's last day, whatever day the clock reads.
func TestMonthEndClamp(t *testing.T) {
	for _, tc := range []struct {
		now  Timestamp
		in   string
		want Timestamp
	}{
		{day(2025, 3, 31), "-1m", day(2025, 2, 28)},
		{day(2024, 3, 31), "-1m", day(2024, 2, 29)},
		{day(2025, 3, 30), "-1m", day(2025, 2, 28)},
		{day(2025, 3, 28), "-1m", day(2025, 2, 28)},
		{day(2025, 3, 27), "-1m", day(2025, 2, 27)},
		{day(2025, 5, 31), "-1m", day(2025, 4, 30)},
		{day(2025, 1, 31), "-2m", day(2024, 11, 30)},
		{day(2025, 1, 15), "-25m", day(2022, 12, 15)},
		{day(2024, 2, 29), "-1y", day(2023, 2, 28)},
		{day(2024, 2, 29), "-4y", day(2020, 2, 29)},
		{day(2024, 2, 29), "-12m", day(2023, 2, 28)},
		{day(2025, 3, 31), "-1mEnd", day(2025, 2, 28)},
		{day(2024, 2, 29), "-1yEnd", day(2023, 12, 31)},
	} {
		got, err := ParseDate(tc.in, tc.now.Time.Add(13*time.Hour))
		if err != nil || got != tc.want {
			t.Errorf("ParseDate(%q) on %v = %v, %v; want %v", tc.in, tc.now, got, err, tc.want)
		}
	}
}

// The clock is read in UTC whatever its zone, and only for relative dates.
func TestParseDateClock(t *testing.T) {
	// 01:30 on Tuesday April 1st in UTC+3 is still Monday March 31st in UTC.
	now := time.Date(2025, 4, 1, 1, 30, 0, 0, time.FixedZone("UTC+3", 3*3600))
	for _, tc := range []struct {
		in   string
		want Timestamp
	}{
		{"-0d", day(2025, 3, 31)},
		{"-1d", day(2025, 3, 30)},
		{"-1h", at(2025, 3, 31, 21, 0, 0, 0)},
		{"mStart", day(2025, 3, 1)},
		{"wStart", day(2025, 3, 31)},
	} {
		got, err := ParseDate(tc.in, now)
		if err != nil || got != tc.want || got.Time.Location() != time.UTC {
			t.Errorf("ParseDate(%q) at %v = %v, %v; want %v in UTC", tc.in, now, got, err, tc.want)
		}
	}
	// A week starts on Monday: from Wednesday 2025-05-21 and Sunday 2025-05-25.
	for _, tc := range []struct {
		now      Timestamp
		in       string
		want     Timestamp
		weekday  time.Weekday
		describe string
	}{
		{day(2025, 5, 21), "wStart", day(2025, 5, 19), time.Monday, "Wednesday"},
		{day(2025, 5, 21), "-1wStart", day(2025, 5, 12), time.Monday, "Wednesday"},
		{day(2025, 5, 21), "wEnd", day(2025, 5, 25), time.Sunday, "Wednesday"},
		{day(2025, 5, 25), "wStart", day(2025, 5, 19), time.Monday, "Sunday"},
		{day(2025, 5, 25), "wEnd", day(2025, 5, 25), time.Sunday, "Sunday"},
	} {
		got, err := ParseDate(tc.in, tc.now.Time.Add(9*time.Hour))
		if err != nil || got != tc.want || got.Time.Weekday() != tc.weekday {
			t.Errorf("ParseDate(%q) on a %s = %v, %v; want %v", tc.in, tc.describe, got, err, tc.want)
		}
	}
	// An absolute date ignores the clock, even the zero one.
	got, err := ParseDate("2025-01-02", time.Time{})
	if err != nil || got != day(2025, 1, 2) {
		t.Errorf("ParseDate(2025-01-02) with a zero clock = %v, %v", got, err)
	}
	// A relative date before year 1 from the zero clock is an error, not a wrap.
	if _, err := ParseDate("-1d", time.Time{}); err == nil {
		t.Error("ParseDate(-1d) with a zero clock: want an error")
	}
}

func TestDateExpr(t *testing.T) {
	for _, tc := range []struct {
		in        string
		relative  bool
		precision time.Duration
	}{
		{"2025-01-02", false, 24 * time.Hour},
		{"2025-01-02 03:04", false, 0},
		{"2025-01-02T03:04:05.5Z", false, 0},
		{"-3h", true, time.Hour},
		{"-7d", true, 24 * time.Hour},
		{"-2w", true, 24 * time.Hour},
		{"-1mStart", true, 24 * time.Hour},
		{"yEnd", true, 24 * time.Hour},
	} {
		e, err := ParseDateExpr(tc.in)
		require.NoError(t, err, "ParseDateExpr(%q)", tc.in)
		if e.Relative() != tc.relative || e.Precision() != tc.precision || e.String() != tc.in {
			t.Errorf("ParseDateExpr(%q) = relative %v, precision %v, text %q; want %v, %v", tc.in, e.Relative(), e.Precision(), e.String(), tc.relative, tc.precision)
		}
		// Precision is exactly what the resolved value names.
		ts, err := e.Resolve(dateNow)
		require.NoError(t, err, "Resolve(%q)", tc.in)
		assert.Equal(t, tc.precision == 24*time.Hour, ts.DateOnly, "Resolve(%q).DateOnly = %v with precision %v", tc.in, ts.DateOnly, tc.precision)
	}
	// A relative date is checked without a clock, resolved with one.
	e, err := ParseDateExpr("-2025y")
	require.NoError(t, err, "ParseDateExpr(-2025y)")
	if _, err := e.Resolve(dateNow); err == nil {
		t.Error("-2025y resolved in 2025: want an error")
	}
	if got, err := e.Resolve(dateNow.AddDate(1, 0, 0)); err != nil || got != day(1, 3, 31) {
		t.Errorf("-2025y resolved in 2026 = %v, %v", got, err)
	}
	// The zero DateExpr resolves to an error, never to year 1.
	if _, err := (DateExpr{}).Resolve(dateNow); err == nil {
		t.Error("the zero DateExpr resolved")
	}
	// A failed parse returns the zero DateExpr.
	if e, err := ParseDateExpr("2025-02-30"); err == nil || e != (DateExpr{}) {
		t.Errorf("ParseDateExpr(2025-02-30) = %#v, %v", e, err)
	}
}

func TestDateError(t *testing.T) {
	_, err := ParseDate("2025-02-30", dateNow)
	want := `"2025-02-30" is not a real calendar date; want a day from 01 to 28 (2025-02 has 28 days)`
	if assert.Error(t, err, "error = %v, want %s", err, want) {
		assert.Equal(t, want, err.Error(), "error = %v, want %s", err, want)
	}
	// Control characters are quoted, never printed raw.
	_, err = ParseDate("2025\n01-02", dateNow)
	if assert.Error(t, err, "error %q holds a raw newline", err) {
		assert.False(t, strings.ContainsRune(err.Error(), '\n'), "error %q holds a raw newline", err)
	}
	// The input is cut to 200 bytes at a character boundary.
	for _, tc := range []struct {
		in   string
		want string
	}{
		{strings.Repeat("x", 200), strings.Repeat("x", 200)},
		{strings.Repeat("x", 10_000), strings.Repeat("x", 200)},
		{strings.Repeat("é", 150), strings.Repeat("é", 100)},
		{"x" + strings.Repeat("é", 150), "x" + strings.Repeat("é", 99)},
		{"-" + strings.Repeat("7", 300) + "d", "-" + strings.Repeat("7", 199)},
		{"2025-01-02T03:04:05." + strings.Repeat("9", 300), "2025-01-02T03:04:05." + strings.Repeat("9", 180)},
	} {
		_, err := ParseDate(tc.in, dateNow)
		var de *DateError
		require.ErrorAs(t, err, &de, "ParseDate(%d bytes)", len(tc.in))
		if de.Input != tc.want || de.Truncated != (len(tc.in) > 200) || !utf8.ValidString(de.Input) {
			t.Errorf("ParseDate(%d bytes): Input %d bytes (%q...), Truncated %v; want %d bytes", len(tc.in), len(de.Input), de.Input[:10], de.Truncated, len(tc.want))
		}
		msg := de.Error()
		assert.LessOrEqual(t, len(msg), 200+len(de.Problem)+len(de.Expected)+30, "a %d-byte input gives", len(tc.in))
		if de.Truncated && !strings.Contains(de.Error(), `"…`) {
			t.Errorf("a cut input is not marked in %q", de.Error())
		}
	}
}

func TestCoerceDate(t *testing.T) {
	// now is 2025-03-31T15:47:12.5Z (see runCoerce); TestParseDate covers
	// the grammar, this what Coerce adds: the Go types it takes and how a
	// *DateError becomes the Reason of a *ValueError.
	v := Variable{CodeName: "date_from", Type: Date}
	berlin := time.FixedZone("CET", 3600)
	reason := func(problem, expected string) string { return problem + "; want " + expected }
	runCoerce(t, v, append([]coerceCase{
		{raw: "2025-01-31", want: day(2025, 1, 31)},
		{raw: json.RawMessage(`"2025-01-31"`), want: day(2025, 1, 31)},
		{raw: "2025-01-02 03:04:05", want: at(2025, 1, 2, 3, 4, 5, 0)},
		{raw: json.RawMessage(`"2025-01-02 03:04:05"`), want: at(2025, 1, 2, 3, 4, 5, 0)},
		{raw: "2025-01-02T03:04:05", want: at(2025, 1, 2, 3, 4, 5, 0)},
		{raw: "2025-01-02T03:04:05.25+02:00", want: at(2025, 1, 2, 1, 4, 5, 250_000_000)},
		{raw: "-7d", want: day(2025, 3, 24)},
		{raw: json.RawMessage(`"-7d"`), want: day(2025, 3, 24)},
		{raw: "-1m", want: day(2025, 2, 28)},
		{raw: "-1mStart", want: day(2025, 2, 1)},
		{raw: "-12h", want: at(2025, 3, 31, 3, 0, 0, 0)},
		{raw: time.Date(2025, 1, 2, 3, 4, 5, 6, berlin), want: at(2025, 1, 2, 2, 4, 5, 6)},
		{raw: day(2025, 1, 2), want: day(2025, 1, 2)},
		{raw: Timestamp{Time: time.Date(2025, 1, 2, 3, 0, 0, 0, berlin)}, want: at(2025, 1, 2, 2, 0, 0, 0)},

		{raw: "2025-02-30", reason: reason("not a real calendar date", "a day from 01 to 28 (2025-02 has 28 days)")},
		{raw: "0000-01-01", reason: reason("outside the years 0001 to 9999 (in UTC)", inRange)},
		{raw: "-2025y", reason: reason("outside the years 0001 to 9999 (in UTC)", inRange)},
		{raw: "-100000000d", reason: reason("too far in the past", "at most 99999999 units back")},
		{raw: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), reason: reason("outside the years 0001 to 9999 (in UTC)", inRange)},
		{raw: Timestamp{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, reason: reason("outside the years 0001 to 9999 (in UTC)", inRange)},
		{raw: "2025/01/02", reason: reason("not a date", DateForms)},
		{raw: "2025-1-02", reason: reason("not a date", absoluteForms)},
		{raw: "", reason: reason("empty", DateForms)},
		{raw: "-7s", reason: reason("not a relative date", relativeForms)},
		{raw: 1735776000, reason: "not text; want " + DateForms}, // no epoch seconds
		{raw: json.RawMessage(`20250102`), reason: "not text; want " + DateForms},
		{raw: true, reason: "not text; want " + DateForms},
		{raw: []any{"2025-01-02"}, reason: "an array is not a single value"},
	}, rejectedByAll...))
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
		assert.True(t, got.Equal(tc.want.Time), "addMonthsClamped(%v, %d) = %v, want %v", tc.from, tc.months, got, tc.want)
	}
}

// BenchmarkParseDate measures the grammar alone on each family of forms; a
// run request's Date values and every insight date bound pass through it.
func BenchmarkParseDate(b *testing.B) {
	now := time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
	for _, bc := range []struct{ name, in string }{
		{"day", "2025-05-01"},
		{"datetime", "2025-05-01 12:30:00"},
		{"RFC3339", "2025-05-01T12:30:00+02:00"},
		{"relative", "-7d"},
		{"relative/month", "-1mStart"},
		{"rejected", "yesterday"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := ParseDate(bc.in, now)
				if (err != nil) != (bc.name == "rejected") {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzParseDate feeds arbitrary text and clocks to the date grammar. It must
// never panic; an error must be a *DateError whose Input is the start of the
// text, at most 200 bytes; a date must be in UTC within the years 0001 to
// 9999, and an absolute one, formatted again (as Timestamp.String does for
// SQL, and as RFC 3339), must parse back to itself. Where time.Parse also
// reads the text, both must agree.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{
		"2025-01-02", "2024-02-29", "2025-02-30", "0001-01-01", "9999-12-31", "0000-01-01",
		"2025-01-02 03:04:05", "2025-01-02T03:04:05", "2025-01-02T03:04", "2025-01-02 03:04:05.123456789",
		"2025-01-02T03:04:05Z", "2025-01-02T03:04:05.25+02:00", "2025-01-02T03:04:05-05:30",
		"0000-12-31T23:30:00-01:00", "9999-12-31T23:59:59.999999999-23:59", "2025-01-02T24:00:00Z",
		"-7d", "-2w", "-1m", "-1y", "-24h", "-0d", "-007d", "-99999999h", "-100000000d",
		"dStart", "wStart", "mStart", "yStart", "-1mStart", "-7dStart", "-1yEnd", "wEnd", "-1hStart",
		"", "-", "today", "2025-1-2", "-7q", "--7d", "2025-01-02T03:04:05,5Z", "\xff", "é",
	} {
		f.Add(s, int64(1743436032))
	}
	f.Fuzz(func(t *testing.T, s string, unix int64) {
		now := time.Unix(unix%(1<<40), 0) // within years a clock can hold
		ts, err := ParseDate(s, now)
		if err != nil {
			checkDateError(t, s, err)
			return
		}
		checkDate(t, s, ts)
		e, err := ParseDateExpr(s)
		require.NoError(t, err, "ParseDate(%q) succeeded but ParseDateExpr", s)
		if ts.DateOnly != (e.Precision() == 24*time.Hour) {
			t.Fatalf("%q: DateOnly %v but Precision %v", s, ts.DateOnly, e.Precision())
		}
		if e.Relative() {
			return
		}
		if again, err := ParseDate(ts.String(), time.Time{}); err != nil || again != ts {
			t.Fatalf("%q gives %#v, whose text %q gives %#v, %v", s, ts, ts.String(), again, err)
		}
		rfc := ts.Time.Format(time.RFC3339Nano)
		if ts.DateOnly {
			rfc = ts.Time.Format(time.DateOnly)
		}
		if again, err := ParseDate(rfc, time.Time{}); err != nil || again != ts {
			t.Fatalf("%q gives %#v, whose text %q gives %#v, %v", s, ts, rfc, again, err)
		}
		checkAgainstTimeParse(t, s, ts)
	})
}

func checkDateError(t *testing.T, s string, err error) {
	t.Helper()
	var de *DateError
	require.ErrorAs(t, err, &de, "ParseDate(%q)", s)
	require.LessOrEqual(t, len(de.Input), 200, "ParseDate(%q): Input %q, Truncated", s, de.Input)
	require.True(t, strings.HasPrefix(s, de.Input), "ParseDate(%q): Input %q, Truncated", s, de.Input)
	require.Equal(t, len(de.Input) < len(s), de.Truncated, "ParseDate(%q): Input %q, Truncated", s, de.Input)
	if utf8.ValidString(s) && !utf8.ValidString(de.Input) {
		t.Fatalf("ParseDate(%q): Input %q splits a character", s, de.Input)
	}
	require.NotEqual(t, "", de.Problem, "ParseDate(%q): error %#v does not say what was wrong and what was expected", s, de)
	require.NotEqual(t, "", de.Expected, "ParseDate(%q): error %#v does not say what was wrong and what was expected", s, de)
}

func checkDate(t *testing.T, s string, ts Timestamp) {
	t.Helper()
	if ts.Time.Location() != time.UTC {
		t.Fatalf("ParseDate(%q) = %v, not in UTC", s, ts.Time)
	}
	y := ts.Time.Year()
	require.GreaterOrEqual(t, y, 1, "ParseDate(%q) = %v, outside the years 0001 to 9999", s, ts.Time)
	require.LessOrEqual(t, y, 9999, "ParseDate(%q) = %v, outside the years 0001 to 9999", s, ts.Time)
	if ts.DateOnly && !ts.Time.Equal(ts.Time.Truncate(24*time.Hour)) {
		t.Fatalf("ParseDate(%q) = %v, a whole day that does not start at midnight", s, ts.Time)
	}
}

// checkAgainstTimeParse compares with the standard library where the two
// grammars overlap: a calendar date, and RFC 3339 with seconds and a zone
// after "T" (time.Parse also takes a comma before the fraction, which the
// grammar does not).
func checkAgainstTimeParse(t *testing.T, s string, ts Timestamp) {
	t.Helper()
	layout := time.RFC3339Nano
	if ts.DateOnly {
		layout = time.DateOnly
	}
	want, err := time.Parse(layout, s)
	if err != nil {
		return
	}
	require.True(t, want.Equal(ts.Time), "ParseDate(%q) = %v, time.Parse gives %v", s, ts.Time, want)
}
