package insight

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/stretchr/testify/require"
	"reflect"
	"testing"
	"time"
)

const twoBreakdowns = `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"},{"kind":"EventsNode","event":"purchase","math":"sum","math_property":"amount"}],
	"interval":"day","dateRange":{"date_from":"2025-04-01","date_to":"2025-04-30"},
	"properties":[{"key":"url","value":"example.org","operator":"not_icontains","type":"event"}],
	"breakdownFilter":{"breakdowns":[{"property":"$browser","type":"event"},{"property":"$os","type":"event"}]}}`

func TestVariables(t *testing.T) {
	cases := []struct {
		query        string
		materialized bool
		want         []string
	}{
		{twoBreakdowns, false, []string{"$browser", "$os", "date_from", "date_to"}},
		{twoBreakdowns, true, []string{"$browser", "$os"}},
		{`{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}],"breakdownFilter":{"breakdown":"plan"}}`, false, []string{"plan", "date_from", "date_to"}},
		{`{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}]}`, false, []string{"date_from", "date_to"}},
		{`{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}]}`, true, []string{}},
		{`{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"a","type":"events"},"returningEntity":{"id":"b","type":"events"}},"breakdownFilter":{"breakdown":"$os"}}`, true, []string{"$os"}},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			got, want := mustDecode(t, c.query).Variables(c.materialized), c.want
			require.Equal(t, want, got, "mustDecode(t, c.query).Variables(c.materialized)")
		})
	}
}

func TestApply(t *testing.T) {
	saved := mustDecode(t, twoBreakdowns)
	before := saved.clone()
	cases := []struct {
		name   string
		values map[string]any
		props  []Property // added to the saved filters
		dates  DateRange
		err    string
	}{
		{name: "nothing", values: nil, dates: saved.DateRange},
		{name: "one breakdown", values: map[string]any{"$browser": "Chrome"},
			props: []Property{{Key: "$browser", Operator: Exact, Values: []string{"Chrome"}}}, dates: saved.DateRange},
		{name: "both breakdowns and dates", values: map[string]any{"$os": "Linux", "$browser": "Safari", "date_from": "2025-04-03", "date_to": "2025-04-05"},
			props: []Property{{Key: "$browser", Operator: Exact, Values: []string{"Safari"}}, {Key: "$os", Operator: Exact, Values: []string{"Linux"}}},
			dates: DateRange{From: "2025-04-03", To: "2025-04-05"}},
		{name: "empty means not set", values: map[string]any{"$browser": ""},
			props: []Property{{Key: "$browser", Operator: IsNotSet}}, dates: saved.DateRange},
		{name: "number value", values: map[string]any{"$os": json.Number("12")},
			props: []Property{{Key: "$os", Operator: Exact, Values: []string{"12"}}}, dates: saved.DateRange},
		{name: "raw JSON value", values: map[string]any{"$os": json.RawMessage(`"Mac OS X"`), "date_to": json.RawMessage(`"2025-04-09"`)},
			props: []Property{{Key: "$os", Operator: Exact, Values: []string{"Mac OS X"}}}, dates: DateRange{From: "2025-04-01", To: "2025-04-09"}},
		{name: "only date_to", values: map[string]any{"date_to": "2025-04-10"}, dates: DateRange{From: "2025-04-01", To: "2025-04-10"}},
		{name: "unknown keys", values: map[string]any{"country": "US", "$browser": "Chrome", "b": 1}, err: "Unknown variable(s): b, country"},
		{name: "relative date", values: map[string]any{"date_from": "-7d"}, dates: DateRange{From: "-7d", To: "2025-04-30"}},
		{name: "date and time", values: map[string]any{"date_from": "2025-04-03 10:00:00", "date_to": "-1mStart"},
			dates: DateRange{From: "2025-04-03 10:00:00", To: "-1mStart"}},
		{name: "bad date", values: map[string]any{"date_from": "2025-4-1"}, err: `Variable 'date_from' must be YYYY-MM-DD, optionally followed by T or a space, HH:MM`},
		{name: "not a date", values: map[string]any{"date_from": "yesterday"}, err: `Variable 'date_from' must be YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, an RFC 3339 date-time, or a relative date such as -7d`},
		{name: "bad relative date", values: map[string]any{"date_from": "-7q"}, err: `Variable 'date_from' must be - then a whole number and h, d, w, m or y`},
		{name: "impossible date", values: map[string]any{"date_to": "2025-02-30"}, err: `Variable 'date_to' must be a day from 01 to 28 (2025-02 has 28 days), got "2025-02-30"`},
		{name: "date not a string", values: map[string]any{"date_to": 20250101.0}, err: `Variable 'date_to' must be a string: YYYY-MM-DD, `},
		{name: "breakdown null", values: map[string]any{"$os": nil}, err: `Variable '$os' must be a string (a value of the breakdown property), got null`},
		{name: "breakdown list", values: map[string]any{"$os": []any{"a"}}, err: `Variable '$os' must be a string (a value of the breakdown property), got ["a"]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := saved.Apply(c.values)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				require.Nil(t, got)
				var unknown *UnknownVariablesError
				var value *ValueError
				require.True(t, (errors.As(err, &unknown) || errors.As(err, &value)), "typed error: %T: errors.As(err, &unknown) || errors.As(err, &value) is false", err)
				require.True(t, (errors.Is(err, ErrUnknownVariable) || errors.Is(err, ErrInvalidValue)), "errors.Is(err, ErrUnknownVariable) || errors.Is(err, ErrInvalidValue) is false")
				return
			}
			require.NoError(t, err)
			if got, want := got.Properties, (append(append([]Property{}, saved.Properties...), c.props...)); !reflect.DeepEqual(got, want) {
				t.Fatalf("got.Properties = %+v, want %+v", got, want)
			}
			require.Equal(t, c.dates, got.DateRange)
			require.Equal(t, saved.Breakdowns, got.Breakdowns)
			if got, want := saved, before; !reflect.DeepEqual(got, want) {
				t.Fatalf("the saved query is untouched: saved = %+v, want %+v", got, want)
			}
		})
	}
}

// TestBreakdownVariablesSelectSeries checks that, for every breakdown
// value, the run filtered by it holds exactly the matching series of the
// unfiltered run: with one and two breakdowns, with date variables, and
// with both combined.
func TestBreakdownVariablesSelectSeries(t *testing.T) {
	events := genEvents(2500, 4)
	db := eventsDB(t, events)
	now := time.Date(2025, 6, 3, 12, 0, 0, 0, time.UTC)
	queries := map[string]string{
		"one breakdown": `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview","math":"dau"},{"kind":"EventsNode","event":"purchase","math":"avg","math_property":"amount"}],
			"interval":"week","dateRange":{"date_from":"2025-03-10","date_to":"2025-05-20"},"breakdownFilter":{"breakdown":"$browser"}}`,
		"two breakdowns": twoBreakdowns,
		"retention": `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"signed_up","type":"events"},"returningEntity":{"id":"$pageview","type":"events"},
			"period":"Week","totalIntervals":4,"retentionType":"retention_first_time"},"dateRange":{"date_from":"2025-03-10","date_to":"2025-05-20"},
			"breakdownFilter":{"breakdowns":[{"property":"$os"},{"property":"$browser"}]}}`,
	}
	dateSets := []map[string]any{
		nil,
		{"date_from": "2025-04-07", "date_to": "2025-04-20"},
		{"date_to": "2025-04-15"},
	}
	for name, text := range queries {
		saved := mustDecode(t, text)
		for _, dates := range dateSets {
			t.Run(fmt.Sprintf("%s/%v", name, dates), func(t *testing.T) {
				base, err := saved.Apply(dates)
				require.NoError(t, err)
				all := run(t, db, base, now)
				groups := groupByBreakdown(t, all)
				a, b := len(groups), 2
				require.True(t, (a > b), "the data must have several breakdown values: len(groups) = %v, want > %v", a, b)
				for key, want := range groups {
					values := map[string]any{}
					for k, v := range dates {
						values[k] = v
					}
					var parts []string
					require.NoError(t, json.Unmarshal([]byte(key), &parts))
					for i, b := range saved.Breakdowns {
						values[b.Property] = parts[i]
					}
					filtered, err := saved.Apply(values)
					require.NoError(t, err)
					got := run(t, db, filtered, now)
					require.Equal(t, want, got, "values %v", values)
				}
				if len(saved.Breakdowns) == 2 {
					// One of two breakdown variables: every series with that value.
					first := saved.Breakdowns[0].Property
					for _, v := range []string{"Chrome", ""} {
						values := map[string]any{first: v}
						for k, d := range dates {
							values[k] = d
						}
						filtered, err := saved.Apply(values)
						require.NoError(t, err)
						got := run(t, db, filtered, now)
						want := &Result{Kind: all.Kind, Series: []TrendsSeries{}, Cohorts: []Cohort{}}
						for _, s := range all.Series {
							if s.BreakdownValue.([]string)[0] == v {
								want.Series = append(want.Series, s)
							}
						}
						for _, c := range all.Cohorts {
							if c.BreakdownValue.([]string)[0] == v {
								want.Cohorts = append(want.Cohorts, c)
							}
						}
						requireSameJSON(t, want, got)
					}
				}
				// A value no event has gives no series.
				values := map[string]any{saved.Breakdowns[0].Property: "Netscape"}
				filtered, err := saved.Apply(values)
				require.NoError(t, err)
				got := run(t, db, filtered, now)
				v := got.Series
				require.True(t, (len(v) == 0), "got.Series = %v, want it empty", v)
				if v := got.Cohorts; !(len(v) == 0) {
					t.Fatalf("got.Cohorts = %v, want it empty", v)
				}
			})
		}
	}
}

// groupByBreakdown splits a result by breakdown values (as a JSON array),
// keeping the result's order within each group.
func groupByBreakdown(t *testing.T, res *Result) map[string]*Result {
	out := map[string]*Result{}
	key := func(bv any) string {
		if s, ok := bv.(string); ok {
			bv = []string{s}
		}
		k, err := json.Marshal(bv)
		require.NoError(t, err)
		return string(k)
	}
	get := func(k string) *Result {
		if out[k] == nil {
			out[k] = &Result{Kind: res.Kind}
		}
		return out[k]
	}
	for _, s := range res.Series {
		r := get(key(s.BreakdownValue))
		r.Series = append(r.Series, s)
	}
	for _, c := range res.Cohorts {
		r := get(key(c.BreakdownValue))
		r.Cohorts = append(r.Cohorts, c)
	}
	return out
}

// requireSameJSON compares results as clients see them.
func requireSameJSON(t *testing.T, want, got *Result) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(w), string(g), "results as clients see them:\n got %s\nwant %s", g, w)
}
