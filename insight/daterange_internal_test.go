package insight

import (
	"fmt"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// TestParseBoundErrors: what Decode refuses in a saved date range, before
// any clock. variable.TestParseDate covers the grammar in full.
func TestParseBoundErrors(t *testing.T) {
	for _, s := range []string{"", "yesterday", "-7", "-d", "-7x", "--7d", "-+7d", "-1hStart", "-100000000d", "2025-13-01", "2025-02-30", "10000-01-01", "2025/01/01", "0000-01-01", "2025-01-02T24:00:00"} {
		_, err := parseBound(s)
		require.Error(t, err, "%v: got no error, want one", s)
	}
}

func TestResolveSpan(t *testing.T) {
	now := time.Date(2025, 5, 21, 15, 30, 0, 0, time.UTC) // a Wednesday
	day := func(s string) time.Time {
		t, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			panic(err)
		}
		return t
	}
	cases := []struct {
		kind       Kind
		interval   engine.Bucket
		from, to   string
		total      int
		start, end string
		buckets    int
	}{
		// date_to includes its whole day; date_from starts its interval.
		{Trends, engine.Day, "2025-05-01", "2025-05-31", 0, "2025-05-01 00:00:00", "2025-06-01 00:00:00", 31},
		{Trends, engine.Week, "2025-05-01", "2025-05-31", 0, "2025-04-28 00:00:00", "2025-06-01 00:00:00", 5},
		{Trends, engine.Month, "2025-02-15", "2025-04-10", 0, "2025-02-01 00:00:00", "2025-04-11 00:00:00", 3},
		{Trends, engine.Hour, "2025-05-20", "2025-05-20", 0, "2025-05-20 00:00:00", "2025-05-21 00:00:00", 24},
		// Times are exact, and date_to with a time includes that second.
		{Trends, engine.Hour, "2025-05-20T10:30:00Z", "2025-05-20 12:00:00", 0, "2025-05-20 10:00:00", "2025-05-20 12:00:01", 3},
		// Relative dates count back from now's day (or hour).
		{Trends, engine.Day, "-7d", "", 0, "2025-05-14 00:00:00", "2025-05-22 00:00:00", 8},
		{Trends, engine.Day, "-2w", "-1d", 0, "2025-05-07 00:00:00", "2025-05-21 00:00:00", 14},
		{Trends, engine.Hour, "-3h", "", 0, "2025-05-21 12:00:00", "2025-05-21 16:00:00", 4},
		{Trends, engine.Month, "-1m", "", 0, "2025-04-01 00:00:00", "2025-06-01 00:00:00", 2},
		{Trends, engine.Day, "-1mStart", "-1d", 0, "2025-04-01 00:00:00", "2025-05-21 00:00:00", 50},
		{Trends, engine.Day, "-1y", "-1yStart", 0, "2024-05-21 00:00:00", "2024-01-02 00:00:00", 0},
		{Trends, engine.Week, "-1wStart", "", 0, "2025-05-12 00:00:00", "2025-05-26 00:00:00", 2},
		// Start and End name whole days; mStart needs no number.
		{Trends, engine.Day, "mStart", "dEnd", 0, "2025-05-01 00:00:00", "2025-05-22 00:00:00", 21},
		{Trends, engine.Month, "-1yStart", "-1mEnd", 0, "2024-01-01 00:00:00", "2025-05-01 00:00:00", 16},
		{Trends, engine.Day, "-1wStart", "-1wEnd", 0, "2025-05-12 00:00:00", "2025-05-19 00:00:00", 7},
		// -Nh as date_to includes its hour; a date-time without a zone is UTC.
		{Trends, engine.Hour, "-3h", "-1h", 0, "2025-05-21 12:00:00", "2025-05-21 15:00:00", 3},
		{Trends, engine.Hour, "2025-05-20T22:00", "2025-05-21T01:30:00+02:00", 0, "2025-05-20 22:00:00", "2025-05-20 23:30:01", 2},
		// A relative date that resolves before the year 0001 is refused.
		{Trends, engine.Day, "-1000000d", "", 0, "", "", 0},
		{Trends, engine.Day, "", "-2026y", 0, "", "", 0},
		// Defaults: 7 days back for trends, TotalIntervals periods for retention.
		{Trends, engine.Day, "", "", 0, "2025-05-14 00:00:00", "2025-05-22 00:00:00", 8},
		{Retention, engine.Week, "", "", 4, "2025-04-28 00:00:00", "2025-05-26 00:00:00", 4},
		{Retention, engine.Month, "", "2025-03-31", 3, "2025-01-01 00:00:00", "2025-04-01 00:00:00", 3},
		{Retention, engine.Day, "2025-05-01", "2025-05-03", 7, "2025-05-01 00:00:00", "2025-05-04 00:00:00", 3},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %s %q %q", c.kind, c.interval, c.from, c.to), func(t *testing.T) {
			q := &Query{Kind: c.kind, Interval: c.interval, DateRange: DateRange{From: c.from, To: c.to}, Retention: RetentionFilter{TotalIntervals: c.total}}
			sp, err := resolveSpan(q, now)
			if c.buckets == 0 {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			got, want := sp.start, day(c.start)
			require.Equal(t, want, got, "sp.start")
			require.Equal(t, day(c.end), sp.end)
			require.Len(t, sp.buckets, c.buckets)
			require.Equal(t, sp.start, sp.buckets[0])
		})
	}
}

func TestWeeksStartOnMonday(t *testing.T) {
	for d := 0; d < 14; d++ {
		ts := time.Date(2025, 5, 1+d, 13, 0, 0, 0, time.UTC)
		w := engine.Week.Floor(ts)
		got, want := w.Weekday(), time.Monday
		require.Equal(t, want, got, "%v: w.Weekday()", ts)
		require.False(t, w.After(ts), "w.After(ts) is true")
		require.True(t, (ts.Sub(w) < 7*24*time.Hour), "ts.Sub(w) < 7*24*time.Hour is false")
	}
}
