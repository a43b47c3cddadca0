package endpoint_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trendsByBrowserCountry breaks pageviews down by browser and country.
const trendsByBrowserCountry = `{"kind": "TrendsQuery",
	"series": [{"kind": "EventsNode", "event": "$pageview"}],
	"interval": "day",
	"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-31"},
	"breakdownFilter": {"breakdowns": [{"property": "$browser", "type": "event"}, {"property": "country", "type": "event"}]}}`

// retentionByBrowser is a daily first-time retention of sign-ups broken
// down by browser.
const retentionByBrowser = `{"kind": "RetentionQuery",
	"retentionFilter": {"targetEntity": {"id": "signed_up", "type": "events"}, "returningEntity": {"id": "$pageview", "type": "events"},
		"period": "Day", "totalIntervals": 5, "retentionType": "retention_first_time"},
	"dateRange": {"date_from": "2025-05-20", "date_to": "2025-05-31"},
	"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`

func execOf(e *env) driver.Executor { return sqlexec.New(e.db, engine.SQLite) }

func asError(t *testing.T, err error) *endpoint.Error {
	t.Helper()
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	return e
}

// TestInsightTrendsBreakdownFilter: for each breakdown value, the run
// filtered to it returns exactly the matching series of the unfiltered run;
// the unfiltered run itself agrees with a count of the generated events.
func TestInsightTrendsBreakdownFilter(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	all := e.runInsight(t, "trends", map[string]any{})
	require.Len(t, all.Series, len(demo.Browsers))
	want := map[string]float64{}
	from, to := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	err := demo.Generate(insightEvents, 11, func(ev demo.Event) error {
		if ev.Event == "$pageview" && !ev.Timestamp.Before(from) && ev.Timestamp.Before(to) {
			want[ev.Properties.Browser]++
		}
		return nil
	})
	require.NoError(t, err)
	for _, s := range all.Series {
		b := s.BreakdownValue.(string)
		if s.Count != want[b] || s.Count == 0 || len(s.Days) != 31 {
			t.Errorf("series %s: count %v over %d days, want %v over 31", b, s.Count, len(s.Days), want[b])
		}
		one := e.runInsight(t, "trends", map[string]any{"$browser": b})
		if assert.Len(t, one.Series, 1, "run with $browser=%s: %+v, want only %+v", b, one.Series, s) {
			assert.Equal(t, s, one.Series[0], "run with $browser=%s: %+v, want only %+v", b, one.Series, s)
		}
	}
	none := e.runInsight(t, "trends", map[string]any{"$browser": "Netscape"})
	assert.Empty(t, none.Series, "a browser without events")
}

// TestInsightTwoBreakdowns: both breakdown variables select one series; one
// of them selects every series with that value. The query keeps all 50
// browser and country pairs (the default limit would fold 25 of them into
// an Other series that no variable selects).
func TestInsightTwoBreakdowns(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends2", insightQuery(t, strings.Replace(trendsByBrowserCountry, `"breakdownFilter": {`, `"breakdownFilter": {"breakdown_limit": 100, `, 1)))
	all := e.runInsight(t, "trends2", nil)
	require.GreaterOrEqual(t, len(all.Series), 20)
	byBrowser := map[string][]insight.TrendsSeries{}
	for _, s := range all.Series {
		v := s.BreakdownValue.([]string)
		byBrowser[v[0]] = append(byBrowser[v[0]], s)
		if v[0] != "Chrome" && v[0] != "Edge" {
			continue // both variables: a sample is enough for the time
		}
		one := e.runInsight(t, "trends2", map[string]any{"$browser": v[0], "country": v[1]})
		if assert.Len(t, one.Series, 1, "run with %v: %+v, want only %+v", v, one.Series, s) {
			assert.Equal(t, s, one.Series[0], "run with %v: %+v, want only %+v", v, one.Series, s)
		}
	}
	for b, series := range byBrowser {
		got := e.runInsight(t, "trends2", map[string]any{"$browser": b})
		assert.True(t, sameSeries(got.Series, series), "run with $browser=%s: %d series, want the %d of that browser", b, len(got.Series), len(series))
	}
}

// sameSeries compares series regardless of order (ties in count may sort
// differently once other series are gone).
func sameSeries(a, b []insight.TrendsSeries) bool {
	key := func(s insight.TrendsSeries) string { return fmt.Sprint(s.BreakdownValue) }
	sort := func(s []insight.TrendsSeries) []insight.TrendsSeries {
		s = slices.Clone(s)
		slices.SortFunc(s, func(x, y insight.TrendsSeries) int { return strings.Compare(key(x), key(y)) })
		return s
	}
	return reflect.DeepEqual(sort(a), sort(b))
}

// TestInsightDateVariables: date_from and date_to narrow the range to the
// days given, both included; each day's value is unchanged, alone and
// combined with a breakdown variable.
func TestInsightDateVariables(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	all := e.runInsight(t, "trends", nil)
	days := []string{"2025-05-10", "2025-05-11", "2025-05-12"}
	for _, vars := range []map[string]any{
		{"date_from": "2025-05-10", "date_to": "2025-05-12"},
		{"date_from": "2025-05-10", "date_to": "2025-05-12", "$browser": "Safari"},
	} {
		got := e.runInsight(t, "trends", vars)
		var want []insight.TrendsSeries
		for _, s := range all.Series {
			if b, ok := vars["$browser"]; ok && s.BreakdownValue != b {
				continue
			}
			w := s
			w.Days, w.Data, w.Labels, w.Count = days, s.Data[9:12], s.Labels[9:12], 0
			for _, v := range w.Data {
				w.Count += v
			}
			if w.Count > 0 {
				want = append(want, w)
			}
		}
		if assert.NotEmpty(t, want, "run with %v: %+v, want %+v", vars, got.Series, want) {
			assert.True(t, sameSeries(got.Series, want), "run with %v: %+v, want %+v", vars, got.Series, want)
		}
	}
	// date_from alone keeps the saved date_to.
	got := e.runInsight(t, "trends", map[string]any{"date_from": "2025-05-30"})
	for _, s := range got.Series {
		require.Equal(t, []string{"2025-05-30", "2025-05-31"}, s.Days, "date_from alone: days")
	}
}

// TestInsightRetentionBreakdownFilter: for each browser, the filtered
// retention equals that browser's cohorts of the unfiltered one.
func TestInsightRetentionBreakdownFilter(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "retention", insightQuery(t, retentionByBrowser))
	all := e.runInsight(t, "retention", nil)
	byBrowser := map[any][]insight.Cohort{}
	for _, c := range all.Cohorts {
		byBrowser[c.BreakdownValue] = append(byBrowser[c.BreakdownValue], c)
	}
	require.Len(t, byBrowser, len(demo.Browsers), "cohorts of")
	sized := 0
	for b, want := range byBrowser {
		got := e.runInsight(t, "retention", map[string]any{"$browser": b})
		assert.Equal(t, want, got.Cohorts, "run with $browser=%v", b)
		for _, c := range want {
			if c.Values[0].Count > 0 {
				sized++
			}
		}
	}
	require.NotEqual(t, 0, sized, "every cohort is empty: the test data proves nothing")
	got := e.runInsight(t, "retention", map[string]any{"$browser": "Chrome", "date_from": "2025-05-25"})
	for _, c := range got.Cohorts {
		if c.BreakdownValue != "Chrome" || c.Date < "2025-05-25" {
			t.Fatalf("retention with $browser and date_from: cohort %+v", c)
		}
	}
	require.Len(t, got.Cohorts, 7)
}

// TestInsightRunErrors: what a run of an insight endpoint refuses.
func TestInsightRunErrors(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	ten := 10
	tests := []struct {
		name               string
		req                endpoint.RunRequest
		code, detail, attr string
	}{
		{"unknown", endpoint.RunRequest{Variables: map[string]any{"country": "US", "browser": "x", "$browser": "Chrome"}},
			"unknown_variable", "Unknown variable(s): browser, country", "variables.browser"},
		{"bad date", endpoint.RunRequest{Variables: map[string]any{"date_from": "yesterday"}},
			"invalid_variable_value", `Variable 'date_from' must be YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, an RFC 3339 date-time, or a relative date such as -7d, -2w, -1m, -1y, -24h, mStart or -1mStart, got "yesterday"`, "variables.date_from"},
		{"bad date type", endpoint.RunRequest{Variables: map[string]any{"date_to": 20250501}},
			"invalid_variable_value", `Variable 'date_to' must be a string: YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, an RFC 3339 date-time, or a relative date such as -7d, -2w, -1m, -1y, -24h, mStart or -1mStart, got 20250501`, "variables.date_to"},
		{"bad breakdown", endpoint.RunRequest{Variables: map[string]any{"$browser": []any{"Chrome"}}},
			"invalid_variable_value", `Variable '$browser' must be a string (a value of the breakdown property), got ["Chrome"]`, "variables.$browser"},
		{"inverted range", endpoint.RunRequest{Variables: map[string]any{"date_from": "2025-05-20", "date_to": "2025-05-10"}},
			"invalid_variable_value", "", "variables"},
		{"limit", endpoint.RunRequest{Limit: &ten},
			"invalid_input", "limit and offset apply to SQL endpoints only; an insight endpoint returns its whole result.", "limit"},
		{"offset", endpoint.RunRequest{Offset: &ten},
			"invalid_input", "limit and offset apply to SQL endpoints only; an insight endpoint returns its whole result.", "offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.svc.Run(context.Background(), "1", "trends", tt.req)
			got := asError(t, err)
			if got.Status != 400 || got.Code != tt.code || got.Attr != tt.attr || (tt.detail != "" && got.Detail != tt.detail) {
				t.Fatalf("got {%d %s %q attr %q}, want {400 %s %q attr %q}", got.Status, got.Code, got.Detail, got.Attr, tt.code, tt.detail, tt.attr)
			}
		})
	}
}

// TestInsightDebugAndExecutorErrors: debug shows the SQL with markers and
// no values; executor failures map as for SQL endpoints.
func TestInsightDebugAndExecutorErrors(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	res, err := e.svc.Run(context.Background(), "1", "trends", endpoint.RunRequest{Variables: map[string]any{"$browser": "Firefox"}, Debug: true})
	require.NoError(t, err)
	if res.Debug == nil || res.Debug.ArgCount == 0 || !strings.Contains(res.Debug.SQL, "?") || strings.Contains(res.Debug.SQL, "Firefox") || strings.Contains(res.Debug.SQL, "$pageview") {
		t.Fatalf("debug: %+v", res.Debug)
	}
	if res.Debug.RenderMS < 0 || res.Debug.ExecuteMS < 0 {
		t.Fatalf("negative timings: %+v", res.Debug)
	}

	failing := &errExecutor{}
	failing.saved.Store(true) // an insight's save runs no query
	bad := newEnv(t, func(c *endpoint.Config) { c.Executor = failing })
	bad.create(t, "trends", insightQuery(t, trendsByBrowser))
	_, err = bad.svc.Run(context.Background(), "1", "trends", endpoint.RunRequest{})
	wantError(t, err, http.StatusBadGateway, "execution_failed", "query execution failed", "")

	wrongRows := newEnv(t, func(c *endpoint.Config) {
		c.Executor = &fixedExecutor{res: &driver.Result{Rows: [][]any{{"not", "a", "trends", "row", "at all"}}}}
	})
	wrongRows.create(t, "trends", insightQuery(t, trendsByBrowser))
	_, err = wrongRows.svc.Run(context.Background(), "1", "trends", endpoint.RunRequest{})
	wantError(t, err, http.StatusBadGateway, "execution_failed", "query execution failed", "")
}

// TestInsightConcurrentRuns: runs share the cached decoded query; runs with
// different values at once each get their own filter (Apply copies).
func TestInsightConcurrentRuns(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	want := map[string]*insight.Result{}
	for _, b := range demo.Browsers {
		want[b] = e.runInsight(t, "trends", map[string]any{"$browser": b})
	}
	errs := make(chan error, 4*len(demo.Browsers))
	var wg sync.WaitGroup
	for range 4 {
		for _, b := range demo.Browsers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := e.svc.Run(context.Background(), "1", "trends", endpoint.RunRequest{Variables: map[string]any{"$browser": b}})
				// A run that joined another's has its series as JSON.
				if err == nil && !sameJSON(res.Results, want[b]) {
					err = fmt.Errorf("concurrent run with $browser=%s: %+v, want %+v", b, res.Results, want[b])
				}
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	all := e.runInsight(t, "trends", nil)
	require.Len(t, all.Series, len(demo.Browsers), "after filtered runs the unfiltered run has")
}
