package insight

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// The oracle recomputes insights in plain Go, straight from the events and
// their definitions, sharing no code with the package beyond the decoded
// query: its own interval arithmetic, property reading and filters.

func oracleBucket(iv engine.Bucket, t time.Time) time.Time {
	switch iv {
	case engine.Hour:
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, time.UTC)
	case engine.Week:
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		for d.Weekday() != time.Monday {
			d = d.Add(-24 * time.Hour)
		}
		return d
	case engine.Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func oracleBuckets(iv engine.Bucket, start, end time.Time) []time.Time {
	var out []time.Time
	for t := start; t.Before(end); {
		out = append(out, t)
		switch iv {
		case engine.Hour:
			t = t.Add(time.Hour)
		case engine.Week:
			t = t.AddDate(0, 0, 7)
		case engine.Month:
			t = t.AddDate(0, 1, 0)
		default:
			t = t.AddDate(0, 0, 1)
		}
	}
	return out
}

// oracleText is a property as text: "" when missing, null or empty.
func oracleText(e testEvent, key string) string {
	switch v := e.props[key].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

func oracleNumber(e testEvent, key string) (float64, bool) {
	f, ok := e.props[key].(float64)
	return f, ok
}

func oracleMatch(e testEvent, props []Property) bool {
	for _, p := range props {
		text := oracleText(e, p.Key)
		var ok bool
		switch p.Operator {
		case Exact:
			ok = slices.Contains(p.Values, text)
		case IsNot:
			ok = !slices.Contains(p.Values, text)
		case IContains:
			ok = strings.Contains(strings.ToLower(text), strings.ToLower(p.Values[0]))
		case NotIContains:
			ok = !strings.Contains(strings.ToLower(text), strings.ToLower(p.Values[0]))
		case GT, LT:
			n, isNum := oracleNumber(e, p.Key)
			ok = isNum && ((p.Operator == GT && n > p.Number) || (p.Operator == LT && n < p.Number))
		case IsSet:
			ok = text != ""
		case IsNotSet:
			ok = text == ""
		}
		if !ok {
			return false
		}
	}
	return true
}

func oracleKey(e testEvent, bds []Breakdown) string {
	values := make([]string, len(bds))
	for i, b := range bds {
		values[i] = oracleText(e, b.Property)
	}
	if len(bds) == 0 {
		return "null"
	}
	if len(bds) == 1 {
		out, _ := json.Marshal(values[0])
		return string(out)
	}
	out, _ := json.Marshal(values)
	return string(out)
}

// oracleRange is the date range [start, end) of absolute dates.
func oracleRange(iv engine.Bucket, from, to string) (time.Time, time.Time) {
	f, err := time.Parse("2006-01-02", from)
	if err != nil {
		panic(err)
	}
	t, err := time.Parse("2006-01-02", to)
	if err != nil {
		panic(err)
	}
	return oracleBucket(iv, f), t.AddDate(0, 0, 1)
}

type oracleSeries struct {
	data  []float64
	count float64
}

// oracleTrends computes series s of q, by breakdown key.
func oracleTrends(events []testEvent, q *Query, s Series, start, end time.Time) (map[string]oracleSeries, []time.Time) {
	buckets := oracleBuckets(q.Interval, start, end)
	type cell struct {
		n      int
		sum    float64
		nums   int
		min    float64
		max    float64
		actors map[string]bool
	}
	cells := map[string]map[time.Time]*cell{}
	for _, e := range events {
		if (s.Event != "" && e.event != s.Event) || e.ts.Before(start) || !e.ts.Before(end) || !oracleMatch(e, q.Properties) {
			continue
		}
		k := oracleKey(e, q.Breakdowns)
		if cells[k] == nil {
			cells[k] = map[time.Time]*cell{}
		}
		b := oracleBucket(q.Interval, e.ts)
		c := cells[k][b]
		if c == nil {
			c = &cell{actors: map[string]bool{}, min: math.Inf(1), max: math.Inf(-1)}
			cells[k][b] = c
		}
		c.n++
		c.actors[e.actor] = true
		if v, ok := oracleNumber(e, s.MathProperty); ok && s.MathProperty != "" {
			c.sum += v
			c.nums++
			c.min = math.Min(c.min, v)
			c.max = math.Max(c.max, v)
		}
	}
	if len(q.Breakdowns) == 0 && len(cells) == 0 {
		cells["null"] = map[time.Time]*cell{}
	}
	out := map[string]oracleSeries{}
	for k, byBucket := range cells {
		var os oracleSeries
		for _, b := range buckets {
			var v float64
			if c := byBucket[b]; c != nil {
				switch s.Math {
				case Total:
					v = float64(c.n)
				case DAU:
					v = float64(len(c.actors))
				case Sum:
					v = c.sum
				case Avg:
					if c.nums > 0 {
						v = c.sum / float64(c.nums)
					}
				case Min:
					if c.nums > 0 {
						v = c.min
					}
				case Max:
					if c.nums > 0 {
						v = c.max
					}
				}
			}
			os.data = append(os.data, v)
			os.count += v
		}
		out[k] = os
	}
	return out, buckets
}

// bySeriesKey indexes a single-series trends result by breakdown value.
func bySeriesKey(t *testing.T, res *Result) map[string]oracleSeries {
	out := map[string]oracleSeries{}
	for _, s := range res.Series {
		k, err := json.Marshal(s.BreakdownValue)
		require.NoError(t, err)
		_, dup := out[string(k)]
		require.False(t, dup, "series %s twice: dup is true", k)
		out[string(k)] = oracleSeries{data: s.Data, count: s.Count}
	}
	return out
}

func requireSeriesEqual(t *testing.T, want, got map[string]oracleSeries, msg string) {
	t.Helper()
	require.Len(t, got, len(want), "%s: %d series %v, want %d: %v", msg, len(got), keysOf(got), len(want), keysOf(want))
	for k, w := range want {
		g, ok := got[k]
		require.True(t, ok, "%s: missing series %s (got %v): ok is false", msg, k, keysOf(got))
		got := len(g.data)
		require.Len(t, w.data, got, "%v: len(g.data) = %d, want %d: %v", msg, got, len(w.data), g.data)
		for i := range w.data {
			delta := 1e-9 * math.Max(1, math.Abs(w.data[i]))
			require.True(t, (math.Abs(g.data[i]-w.data[i]) <= delta), "%s: series %s point %d = %v, want %v (within %v)", msg, k, i, g.data[i], w.data[i], delta)
		}
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestTrendsMatchOracle(t *testing.T) {
	events := genEvents(3000, 1)
	db := eventsDB(t, events)
	now := time.Date(2025, 6, 3, 12, 0, 0, 0, time.UTC)
	type rng struct{ from, to string }
	ranges := map[engine.Bucket]rng{
		engine.Hour:  {"2025-05-20", "2025-05-22"},
		engine.Day:   {"2025-04-10", "2025-05-20"},
		engine.Week:  {"2025-03-05", "2025-05-21"}, // both ends mid-week
		engine.Month: {"2025-02-15", "2025-05-31"}, // starts before the data
	}
	breakdowns := []string{
		``,
		`,"breakdownFilter":{"breakdown":"$browser","breakdown_type":"event"}`,
		`,"breakdownFilter":{"breakdowns":[{"property":"$browser","type":"event"},{"property":"$os"}]}`,
	}
	for _, m := range maths {
		for _, iv := range intervals {
			for bi, bd := range breakdowns {
				mathProp := ""
				if m.needsProperty() {
					mathProp = `,"math_property":"amount"`
				}
				r := ranges[iv]
				text := fmt.Sprintf(`{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"purchase","math":%q%s}],
					"interval":%q,"dateRange":{"date_from":%q,"date_to":%q}%s}`, m, mathProp, iv, r.from, r.to, bd)
				name := fmt.Sprintf("%s/%s/breakdowns%d", m, iv, bi)
				t.Run(name, func(t *testing.T) {
					q := mustDecode(t, text)
					res := run(t, db, q, now)
					start, end := oracleRange(iv, r.from, r.to)
					want, buckets := oracleTrends(events, q, q.Series[0], start, end)
					requireSeriesEqual(t, want, bySeriesKey(t, res), name)
					layout := "2006-01-02"
					if iv == engine.Hour {
						layout = "2006-01-02 15:04:05"
					}
					for _, s := range res.Series {
						require.Len(t, s.Days, len(buckets))
						got, want := s.Days[0], buckets[0].Format(layout)
						require.Equal(t, want, got, "s.Days[0]")
						require.Equal(t, buckets[len(buckets)-1].Format(layout), s.Days[len(s.Days)-1])
					}
				})
			}
		}
	}
}

func TestTrendsFiltersMatchOracle(t *testing.T) {
	events := genEvents(3000, 2)
	db := eventsDB(t, events)
	now := time.Date(2025, 6, 3, 12, 0, 0, 0, time.UTC)
	cases := map[string]string{
		"exact":           `[{"key":"$browser","value":"Chrome","operator":"exact","type":"event"}]`,
		"exact list":      `[{"key":"$browser","value":["Chrome","Safari"],"operator":"exact","type":"event"}]`,
		"exact default":   `[{"key":"$os","value":"Linux","type":"event"}]`,
		"exact number":    `[{"key":"amount","value":12,"operator":"exact","type":"event"}]`,
		"is_not":          `[{"key":"$browser","value":"Chrome","operator":"is_not","type":"event"}]`,
		"is_not list":     `[{"key":"$browser","value":["Chrome","Firefox"],"operator":"is_not","type":"event"}]`,
		"icontains":       `[{"key":"url","value":"PRICING","operator":"icontains","type":"event"}]`,
		"not_icontains":   `[{"key":"url","value":"example.com","operator":"not_icontains","type":"event"}]`,
		"gt":              `[{"key":"amount","value":40,"operator":"gt","type":"event"}]`,
		"lt text value":   `[{"key":"amount","value":"10.5","operator":"lt","type":"event"}]`,
		"is_set":          `[{"key":"$browser","value":"is_set","operator":"is_set","type":"event"}]`,
		"is_not_set":      `[{"key":"$browser","operator":"is_not_set","type":"event"}]`,
		"several":         `[{"key":"$browser","value":"Chrome","type":"event"},{"key":"$os","value":"Linux","operator":"is_not","type":"event"}]`,
		"and group":       `{"type":"AND","values":[{"type":"AND","values":[{"key":"$os","value":"Windows","type":"event"},{"key":"amount","operator":"is_set","type":"event"}]}]}`,
		"empty exact":     `[{"key":"$browser","value":"","operator":"exact","type":"event"}]`,
		"no match at all": `[{"key":"$browser","value":"Netscape","type":"event"}]`,
	}
	for name, props := range cases {
		t.Run(name, func(t *testing.T) {
			for _, bd := range []string{``, `,"breakdownFilter":{"breakdown":"$os"}`} {
				q := mustDecode(t, `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"},{"kind":"EventsNode","math":"sum","math_property":"amount"}],
					"interval":"day","dateRange":{"date_from":"2025-04-01","date_to":"2025-04-30"},"properties":`+props+bd+`}`)
				res := run(t, db, q, now)
				start, end := oracleRange(engine.Day, "2025-04-01", "2025-04-30")
				for i, s := range q.Series {
					want, _ := oracleTrends(events, q, s, start, end)
					got := &Result{Kind: Trends}
					prefix := s.label() + " - "
					for _, rs := range res.Series {
						if len(q.Breakdowns) == 0 {
							if rs.Label == s.label() {
								got.Series = append(got.Series, rs)
							}
						} else if strings.HasPrefix(rs.Label, prefix) {
							got.Series = append(got.Series, rs)
						}
					}
					requireSeriesEqual(t, want, bySeriesKey(t, got), fmt.Sprintf("%s series %d", name, i))
				}
			}
		})
	}
}

// oracleRetention computes the retention table of q by breakdown key:
// key -> cohort index -> offset -> users.
func oracleRetention(events []testEvent, q *Query, start, end time.Time) (map[string][][]float64, []time.Time) {
	buckets := oracleBuckets(q.Interval, start, end)
	index := map[time.Time]int{}
	for i, b := range buckets {
		index[b] = i
	}
	r := q.Retention
	type actorKey struct{ actor, key string }
	first := map[actorKey]time.Time{}
	cohorts := map[actorKey]map[int]bool{}
	returns := map[actorKey]map[int]bool{}
	inRange := func(ts time.Time) bool { return !ts.Before(start) && ts.Before(end) }
	for _, e := range events {
		if !oracleMatch(e, q.Properties) {
			continue
		}
		ak := actorKey{e.actor, oracleKey(e, q.Breakdowns)}
		if e.event == r.TargetEvent {
			if f, ok := first[ak]; !ok || e.ts.Before(f) {
				first[ak] = e.ts
			}
			if r.Type == Recurring && inRange(e.ts) {
				if cohorts[ak] == nil {
					cohorts[ak] = map[int]bool{}
				}
				cohorts[ak][index[oracleBucket(q.Interval, e.ts)]] = true
			}
		}
		if e.event == r.ReturningEvent && inRange(e.ts) {
			if returns[ak] == nil {
				returns[ak] = map[int]bool{}
			}
			returns[ak][index[oracleBucket(q.Interval, e.ts)]] = true
		}
	}
	if r.Type == FirstTime {
		for ak, f := range first {
			if inRange(f) {
				cohorts[ak] = map[int]bool{index[oracleBucket(q.Interval, f)]: true}
			}
		}
	}
	out := map[string][][]float64{}
	for ak, cs := range cohorts {
		table := out[ak.key]
		if table == nil {
			table = make([][]float64, len(buckets))
			for i := range table {
				table[i] = make([]float64, r.TotalIntervals)
			}
			out[ak.key] = table
		}
		for c := range cs {
			table[c][0]++
			for k := 1; k < r.TotalIntervals && c+k < len(buckets); k++ {
				if returns[ak][c+k] {
					table[c][k]++
				}
			}
		}
	}
	if len(q.Breakdowns) == 0 && len(out) == 0 {
		table := make([][]float64, len(buckets))
		for i := range table {
			table[i] = make([]float64, r.TotalIntervals)
		}
		out["null"] = table
	}
	return out, buckets
}

// retentionTables indexes a retention result like oracleRetention.
func retentionTables(t *testing.T, res *Result) map[string][][]float64 {
	out := map[string][][]float64{}
	for _, c := range res.Cohorts {
		k, err := json.Marshal(c.BreakdownValue)
		require.NoError(t, err)
		var row []float64
		for _, v := range c.Values {
			row = append(row, v.Count)
		}
		out[string(k)] = append(out[string(k)], row)
	}
	return out
}

func TestRetentionMatchesOracle(t *testing.T) {
	events := genEvents(3000, 3)
	db := eventsDB(t, events)
	now := time.Date(2025, 6, 3, 12, 0, 0, 0, time.UTC)
	ranges := map[string][2]string{
		"Day":   {"2025-04-20", "2025-05-10"},
		"Week":  {"2025-03-12", "2025-05-21"},
		"Month": {"2025-03-01", "2025-05-31"},
	}
	entities := [][2]string{{"signed_up", "$pageview"}, {"$pageview", "$pageview"}}
	for _, typ := range []RetentionType{FirstTime, Recurring} {
		for period, r := range ranges {
			for _, bd := range []string{``, `,"breakdownFilter":{"breakdown":"$browser"}`, `,"breakdownFilter":{"breakdowns":[{"property":"$os"},{"property":"$browser"}]}`} {
				for _, ent := range entities {
					text := fmt.Sprintf(`{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":%q,"type":"events"},"returningEntity":{"id":%q,"type":"events"},
						"period":%q,"totalIntervals":5,"retentionType":%q},"dateRange":{"date_from":%q,"date_to":%q},
						"properties":[{"key":"url","value":"cart","operator":"not_icontains","type":"event"}]%s}`, ent[0], ent[1], period, typ, r[0], r[1], bd)
					name := fmt.Sprintf("%s/%s/%s/%d", typ, period, ent[0], len(bd))
					t.Run(name, func(t *testing.T) {
						q := mustDecode(t, text)
						res := run(t, db, q, now)
						start, end := oracleRange(q.Interval, r[0], r[1])
						want, buckets := oracleRetention(events, q, start, end)
						got := retentionTables(t, res)
						require.Equal(t, want, got)
						require.Equal(t, buckets[0].Format(time.RFC3339), res.Cohorts[0].Date)
					})
				}
			}
		}
	}
}
