package insight

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

func TestDecodeTrends(t *testing.T) {
	q := mustDecode(t, `{
		"kind": "TrendsQuery", "version": 2,
		"series": [
			{"kind": "EventsNode", "event": "$pageview", "name": "$pageview", "math": "dau"},
			{"kind": "EventsNode", "event": "purchase", "custom_name": "Revenue", "math": "sum", "math_property": "amount", "math_property_type": "event_properties"},
			{"kind": "EventsNode", "event": null}
		],
		"interval": "week",
		"dateRange": {"date_from": "-30d", "date_to": null, "explicitDate": false},
		"properties": [
			{"key": "$browser", "value": ["Chrome", "Safari"], "operator": "exact", "type": "event"},
			{"key": "amount", "value": "10", "operator": "gt", "type": "event"},
			{"key": "$os", "value": "is_set", "operator": "is_set", "type": "event"}
		],
		"breakdownFilter": {"breakdown": "country", "breakdown_type": "event"},
		"trendsFilter": {"display": "ActionsLineGraph", "showLegend": true},
		"filterTestAccounts": false,
		"compareFilter": {"compare": false}
	}`)
	got, want := q, (&Query{
		Kind: Trends,
		Series: []Series{
			{Event: "$pageview", Math: DAU},
			{Event: "purchase", Math: Sum, MathProperty: "amount"},
			{Math: Total},
		},
		Interval:  engine.Week,
		DateRange: DateRange{From: "-30d"},
		Properties: []Property{
			{Key: "$browser", Operator: Exact, Values: []string{"Chrome", "Safari"}},
			{Key: "amount", Operator: GT, Number: 10},
			{Key: "$os", Operator: IsSet},
		},
		Breakdowns: []Breakdown{{Property: "country"}},
	})
	require.Equal(t, want, got, "q")
}

// TestDecodeBreakdownLimit: breakdown_limit and
// breakdown_hide_other_aggregation are read as PostHog writes them; absent
// or null, the limit is 0 (the default) and the other series shows.
func TestDecodeBreakdownLimit(t *testing.T) {
	const head = `{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}],"breakdownFilter":`
	for _, c := range []struct {
		filter string
		limit  int
		hide   bool
	}{
		{`{"breakdown":"a"}`, 0, false},
		{`{"breakdown":"a","breakdown_limit":null,"breakdown_hide_other_aggregation":null}`, 0, false},
		{`{"breakdown":"a","breakdown_limit":5}`, 5, false},
		{`{"breakdowns":[{"property":"a"},{"property":"b"}],"breakdown_limit":1,"breakdown_hide_other_aggregation":true}`, 1, true},
		{`{"breakdown":"a","breakdown_limit":1000000,"breakdown_hide_other_aggregation":false}`, 1000000, false},
		// Without a breakdown the fields are read and change nothing.
		{`{"breakdown_limit":10}`, 10, false},
	} {
		q := mustDecode(t, head+c.filter+`}`)
		got, want := q.BreakdownLimit, c.limit
		require.Equal(t, want, got, "%v: q.BreakdownLimit", c.filter)
		if got, want := q.HideOther, c.hide; got != want {
			t.Fatalf("%v: q.HideOther = %v, want %v", c.filter, got, want)
		}
	}
	q := mustDecode(t, `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"a","type":"events"},"returningEntity":{"id":"b","type":"events"}},
		"breakdownFilter":{"breakdown":"a","breakdown_limit":null,"breakdown_hide_other_aggregation":true}}`)
	require.Equal(t, 0, q.BreakdownLimit)
	require.False(t, q.HideOther, "a retention query has no other series: q.HideOther is true")
}

func TestDecodeRetention(t *testing.T) {
	q := mustDecode(t, `{
		"kind": "RetentionQuery",
		"retentionFilter": {
			"targetEntity": {"id": "signed_up", "type": "events", "name": "signed_up"},
			"returningEntity": {"id": "$pageview", "type": "events", "kind": "EventsNode"},
			"period": "Week", "totalIntervals": 8, "retentionType": "retention_first_time",
			"display": "ActionsTable", "cumulative": false
		},
		"dateRange": {"date_from": "2025-01-01", "date_to": "2025-03-31"},
		"properties": {"type": "AND", "values": [{"type": "AND", "values": [{"key": "plan", "value": "pro", "type": "event"}]}]},
		"breakdownFilter": {"breakdowns": [{"property": "$os", "type": "event"}, {"property": "$browser"}]}
	}`)
	got, want := q, (&Query{
		Kind:       Retention,
		Interval:   engine.Week,
		DateRange:  DateRange{From: "2025-01-01", To: "2025-03-31"},
		Properties: []Property{{Key: "plan", Operator: Exact, Values: []string{"pro"}}},
		Breakdowns: []Breakdown{{Property: "$os"}, {Property: "$browser"}},
		Retention:  RetentionFilter{TargetEvent: "signed_up", ReturningEvent: "$pageview", Type: FirstTime, TotalIntervals: 8},
	})
	require.Equal(t, want, got, "q")

	q = mustDecode(t, `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"a","type":"events"},"returningEntity":{"id":"b","type":"events"}}}`)
	require.Equal(t, RetentionFilter{TargetEvent: "a", ReturningEvent: "b", Type: Recurring, TotalIntervals: 7}, q.Retention)
	require.Equal(t, engine.Day, q.Interval)
}

func TestDecodeRefuses(t *testing.T) {
	const series = `"series":[{"kind":"EventsNode","event":"e"}]`
	trends := func(extra string) string { return `{"kind":"TrendsQuery",` + series + extra + `}` }
	retention := func(filter, extra string) string {
		return `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"a","type":"events"},"returningEntity":{"id":"b","type":"events"}` + filter + `}` + extra + `}`
	}
	cases := []struct {
		name, json, want string
	}{
		{"not JSON", `{"kind":`, `insight: malformed JSON`},
		{"not an object", `[1]`, `insight: must be a JSON object, got an array`},
		{"no kind", `{}`, `insight: kind: required (TrendsQuery, RetentionQuery or LifecycleQuery)`},
		{"other kind", `{"kind":"FunnelsQuery"}`, `insight: kind: unsupported kind "FunnelsQuery" (supported: TrendsQuery, RetentionQuery, LifecycleQuery)`},
		{"kind not a string", `{"kind":1}`, `insight: kind: must be a string, got a number 1`},
		{"no series", `{"kind":"TrendsQuery"}`, `insight: series: required: at least one EventsNode`},
		{"empty series", `{"kind":"TrendsQuery","series":[]}`, `insight: series: required`},
		{"actions node", `{"kind":"TrendsQuery","series":[{"kind":"ActionsNode","id":1}]}`, `insight: series[0].kind: unsupported series kind "ActionsNode" (supported: EventsNode)`},
		{"math", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","math":"weekly_active"}]}`, `insight: series[0].math: unsupported math "weekly_active" (supported: total, dau, sum, avg, min, max)`},
		{"median", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","math":"median","math_property":"x"}]}`, `unsupported math "median"`},
		{"sum without property", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","math":"sum"}]}`, `insight: series[0].math_property: required for math "sum"`},
		{"property with total", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","math_property":"x"}]}`, `insight: series[0].math_property: math "total" takes no property`},
		{"hogql math", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","math":"total","math_hogql":"count()"}]}`, `series[0].math_hogql: not supported`},
		{"series filters", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","properties":[{"key":"a","value":"b"}]}]}`, `series[0].properties: series-level property filters are not supported`},
		{"unknown series field", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","limit":3}]}`, `insight: series[0].limit: unknown or unsupported field`},
		{"field in other case", `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","Math":"sum"}]}`, `insight: series[0].Math: unknown or unsupported field`},
		{"interval", trends(`,"interval":"minute"`), `insight: interval: unsupported interval "minute" (supported: hour, day, week, month)`},
		{"formula", trends(`,"trendsFilter":{"formula":"A+B"}`), `insight: trendsFilter.formula: formulas are not supported`},
		{"pie", trends(`,"trendsFilter":{"display":"ActionsPie"}`), `insight: trendsFilter.display: unsupported display "ActionsPie"`},
		{"compare", trends(`,"compareFilter":{"compare":true}`), `insight: compareFilter: comparing to a previous period is not supported`},
		{"test accounts", trends(`,"filterTestAccounts":true`), `insight: filterTestAccounts: filtering test accounts is not supported`},
		{"sampling", trends(`,"samplingFactor":0.1`), `insight: samplingFactor: sampling is not supported`},
		{"unknown top-level field", trends(`,"funnelsFilter":{}`), `insight: funnelsFilter: unknown or unsupported field`},
		{"person property", trends(`,"properties":[{"key":"email","value":"a","type":"person"}]`), `insight: properties[0].type: unsupported property type "person" (supported: event)`},
		{"cohort property", trends(`,"properties":[{"key":"id","value":3,"type":"cohort"}]`), `unsupported property type "cohort"`},
		{"operator", trends(`,"properties":[{"key":"a","value":"b","operator":"regex","type":"event"}]`), `insight: properties[0].operator: unsupported operator "regex" (supported: exact, is_not, icontains, not_icontains, gt, lt, is_set, is_not_set)`},
		{"no key", trends(`,"properties":[{"value":"b","type":"event"}]`), `insight: properties[0].key: required`},
		{"no value", trends(`,"properties":[{"key":"a","operator":"exact","type":"event"}]`), `insight: properties[0].value: required for operator "exact"`},
		{"empty list", trends(`,"properties":[{"key":"a","value":[],"type":"event"}]`), `insight: properties[0].value: must not be an empty list`},
		{"object value", trends(`,"properties":[{"key":"a","value":{"x":1},"type":"event"}]`), `insight: properties[0].value: must be a string or a number, got an object`},
		{"gt text", trends(`,"properties":[{"key":"a","value":"ten","operator":"gt","type":"event"}]`), `insight: properties[0].value: must be a number, got a string "ten"`},
		{"empty icontains", trends(`,"properties":[{"key":"a","value":"","operator":"icontains","type":"event"}]`), `must not be empty for operator "icontains"`},
		{"or group", trends(`,"properties":{"type":"OR","values":[{"key":"a","value":"b"},{"key":"c","value":"d"}]}`), `insight: properties.type: OR property groups are not supported`},
		{"quote in key", trends(`,"properties":[{"key":"a\"b","value":"x"}]`), `insight: properties[0].key: property name "a\"b" contains a quote or backslash, which is not supported`},
		{"control char in key", trends(`,"breakdownFilter":{"breakdown":"a\nb"}`), `contains a control character`},
		{"cohort breakdown", trends(`,"breakdownFilter":{"breakdown":[3],"breakdown_type":"cohort"}`), `insight: breakdownFilter.breakdown: must be the name of an event property`},
		{"person breakdown", trends(`,"breakdownFilter":{"breakdown":"email","breakdown_type":"person"}`), `insight: breakdownFilter.breakdown_type: unsupported breakdown type "person" (supported: event)`},
		{"person breakdowns", trends(`,"breakdownFilter":{"breakdowns":[{"property":"email","type":"person"}]}`), `insight: breakdownFilter.breakdowns[0].type: unsupported breakdown type "person" (supported: event)`},
		{"both breakdown forms", trends(`,"breakdownFilter":{"breakdown":"a","breakdowns":[{"property":"b"}]}`), `give either breakdown or breakdowns, not both`},
		{"duplicate breakdown", trends(`,"breakdownFilter":{"breakdowns":[{"property":"b"},{"property":"b"}]}`), `breakdown property "b" appears twice`},
		{"breakdown named date_from", trends(`,"breakdownFilter":{"breakdown":"date_from"}`), `collides with the date variable`},
		{"four breakdowns", trends(`,"breakdownFilter":{"breakdowns":[{"property":"a"},{"property":"b"},{"property":"c"},{"property":"d"}]}`), `at most 3 breakdowns, got 4`},
		{"breakdown limit 0", trends(`,"breakdownFilter":{"breakdown":"a","breakdown_limit":0}`), `insight: breakdownFilter.breakdown_limit: must be at least 1, got 0`},
		{"breakdown limit negative", trends(`,"breakdownFilter":{"breakdown":"a","breakdown_limit":-3}`), `insight: breakdownFilter.breakdown_limit: must be at least 1, got -3`},
		{"breakdown limit fraction", trends(`,"breakdownFilter":{"breakdown":"a","breakdown_limit":2.5}`), `insight: breakdownFilter.breakdown_limit: must be a whole number, got a number 2.5`},
		{"breakdown limit text", trends(`,"breakdownFilter":{"breakdown":"a","breakdown_limit":"5"}`), `insight: breakdownFilter.breakdown_limit: must be a whole number, got a string "5"`},
		{"breakdown limit huge", trends(`,"breakdownFilter":{"breakdown":"a","breakdown_limit":1e400}`), `breakdownFilter.breakdown_limit: must be a whole number`},
		{"hide other not a boolean", trends(`,"breakdownFilter":{"breakdown":"a","breakdown_hide_other_aggregation":"yes"}`), `insight: breakdownFilter.breakdown_hide_other_aggregation: must be a boolean, got a string "yes"`},
		{"retention breakdown limit", retention(``, `,"breakdownFilter":{"breakdown":"a","breakdown_limit":5}`), `insight: breakdownFilter.breakdown_limit: not supported by a RetentionQuery (every breakdown value is returned)`},
		{"histogram", trends(`,"breakdownFilter":{"breakdowns":[{"property":"a","histogram_bin_count":10}]}`), `breakdowns[0].histogram_bin_count: not supported`},
		{"histogram filter", trends(`,"breakdownFilter":{"breakdown":"a","breakdown_histogram_bin_count":10}`), `breakdownFilter.breakdown_histogram_bin_count: histogram bins are not supported`},
		{"bad date", trends(`,"dateRange":{"date_from":"yesterday"}`), `insight: dateRange.date_from: "yesterday" is not a date`},
		{"bad relative date", trends(`,"dateRange":{"date_from":"-7q"}`), `insight: dateRange.date_from: "-7q" is not a relative date`},
		{"date as number", trends(`,"dateRange":{"date_to":20250101}`), `insight: dateRange.date_to: must be a string, got a number 20250101`},
		{"date range field", trends(`,"dateRange":{"date_from":"-7d","timezone":"UTC"}`), `insight: dateRange.timezone: unknown or unsupported field`},
		{"no retention filter", `{"kind":"RetentionQuery"}`, `insight: retentionFilter: required`},
		{"no target", `{"kind":"RetentionQuery","retentionFilter":{}}`, `insight: retentionFilter.targetEntity: required`},
		{"action entity", `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":1,"type":"actions"},"returningEntity":{"id":"b","type":"events"}}}`, `insight: retentionFilter.targetEntity.type: unsupported entity type "actions" (supported: events)`},
		{"entity without id", `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"type":"events"},"returningEntity":{"id":"b","type":"events"}}}`, `insight: retentionFilter.targetEntity.id: required: the event name`},
		{"hour period", retention(`,"period":"Hour"`, ``), `insight: retentionFilter.period: unsupported period "Hour": period must be one of Day, Week, Month`},
		{"lower-case period", retention(`,"period":"day"`, ``), `insight: retentionFilter.period: unsupported period "day": period must be one of Day, Week, Month`},
		{"retention type", retention(`,"retentionType":"retention"`, ``), `unsupported retention type "retention"`},
		{"intervals", retention(`,"totalIntervals":0`, ``), `insight: retentionFilter.totalIntervals: must be between 1 and 100, got 0`},
		{"intervals fraction", retention(`,"totalIntervals":2.5`, ``), `insight: retentionFilter.totalIntervals: must be a whole number, got a number 2.5`},
		{"cumulative", retention(`,"cumulative":true`, ``), `insight: retentionFilter.cumulative: cumulative retention is not supported`},
		{"minimum occurrences", retention(`,"minimumOccurrences":3`, ``), `minimumOccurrences: a minimum number of occurrences is not supported`},
		{"retention series", retention(``, `,"series":[]`), `insight: series: unknown or unsupported field`},
		{"retention group", retention(``, `,"aggregation_group_type_index":0`), `insight: aggregation_group_type_index: group aggregation is not supported`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { requireRefused(t, c.json, c.want) })
	}
}

func TestCompileRefusesEmptyRange(t *testing.T) {
	now := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, text := range []string{
		`{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}],"dateRange":{"date_from":"2025-05-10","date_to":"2025-05-01"}}`,
		`{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}],"interval":"hour","dateRange":{"date_from":"2020-01-01"}}`,
	} {
		_, err := Compile(mustDecode(t, text), engine.SQLite, now)
		var e *Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "dateRange", e.Field)
	}
}

func FuzzDecode(f *testing.F) {
	seeds := []string{
		twoBreakdowns,
		`{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"a","type":"events"},"returningEntity":{"id":"b","type":"events"},"period":"Week","totalIntervals":4},"breakdownFilter":{"breakdown":"$os"}}`,
		`{"kind":"TrendsQuery","series":[{"kind":"EventsNode","math":"avg","math_property":"amount"}],"interval":"hour","dateRange":{"date_from":"-2d"},"properties":{"type":"AND","values":[{"type":"OR","values":[{"key":"a","value":["x",1],"operator":"is_not"}]}]}}`,
		`{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"e"}],"properties":[{"key":"a","value":"1e999","operator":"gt"}]}`,
		`{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}],"dateRange":{"date_from":"-1mStart","date_to":"9999-12-31T23:59:59Z"}}`,
		`{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}],"dateRange":{"date_from":"0001-01-01"}}`,
		`{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}],"breakdownFilter":{"breakdowns":[{"property":"a"},{"property":"b"}],"breakdown_limit":3,"breakdown_hide_other_aggregation":true}}`,
		`{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}],"breakdownFilter":{"breakdown":"a","breakdown_limit":-9223372036854775808}}`,
		`{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"e"}],"interval":"hour","dateRange":{"date_from":"-2d"},"lifecycleFilter":{"toggledLifecycles":["new"]}}`,
		`{"kind":"TrendsQuery","series":null}`, `[]`, `null`, `"x"`, `{"kind":"TrendsQuery","series":[null]}`,
		`{"properties":[[[[[{}]]]]]}`, `{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}],"properties":{"values":{"values":{"values":{"values":{"values":{"values":[]}}}}}}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	now := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := Decode(data)
		if err != nil {
			v := q
			require.Nil(t, v, "q")
			require.ErrorIs(t, err, ErrInvalid)
			msg := err.Error()
			require.True(t, strings.HasPrefix(msg, "insight: "), "%v: strings.HasPrefix(msg, \"insight: \") is false", msg)
			require.True(t, (utf8.ValidString(msg) || !utf8.Valid(data)), "%v: utf8.ValidString(msg) || !utf8.Valid(data) is false", msg)
			return
		}
		// A decoded query has its variables, and compiles (or names the
		// date range that it cannot) in every dialect.
		require.NotNil(t, q, "q is nil")
		a, b := q.BreakdownLimit, 0
		require.True(t, (a >= b), "q.BreakdownLimit = %v, want >= %v", a, b)
		_ = q.Variables(false)
		for _, d := range []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse} {
			c, err := Compile(q, d, now)
			if err != nil {
				require.ErrorIs(t, err, ErrInvalid)
				continue
			}
			v := c.SQL
			require.NotEqual(t, "", v, "c.SQL is empty")
		}
	})
}
