package variable

import (
	"github.com/stretchr/testify/require"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

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
