package insight

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// Result is the result of an insight, as PostHog's clients read it: a JSON
// array of Series for a trends query, of Cohort for a retention query, of
// Lifecycle for a lifecycle query.
type Result struct {
	Kind      Kind
	Series    []TrendsSeries
	Cohorts   []Cohort
	Lifecycle []LifecycleSeries
	// HasMore tells that a trends breakdown had more combinations of
	// values in some series than the breakdown limit keeps: they are
	// summed into its Other series, or left out with it when the query
	// hides it. It is PostHog's hasMore of a trends response, and not part
	// of the JSON array.
	HasMore bool
}

// MarshalJSON writes the array of the result's kind, never null.
func (r *Result) MarshalJSON() ([]byte, error) {
	if r.Kind == Lifecycle {
		if r.Lifecycle == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(r.Lifecycle)
	}
	if r.Kind == Retention {
		if r.Cohorts == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(r.Cohorts)
	}
	if r.Series == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(r.Series)
}

// TrendsSeries is one trends series: one query series for one combination of
// breakdown values.
type TrendsSeries struct {
	// Label is the event, or the breakdown value(s) ("none" for a property
	// that is not set, OtherLabel for the values past the breakdown
	// limit), prefixed by the event and " - " when the query has several
	// series.
	Label string `json:"label"`
	// BreakdownValue is nil without breakdowns, the value (a string) with
	// one, and the values in breakdown order ([]string) with several. A
	// property that is not set has the value "", which is also what a
	// breakdown variable takes to select it. The series of the values past
	// the breakdown limit has OtherBreakdownValue in place of each value;
	// no variable selects it.
	BreakdownValue any `json:"breakdown_value,omitempty"`
	// Count is the sum of Data.
	Count float64 `json:"count"`
	// Data holds one value per interval, 0 for an interval without events.
	Data []float64 `json:"data"`
	// Days are the interval starts, "YYYY-MM-DD" ("YYYY-MM-DD HH:MM:SS"
	// for hours).
	Days []string `json:"days"`
	// Labels are the interval starts as PostHog's charts label them.
	Labels []string `json:"labels"`
}

// Cohort is one row of a retention table: the users who started in one
// period and how many of them returned in each period after.
type Cohort struct {
	// Date is the start of the cohort's period (RFC 3339, UTC).
	Date string `json:"date"`
	// Label is "Day 0", "Week 3", ... by the cohort's index.
	Label string `json:"label"`
	// Values hold TotalIntervals counts: the cohort's size, then the users
	// who returned 1, 2, ... periods later (0 past the date range).
	Values []RetentionValue `json:"values"`
	// BreakdownValue is as in TrendsSeries.
	BreakdownValue any `json:"breakdown_value,omitempty"`
}

// RetentionValue is one cell of a retention table.
type RetentionValue struct {
	Count float64 `json:"count"`
	Label string  `json:"label"`
}

// Shape turns the rows of c.SQL (or of the read of a materialized table
// compiled by ReadMaterialized) into the result. Values may be of any type
// database/sql drivers return for these columns: integers, floats, text or
// bytes. Intervals without a row are 0.
//
// Trends series come in query series order, then by Count descending, then
// by breakdown values; retention breakdowns by cohort sizes descending, then
// by values, each with one Cohort per period of the date range; lifecycle
// statuses in PostHog's order (new, returning, resurrecting, dormant),
// always all four.
func (c *Compiled) Shape(rows [][]any) (*Result, error) {
	if c.q.Kind == Lifecycle {
		series, err := c.shapeLifecycle(rows)
		return &Result{Kind: Lifecycle, Lifecycle: series}, err
	}
	if c.q.Kind == Retention {
		cohorts, err := c.shapeRetention(rows)
		return &Result{Kind: Retention, Cohorts: cohorts}, err
	}
	series, more, err := c.shapeTrends(rows)
	return &Result{Kind: Trends, Series: series, HasMore: more}, err
}

func (c *Compiled) bucketIndex() map[string]int {
	idx := make(map[string]int, len(c.sp.buckets))
	for i, b := range c.sp.buckets {
		idx[b.Format(timeLayout)] = i
	}
	return idx
}

type seriesKey struct {
	series int
	values string // breakdown values joined by \x00
	other  bool   // the series folding the values past the breakdown limit
}

// shapeTrends returns the series of the rows, and whether the statement
// folded values past the breakdown limit.
func (c *Compiled) shapeTrends(rows [][]any) ([]TrendsSeries, bool, error) {
	more := false
	idx := c.bucketIndex()
	byKey := map[seriesKey][]float64{}
	var keys []seriesKey
	add := func(k seriesKey) []float64 {
		data := make([]float64, len(c.sp.buckets))
		byKey[k] = data
		keys = append(keys, k)
		return data
	}
	if len(c.q.Breakdowns) == 0 {
		// Without breakdowns every series is shown, even without events.
		for i := range c.q.Series {
			add(seriesKey{series: i})
		}
	}
	for r, row := range rows {
		cell, err := c.trendsCell(r, row, idx)
		if err != nil {
			return nil, false, err
		}
		if cell.key.other {
			more = true
			if c.q.HideOther {
				continue
			}
		}
		data, seen := byKey[cell.key]
		if !seen {
			data = add(cell.key)
		}
		data[cell.at] = cell.value
	}
	return c.trendsSeries(keys, byKey), more, nil
}

// trendsCell is one row of a trends result: the value of one series and
// combination of breakdown values in one interval.
type trendsCell struct {
	key   seriesKey
	at    int // index of the interval
	value float64
}

// trendsCell reads row r: series index, interval start, breakdown values,
// value, and with breakdowns whether the row is of the other series.
func (c *Compiled) trendsCell(r int, row []any, idx map[string]int) (trendsCell, error) {
	nb := len(c.q.Breakdowns)
	width := 3 + nb
	if nb > 0 {
		width++
	}
	if len(row) != width {
		return trendsCell{}, fmt.Errorf("insight: shape: row %d has %d columns, want %d", r, len(row), width)
	}
	s, err := toInt(row[0])
	if err != nil || s < 0 || s >= len(c.q.Series) {
		return trendsCell{}, fmt.Errorf("insight: shape: row %d: bad series %v", r, row[0])
	}
	b, err := toText(row[1])
	if err != nil {
		return trendsCell{}, fmt.Errorf("insight: shape: row %d: bucket: %w", r, err)
	}
	at, ok := idx[b]
	if !ok {
		return trendsCell{}, fmt.Errorf("insight: shape: row %d: bucket %q is not an interval of the date range", r, b)
	}
	values, err := breakdownValues(r, row[2:2+nb])
	if err != nil {
		return trendsCell{}, err
	}
	v, err := toFloat(row[2+nb])
	if err != nil {
		return trendsCell{}, fmt.Errorf("insight: shape: row %d: value: %w", r, err)
	}
	k := seriesKey{series: s, values: values}
	if nb > 0 {
		switch other, err := toInt(row[3+nb]); {
		case err != nil || other < 0 || other > 1:
			return trendsCell{}, fmt.Errorf("insight: shape: row %d: bad other flag %v", r, row[3+nb])
		case other == 1:
			k = seriesKey{series: s, other: true}
		}
	}
	return trendsCell{key: k, at: at, value: v}, nil
}

// breakdownValues reads the breakdown columns of row r, joined by \x00.
func breakdownValues(r int, cols []any) (string, error) {
	values := make([]string, len(cols))
	for j, col := range cols {
		var err error
		if values[j], err = toText(col); err != nil {
			return "", fmt.Errorf("insight: shape: row %d: breakdown %d: %w", r, j, err)
		}
	}
	return strings.Join(values, "\x00"), nil
}

// trendsSeries returns the series of keys in result order: by query
// series, then by Count descending, then by breakdown values, the other
// series last, as PostHog orders it.
func (c *Compiled) trendsSeries(keys []seriesKey, byKey map[seriesKey][]float64) []TrendsSeries {
	days, labels := c.dayLabels()
	type keyed struct {
		key seriesKey
		s   TrendsSeries
	}
	all := make([]keyed, 0, len(keys))
	for _, k := range keys {
		data := byKey[k]
		// Each series its own days and labels: a host may write to one.
		s := TrendsSeries{Data: data, Days: slices.Clone(days), Labels: slices.Clone(labels), Label: c.q.Series[k.series].label()}
		for _, v := range data {
			s.Count += v
		}
		if len(c.q.Breakdowns) > 0 {
			values := strings.Split(k.values, "\x00")
			s.BreakdownValue = breakdownValueOf(values)
			label := breakdownLabel(values)
			if k.other {
				s.BreakdownValue = otherValue(len(c.q.Breakdowns))
				label = OtherLabel
			}
			if len(c.q.Series) > 1 {
				label = s.Label + " - " + label
			}
			s.Label = label
		}
		all = append(all, keyed{k, s})
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.key.series != b.key.series {
			return a.key.series < b.key.series
		}
		if a.key.other != b.key.other {
			return b.key.other
		}
		if a.s.Count != b.s.Count {
			return a.s.Count > b.s.Count
		}
		return a.key.values < b.key.values
	})
	out := make([]TrendsSeries, len(all))
	for i, k := range all {
		out[i] = k.s
	}
	return out
}

func breakdownValueOf(values []string) any {
	if len(values) == 1 {
		return values[0]
	}
	return values
}

// otherValue is the breakdown_value of the other series: PostHog's label,
// once per breakdown when there are several.
func otherValue(breakdowns int) any {
	if breakdowns == 1 {
		return OtherBreakdownValue
	}
	values := make([]string, breakdowns)
	for i := range values {
		values[i] = OtherBreakdownValue
	}
	return values
}

// breakdownLabel is PostHog's label of breakdown values: joined by "::",
// "none" for a value that is not set (what PostHog's trends runner names
// an empty value; its clients show "None (i.e. no value)" for the null
// value of its own SQL, which here is "", the value a breakdown variable
// takes to select it).
func breakdownLabel(values []string) string {
	parts := make([]string, len(values))
	for i, v := range values {
		if v == "" {
			v = "none"
		}
		parts[i] = v
	}
	return strings.Join(parts, "::")
}

// dayLabels formats the buckets as PostHog does.
func (c *Compiled) dayLabels() (days, labels []string) {
	days = make([]string, len(c.sp.buckets))
	labels = make([]string, len(c.sp.buckets))
	for i, b := range c.sp.buckets {
		switch c.q.Interval {
		case engine.Hour:
			days[i] = b.Format(timeLayout)
			labels[i] = b.Format("2-Jan 15:04")
		case engine.Month:
			days[i] = b.Format("2006-01-02")
			labels[i] = b.Format("Jan 2006")
		default:
			days[i] = b.Format("2006-01-02")
			labels[i] = b.Format("2-Jan-2006")
		}
	}
	return days, labels
}

func (c *Compiled) shapeRetention(rows [][]any) ([]Cohort, error) {
	idx := c.bucketIndex()
	total := c.q.Retention.TotalIntervals
	tables := map[string]*retentionTable{}
	var keys []string
	newTable := func(k string) *retentionTable {
		t := &retentionTable{counts: make([][]float64, len(c.sp.buckets))}
		for i := range t.counts {
			t.counts[i] = make([]float64, total)
		}
		tables[k] = t
		keys = append(keys, k)
		return t
	}
	if len(c.q.Breakdowns) == 0 {
		newTable("")
	}
	for r, row := range rows {
		cell, err := c.retentionCell(r, row, idx)
		if err != nil {
			return nil, err
		}
		if cell.offset < 0 || cell.offset >= total {
			continue
		}
		t, ok := tables[cell.key]
		if !ok {
			t = newTable(cell.key)
		}
		t.counts[cell.cohort][cell.offset] = cell.count
		if cell.offset == 0 {
			t.size += cell.count
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if tables[keys[i]].size != tables[keys[j]].size {
			return tables[keys[i]].size > tables[keys[j]].size
		}
		return keys[i] < keys[j]
	})
	return c.cohorts(keys, tables), nil
}

// retentionTable holds the counts of one combination of breakdown values.
type retentionTable struct {
	counts [][]float64 // [cohort][offset]
	size   float64
}

// retentionCell is one row of a retention result: how many users of one
// cohort returned offset periods later.
type retentionCell struct {
	key            string // breakdown values joined by \x00
	cohort, offset int
	count          float64
}

// retentionCell reads row r: breakdown values, cohort period, return
// period, count.
func (c *Compiled) retentionCell(r int, row []any, idx map[string]int) (retentionCell, error) {
	nb := len(c.q.Breakdowns)
	if len(row) != 3+nb {
		return retentionCell{}, fmt.Errorf("insight: shape: row %d has %d columns, want %d", r, len(row), 3+nb)
	}
	key, err := breakdownValues(r, row[:nb])
	if err != nil {
		return retentionCell{}, err
	}
	var at [2]int
	for j := range 2 {
		b, err := toText(row[nb+j])
		if err != nil {
			return retentionCell{}, fmt.Errorf("insight: shape: row %d: period: %w", r, err)
		}
		i, ok := idx[b]
		if !ok {
			return retentionCell{}, fmt.Errorf("insight: shape: row %d: period %q is not in the date range", r, b)
		}
		at[j] = i
	}
	n, err := toFloat(row[nb+2])
	if err != nil {
		return retentionCell{}, fmt.Errorf("insight: shape: row %d: count: %w", r, err)
	}
	return retentionCell{key: key, cohort: at[0], offset: at[1] - at[0], count: n}, nil
}

// cohorts returns the retention table of each key, one Cohort per period
// of the date range.
func (c *Compiled) cohorts(keys []string, tables map[string]*retentionTable) []Cohort {
	total := c.q.Retention.TotalIntervals
	unit := map[engine.Bucket]string{engine.Day: "Day", engine.Week: "Week", engine.Month: "Month", engine.Hour: "Hour"}[c.q.Interval]
	labels := make([]string, max(total, len(c.sp.buckets)))
	for i := range labels {
		labels[i] = unit + " " + strconv.Itoa(i)
	}
	out := make([]Cohort, 0, len(keys)*len(c.sp.buckets))
	for _, k := range keys {
		var bv any
		if len(c.q.Breakdowns) > 0 {
			bv = breakdownValueOf(strings.Split(k, "\x00"))
		}
		for i, b := range c.sp.buckets {
			values := make([]RetentionValue, total)
			for o := range values {
				values[o] = RetentionValue{Count: tables[k].counts[i][o], Label: labels[o]}
			}
			out = append(out, Cohort{
				Date:           b.Format(time.RFC3339),
				Label:          labels[i],
				Values:         values,
				BreakdownValue: bv,
			})
		}
	}
	return out
}

// toText reads a text column as drivers return it.
func toText(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	case nil:
		return "", nil
	case time.Time:
		return v.UTC().Format(timeLayout), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	}
	return "", fmt.Errorf("unexpected %T", v)
}

// toFloat reads a numeric column; NULL (an aggregate over no value) is 0.
func toFloat(v any) (float64, error) {
	switch v := v.(type) {
	case int64:
		return float64(v), nil
	case float64:
		return v, nil
	case nil:
		return 0, nil
	case int:
		return float64(v), nil
	case int32:
		return float64(v), nil
	case uint64:
		return float64(v), nil
	case float32:
		return float64(v), nil
	case string, []byte:
		s, _ := toText(v)
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	}
	return 0, fmt.Errorf("unexpected %T", v)
}

func toInt(v any) (int, error) {
	f, err := toFloat(v)
	if err != nil || f != float64(int(f)) {
		return 0, fmt.Errorf("not a whole number: %v", v)
	}
	return int(f), nil
}
