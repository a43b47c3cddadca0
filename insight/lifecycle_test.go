package insight

import (
	"fmt"
	"github.com/endpointkit/endpointkit/sql/tree"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// oracleNext is the start of the interval after the one starting at b,
// found by walking hours until the bucket changes.
func oracleNext(iv engine.Bucket, b time.Time) time.Time {
	t := b
	for oracleBucket(iv, t).Equal(b) {
		t = t.Add(time.Hour)
	}
	return t
}

// oracleLifecycle computes the lifecycle of q's series over the intervals
// from start to end by its definitions: status -> interval -> users
// (dormant negative). First seen is the interval of an actor's first event
// of any kind; the interval before an interval is the one holding the
// second before it.
func oracleLifecycle(events []testEvent, q *Query, start, end time.Time) (map[Status][]float64, []time.Time) {
	buckets := oracleBuckets(q.Interval, start, end)
	from := oracleBucket(q.Interval, buckets[0].Add(-time.Second))
	to := oracleNext(q.Interval, buckets[len(buckets)-1])
	first := map[string]time.Time{}
	active := map[string]map[time.Time]bool{}
	for _, e := range events {
		if f, ok := first[e.actor]; !ok || e.ts.Before(f) {
			first[e.actor] = e.ts
		}
		ev := q.Series[0].Event
		if (ev != "" && e.event != ev) || e.ts.Before(from) || !e.ts.Before(to) || !oracleMatch(e, q.Properties) {
			continue
		}
		if active[e.actor] == nil {
			active[e.actor] = map[time.Time]bool{}
		}
		active[e.actor][oracleBucket(q.Interval, e.ts)] = true
	}
	out := map[Status][]float64{}
	for _, st := range statuses {
		out[st] = make([]float64, len(buckets))
	}
	for actor, periods := range active {
		for i, b := range buckets {
			before := periods[oracleBucket(q.Interval, b.Add(-time.Second))]
			switch {
			case periods[b] && oracleBucket(q.Interval, first[actor]).Equal(b):
				out[New][i]++
			case periods[b] && before:
				out[Returning][i]++
			case periods[b]:
				out[Resurrecting][i]++
			case before:
				out[Dormant][i]--
			}
		}
	}
	return out, buckets
}

// lifecycleData indexes a lifecycle result by status, checking its shape.
func lifecycleData(t *testing.T, res *Result) map[Status][]float64 {
	t.Helper()
	require.Equal(t, Lifecycle, res.Kind)
	require.Len(t, res.Lifecycle, 4)
	out := map[Status][]float64{}
	for i, s := range res.Lifecycle {
		got, want := s.Status, statuses[i]
		require.Equal(t, want, got, "PostHog's order: s.Status")
		var sum float64
		for _, v := range s.Data {
			sum += v
		}
		require.Equal(t, sum, s.Count)
		require.Len(t, s.Days, len(s.Data))
		require.Len(t, s.Labels, len(s.Data))
		out[s.Status] = s.Data
	}
	return out
}

func TestLifecycleMatchesOracle(t *testing.T) {
	events := genEvents(3000, 4)
	db := eventsDB(t, events)
	now := time.Date(2025, 6, 3, 12, 0, 0, 0, time.UTC)
	ranges := map[engine.Bucket][2]string{
		engine.Hour:  {"2025-05-20", "2025-05-21"},
		engine.Day:   {"2025-04-10", "2025-05-20"},
		engine.Week:  {"2025-03-05", "2025-05-21"}, // both ends mid-week: the last week counts whole
		engine.Month: {"2025-02-15", "2025-05-31"}, // starts before the data
	}
	filters := []string{``, `,"properties":[{"key":"$browser","value":["Chrome","Safari"],"operator":"exact","type":"event"}]`}
	for _, iv := range intervals {
		for _, event := range []string{`"event":"purchase"`, `"event":"$pageview"`, `"event":null`} {
			for fi, filter := range filters {
				r := ranges[iv]
				text := fmt.Sprintf(`{"kind":"LifecycleQuery","series":[{"kind":"EventsNode",%s}],"interval":%q,
					"dateRange":{"date_from":%q,"date_to":%q}%s}`, event, iv, r[0], r[1], filter)
				t.Run(fmt.Sprintf("%s/%s/%d", iv, event, fi), func(t *testing.T) {
					q := mustDecode(t, text)
					res := run(t, db, q, now)
					start, end := oracleRange(iv, r[0], r[1])
					want, buckets := oracleLifecycle(events, q, start, end)
					require.Equal(t, want, lifecycleData(t, res))
					seen := 0.0
					for _, st := range statuses {
						for _, v := range want[st] {
							seen += v * v
						}
					}
					if v := seen; v <= 0 {
						t.Fatalf("the range has users: seen = %v, want > 0", v)
					}
					require.Equal(t, buckets[0].Format("2006-01-02"), res.Lifecycle[0].Days[0][:10])
				})
			}
		}
	}
	// Hours over three months: interval numbers past 255, more than SQLite
	// would take as terms of a calendar's compound SELECT (500).
	q := mustDecode(t, `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"hour",
		"dateRange":{"date_from":"2025-03-01","date_to":"2025-05-31"}}`)
	start, end := oracleRange(engine.Hour, "2025-03-01", "2025-05-31")
	want, buckets := oracleLifecycle(events, q, start, end)
	require.Len(t, buckets, 92*24)
	require.Equal(t, want, lifecycleData(t, run(t, db, q, now)))
}

// TestLifecycleMaxIntervals: a range of more than MaxLifecycleIntervals
// intervals is refused, naming dateRange; the most runs.
func TestLifecycleMaxIntervals(t *testing.T) {
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	q := mustDecode(t, `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode"}],"interval":"hour","dateRange":{"date_from":"2025-01-27","date_to":"2025-05-31"}}`)
	c, err := Compile(q, engine.ClickHouse, now)
	require.NoError(t, err)
	require.Len(t, c.sp.buckets, MaxLifecycleIntervals)
	a, b := len(c.SQL), 200<<10
	require.True(t, (a < b), "within ClickHouse's max_query_size, with room: len(c.SQL) = %v, want < %v", a, b)
	q.DateRange.From = "2025-01-26"
	_, err = Compile(q, engine.SQLite, now)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "dateRange", e.Field)
	require.Contains(t, e.Reason, "at most 3000 intervals, this range 3024 hours")
}

// TestLifecycleStatuses follows a few users by hand: their statuses are
// PostHog's, and they are what the oracle computes.
func TestLifecycleStatuses(t *testing.T) {
	day := func(d, h int) time.Time { return time.Date(2025, 5, d, h, 0, 0, 0, time.UTC) }
	ev := func(actor, event string, ts time.Time) testEvent {
		return testEvent{event: event, actor: actor, ts: ts, props: map[string]any{}}
	}
	events := []testEvent{
		// a: first seen on the 2nd, active the 2nd, 3rd, 5th: new, returning, dormant, resurrecting, dormant.
		ev("a", "x", day(2, 1)), ev("a", "x", day(2, 5)), ev("a", "x", day(3, 23)), ev("a", "x", day(5, 0)),
		// b: first seen on the 1st with another event (before the range),
		// then x on the 3rd: resurrecting, though it is b's first x.
		ev("b", "other", day(1, 10)), ev("b", "x", day(3, 10)), ev("b", "x", day(4, 10)),
		// c: active the day before the range and its first day: returning on the 2nd.
		ev("c", "x", day(1, 12)), ev("c", "x", day(2, 12)),
		// d: active the day before the range only: dormant on the 2nd.
		ev("d", "x", day(1, 8)),
		// e: first seen with another event on the 4th, x on the 4th: new.
		ev("e", "other", day(4, 1)), ev("e", "x", day(4, 2)),
		// f: after the range.
		ev("f", "x", day(7, 2)),
	}
	db := eventsDB(t, events)
	q := mustDecode(t, `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"x"}],"interval":"day",
		"dateRange":{"date_from":"2025-05-02","date_to":"2025-05-06"}}`)
	res := run(t, db, q, day(10, 0))
	want := map[Status][]float64{
		//           2   3   4   5   6
		New:          {1, 0, 1, 0, 0},      // a, e
		Returning:    {1, 1, 1, 0, 0},      // c; a; b
		Resurrecting: {0, 1, 0, 1, 0},      // b; a
		Dormant:      {-1, -1, -1, -2, -1}, // d; c; a; b, e; a
	}
	require.Equal(t, want, lifecycleData(t, res))
	got, _ := oracleLifecycle(events, q, day(2, 0), day(7, 0))
	require.Equal(t, want, got, "the oracle")
	s := res.Lifecycle[3]
	require.Equal(t, "x - dormant", s.Label)
	require.Equal(t, float64(-6.0), s.Count)
	require.Equal(t, []string{"2025-05-02", "2025-05-03", "2025-05-04", "2025-05-05", "2025-05-06"}, s.Days)
	require.Equal(t, "2-May-2025", s.Labels[0])
	if got, want := *s.Action.ID, "x"; got != want {
		t.Fatalf("*s.Action.ID = %q, want %q", got, want)
	}
	requireSameJSON(t, res, res)
}

func TestDecodeLifecycle(t *testing.T) {
	q := mustDecode(t, `{
		"kind": "LifecycleQuery", "version": 1,
		"series": [{"kind": "EventsNode", "event": "$pageview", "name": "$pageview", "math": "total"}],
		"interval": "week",
		"dateRange": {"date_from": "-8w", "date_to": null},
		"properties": [{"key": "$browser", "value": "Chrome", "operator": "exact", "type": "event"}],
		"lifecycleFilter": {"showLegend": true, "showValuesOnSeries": false, "stacked": true, "toggledLifecycles": ["new", "dormant"]},
		"breakdownFilter": null, "dataColorTheme": 1, "filterTestAccounts": false
	}`)
	got, want := q, (&Query{
		Kind:       Lifecycle,
		Series:     []Series{{Event: "$pageview", Math: Total}},
		Interval:   engine.Week,
		DateRange:  DateRange{From: "-8w"},
		Properties: []Property{{Key: "$browser", Operator: Exact, Values: []string{"Chrome"}}},
	})
	require.Equal(t, want, got, "q")
	require.Equal(t, []string{"date_from", "date_to"}, q.Variables(false))
	v := q.Variables(true)
	require.True(t, (len(v) == 0), "a materialized lifecycle takes no variable: q.Variables(true) = %v, want it empty", v)

	q = mustDecode(t, `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode"}]}`)
	require.Equal(t, engine.Day, q.Interval)
	require.Equal(t, []Series{{Math: Total}}, q.Series)
}

func TestDecodeLifecycleRefuses(t *testing.T) {
	lifecycle := func(extra string) string {
		return `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"e"}]` + extra + `}`
	}
	cases := []struct{ name, json, want string }{
		{"no series", `{"kind":"LifecycleQuery"}`, `insight: series: required: exactly one EventsNode, got 0`},
		{"two series", `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode"},{"kind":"EventsNode"}]}`, `insight: series: required: exactly one EventsNode, got 2`},
		{"series not an array", `{"kind":"LifecycleQuery","series":{}}`, `insight: series: must be an array, got an object`},
		{"actions node", `{"kind":"LifecycleQuery","series":[{"kind":"ActionsNode","id":3}]}`, `insight: series[0].kind: unsupported series kind "ActionsNode" (supported: EventsNode)`},
		{"math", `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","math":"dau"}]}`, `insight: series[0].math: unsupported math "dau": a lifecycle counts users (supported: total)`},
		{"series filters", `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","properties":[{"key":"a","value":"b"}]}]}`, `insight: series[0].properties: series-level property filters are not supported`},
		{"interval", lifecycle(`,"interval":"minute"`), `insight: interval: unsupported interval "minute" (supported: hour, day, week, month)`},
		{"breakdown", lifecycle(`,"breakdownFilter":{"breakdown":"$browser"}`), `insight: breakdownFilter: breakdowns are not part of a LifecycleQuery`},
		{"toggled status", lifecycle(`,"lifecycleFilter":{"toggledLifecycles":["new","sleeping"]}`), `insight: lifecycleFilter.toggledLifecycles[1]: unknown lifecycle status a string "sleeping" (supported: new, returning, resurrecting, dormant)`},
		{"toggled not a list", lifecycle(`,"lifecycleFilter":{"toggledLifecycles":"new"}`), `insight: lifecycleFilter.toggledLifecycles: must be an array, got a string "new"`},
		{"lifecycle filter field", lifecycle(`,"lifecycleFilter":{"showMean":true}`), `insight: lifecycleFilter.showMean: unknown or unsupported field`},
		{"lifecycle filter not an object", lifecycle(`,"lifecycleFilter":[]`), `insight: lifecycleFilter: must be a JSON object, got an array`},
		{"retention filter", lifecycle(`,"retentionFilter":{}`), `insight: retentionFilter: unknown or unsupported field`},
		{"trends filter", lifecycle(`,"trendsFilter":{}`), `insight: trendsFilter: unknown or unsupported field`},
		{"group", lifecycle(`,"aggregation_group_type_index":0`), `insight: aggregation_group_type_index: group aggregation is not supported`},
		{"sampling", lifecycle(`,"samplingFactor":0.1`), `insight: samplingFactor: sampling is not supported`},
		{"test accounts", lifecycle(`,"filterTestAccounts":true`), `insight: filterTestAccounts: filtering test accounts is not supported`},
		{"bad date", lifecycle(`,"dateRange":{"date_from":"yesterday"}`), `insight: dateRange.date_from: "yesterday" is not a date`},
		{"person property", lifecycle(`,"properties":[{"key":"email","value":"a","type":"person"}]`), `insight: properties[0].type: unsupported property type "person" (supported: event)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { requireRefused(t, c.json, c.want) })
	}
}

// TestLifecycleApply: date_from and date_to move the range of an inline
// run; a materialized read refuses them, and anything else.
func TestLifecycleApply(t *testing.T) {
	q := mustDecode(t, `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"x"}],"dateRange":{"date_from":"2025-05-01"}}`)
	applied, err := q.Apply(map[string]any{"date_from": "2025-05-03", "date_to": "2025-05-04"})
	require.NoError(t, err)
	require.Equal(t, DateRange{From: "2025-05-03", To: "2025-05-04"}, applied.DateRange)
	got, want := q.DateRange.From, "2025-05-01"
	require.Equal(t, want, got, "the saved query is left alone: q.DateRange.From")
	c, err := Compile(applied, engine.SQLite, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	res, err := c.Shape(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"2025-05-03", "2025-05-04"}, res.Lifecycle[0].Days)
	_, err = q.Apply(map[string]any{"$browser": "Chrome"})
	if err := err; err == nil || err.Error() != "Unknown variable(s): $browser" {
		t.Fatalf("error = %v, want %q", err, "Unknown variable(s): $browser")
	}
	_, err = ReadMaterialized(q, engine.SQLite, "t", map[string]any{"date_from": "2025-05-03"}, time.Now())
	if err := err; err == nil || err.Error() != "Unknown variable(s): date_from" {
		t.Fatalf("error = %v, want %q", err, "Unknown variable(s): date_from")
	}
}

// TestLifecycleShapeRefuses: rows the statement cannot return fail Shape.
func TestLifecycleShapeRefuses(t *testing.T) {
	q := mustDecode(t, `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode"}],"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-03"}}`)
	c, err := Compile(q, engine.SQLite, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	for _, rows := range [][][]any{
		{{int64(0), int64(1)}},
		{{int64(4), int64(1), int64(3)}},
		{{int64(0), int64(0), int64(3)}},
		{{int64(0), int64(4), int64(3)}},
		{{int64(0), int64(1), "many"}},
	} {
		_, err := c.Shape(rows)
		require.Error(t, err, "%v: got no error, want one", rows)
	}
	res, err := c.Shape([][]any{{int64(3), int64(2), int64(5)}, {"0", []byte("3"), 2.0}})
	require.NoError(t, err)
	got, want := res.Lifecycle[3].Data, ([]float64{0, -5, 0})
	require.Equal(t, want, got, "dormant is negative: res.Lifecycle[3].Data")
	require.Equal(t, []float64{0, 0, 2}, res.Lifecycle[0].Data)
	v := res.Lifecycle[0].Action.ID
	require.Nil(t, v, "all events: a null id: res.Lifecycle[0].Action.ID")
	require.Equal(t, "All events - new", res.Lifecycle[0].Label)
}

// TestLifecycleTenant: with a tenant, both reads of the events keep to its
// rows: another project's earlier event of the same distinct_id does not
// make a user seen before, nor do its events count as activity.
func TestLifecycleTenant(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2025, 5, d, 12, 0, 0, 0, time.UTC) }
	db := eventsDB(t, []testEvent{
		{event: "x", actor: "u", ts: day(3), props: map[string]any{}},
		{event: "x", actor: "v", ts: day(2), props: map[string]any{}},
	})
	for i, r := range []struct {
		actor string
		ts    time.Time
	}{{"u", day(1)}, {"v", day(3)}, {"w", day(3)}} {
		_, err := db.Exec(`INSERT INTO events (project_id, uuid, event, distinct_id, timestamp, properties) VALUES ('2', ?, 'x', ?, ?, '{}')`,
			fmt.Sprintf("p2-%d", i), r.actor, r.ts.Format("2006-01-02 15:04:05"))
		require.NoError(t, err)
	}
	q := mustDecode(t, `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"x"}],"dateRange":{"date_from":"2025-05-02","date_to":"2025-05-03"}}`)
	q.Tenant = &tree.Confinement{Table: tree.Table{Parts: []string{"events"}, TenantColumn: "project_id"}, Tenant: "1"}
	want := map[Status][]float64{
		New:          {1, 1}, // v; u, first seen on the 3rd in project 1
		Returning:    {0, 0},
		Resurrecting: {0, 0},
		Dormant:      {0, -1}, // v: project 2's event on the 3rd is not project 1's activity
	}
	require.Equal(t, want, lifecycleData(t, run(t, db, q, day(10))))
	q.Tenant = nil
	if got, want := lifecycleData(t, run(t, db, q, day(10))), want; reflect.DeepEqual(got, want) {
		t.Fatalf("the data set tells a leak: lifecycleData(t, run(t, db, q, day(10))) = %+v, want anything else", got)
	}
}
