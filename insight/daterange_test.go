package insight_test

import (
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// days decodes a daily trends query over the given date range, applies the
// run-time values, compiles it at now and returns the days of its series.
func days(t *testing.T, dateRange string, values map[string]any, now time.Time) ([]string, error) {
	t.Helper()
	q, err := insight.Decode([]byte(`{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"day","dateRange":` + dateRange + `}`))
	if err != nil {
		return nil, err
	}
	q, err = q.Apply(values)
	if err != nil {
		return nil, err
	}
	c, err := insight.Compile(q, engine.SQLite, now)
	if err != nil {
		return nil, err
	}
	res, err := c.Shape(nil)
	require.NoError(t, err)
	require.Len(t, res.Series, 1)
	return res.Series[0].Days, nil
}

// TestDateRangeMonthEndClamp: -1m from March 31 is February 28, as for a
// Date variable. (Insight once stepped with time.AddDate, which rolls
// February 31 over to March 3.)
func TestDateRangeMonthEndClamp(t *testing.T) {
	now := time.Date(2025, 3, 31, 15, 47, 0, 0, time.UTC)
	got, err := days(t, `{"date_from":"-1m","date_to":"-1m"}`, nil, now)
	require.NoError(t, err)
	require.Equal(t, []string{"2025-02-28"}, got)

	// A leap day one year back is the last day of that February.
	got, err = days(t, `{"date_from":"-1y","date_to":"-1y"}`, nil, time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, []string{"2023-02-28"}, got)
}

// TestDateRangeGrammar: the date range and the date_from and date_to
// variables take what a Date variable takes, relative dates included.
func TestDateRangeGrammar(t *testing.T) {
	now := time.Date(2025, 5, 21, 15, 30, 0, 0, time.UTC) // a Wednesday
	for _, tc := range []struct {
		name      string
		dateRange string
		values    map[string]any
		want      []string
	}{
		{"relative date_from variable", `{"date_from":"2025-01-01"}`, map[string]any{"date_from": "-7d", "date_to": "-6d"},
			[]string{"2025-05-14", "2025-05-15"}},
		{"date-time variables", `{}`, map[string]any{"date_from": "2025-05-01 10:00:00", "date_to": "2025-05-02T09:00:00"},
			[]string{"2025-05-01", "2025-05-02"}},
		{"Start and End", `{"date_from":"-1mStart","date_to":"-1mEnd"}`, nil, monthOfDays(2025, time.April)},
		{"this week", `{"date_from":"wStart","date_to":"wEnd"}`, nil,
			[]string{"2025-05-19", "2025-05-20", "2025-05-21", "2025-05-22", "2025-05-23", "2025-05-24", "2025-05-25"}},
		{"variables replace Start forms", `{"date_from":"yStart"}`, map[string]any{"date_from": "dStart"}, []string{"2025-05-21"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := days(t, tc.dateRange, tc.values, now)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func monthOfDays(y int, m time.Month) []string {
	var out []string
	for d := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC); d.Month() == m; d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format(time.DateOnly))
	}
	return out
}

// TestDateRangeVariableErrors: a date variable outside the grammar is a
// *ValueError naming what a date looks like.
func TestDateRangeVariableErrors(t *testing.T) {
	now := time.Date(2025, 5, 21, 15, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		value any
		want  string
	}{
		{"yesterday", `Variable 'date_from' must be YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, an RFC 3339 date-time, or a relative date such as -7d, -2w, -1m, -1y, -24h, mStart or -1mStart, got "yesterday"`},
		{"2025-02-30", `Variable 'date_from' must be a day from 01 to 28 (2025-02 has 28 days), got "2025-02-30"`},
		{20250101.0, `Variable 'date_from' must be a string: YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, an RFC 3339 date-time, or a relative date such as -7d, -2w, -1m, -1y, -24h, mStart or -1mStart, got 20250101`},
	} {
		_, err := days(t, `{}`, map[string]any{"date_from": tc.value}, now)
		var ve *insight.ValueError
		require.ErrorAs(t, err, &ve)
		got, want := err.Error(), tc.want
		require.Equal(t, want, got, "err.Error()")
	}
	// A relative date that resolves before the year 0001 fails at Compile.
	_, err := days(t, `{}`, map[string]any{"date_from": "-2026y"}, now)
	require.ErrorIs(t, err, insight.ErrInvalid)
	require.ErrorContains(t, err, `dateRange.date_from: "-2026y" is outside the years 0001 to 9999 (in UTC)`)
}

// A reversed date range names each bound as the client sent it, then what
// the range resolved to (it named date_to by its end, 2025-05-02
// 00:00:00, although the client sent 2025-05-01).
func TestReversedRangeEchoesTheValuesAsSent(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		dateRange string
		values    map[string]any
		want      string
	}{
		{`{"date_from": "2025-05-03"}`, map[string]any{"date_to": "2025-05-01"},
			"dateRange: date_from '2025-05-03' is not before date_to '2025-05-01': the range would start at 2025-05-03 00:00:00 and end at 2025-05-02 00:00:00 (a date_to includes what it names)"},
		{`{"date_from": "-7d", "date_to": "-30d"}`, nil,
			"dateRange: date_from '-7d' is not before date_to '-30d': the range would start at 2025-05-25 00:00:00 and end at 2025-05-03 00:00:00 (a date_to includes what it names)"},
		{`{"date_from": "2025-07-01"}`, nil,
			"dateRange: date_from '2025-07-01' is not before date_to (not set): the range would start at 2025-07-01 00:00:00 and end at 2025-06-02 00:00:00 (a date_to includes what it names)"},
	} {
		_, err := days(t, tc.dateRange, tc.values, now)
		var e *insight.Error
		require.ErrorAs(t, err, &e, "%s", tc.dateRange)
		s, sub := err.Error(), tc.want
		require.Contains(t, s, sub)
	}
}
