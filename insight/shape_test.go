package insight

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

func compiled(t *testing.T, text string) *Compiled {
	t.Helper()
	c, err := Compile(mustDecode(t, text), engine.SQLite, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	return c
}

func shapeJSON(t *testing.T, c *Compiled, rows [][]any) string {
	t.Helper()
	res, err := c.Shape(rows)
	require.NoError(t, err)
	out, err := json.Marshal(res)
	require.NoError(t, err)
	return string(out)
}

func TestShapeTrends(t *testing.T) {
	twoSeries := compiled(t, `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"a"},{"kind":"EventsNode"}],
		"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-02"}}`)
	// Without breakdowns every series shows, even with no rows; values of
	// any driver type are read.
	got := shapeJSON(t, twoSeries, [][]any{
		{int64(0), "2025-05-02 00:00:00", []byte("2")},
		{float64(0), []byte("2025-05-01 00:00:00"), int64(1)},
	})
	require.JSONEq(t, `[
		{"label":"a","count":3,"data":[1,2],"days":["2025-05-01","2025-05-02"],"labels":["1-May-2025","2-May-2025"]},
		{"label":"All events","count":0,"data":[0,0],"days":["2025-05-01","2025-05-02"],"labels":["1-May-2025","2-May-2025"]}]`, got, "shape = %s, want %s", got, `[
		{"label":"a","count":3,"data":[1,2],"days":["2025-05-01","2025-05-02"],"labels":["1-May-2025","2-May-2025"]},
		{"label":"All events","count":0,"data":[0,0],"days":["2025-05-01","2025-05-02"],"labels":["1-May-2025","2-May-2025"]}]`)

	broken := compiled(t, `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"a"},{"kind":"EventsNode","event":"b"}],
		"interval":"month","dateRange":{"date_from":"2025-04-01","date_to":"2025-05-31"},
		"breakdownFilter":{"breakdowns":[{"property":"x"},{"property":"y"}]}}`)
	// Series in query order, then by count descending, then by values;
	// labels carry the event when there are several series.
	got = shapeJSON(t, broken, [][]any{
		{int64(1), "2025-04-01 00:00:00", "p", "q", 2.5, int64(0)},
		{int64(0), "2025-05-01 00:00:00", "p", "q", int64(1), int64(0)},
		{int64(0), "2025-04-01 00:00:00", "", "q", int64(1), int64(0)},
		{int64(0), "2025-05-01 00:00:00", "p", nil, int64(5), int64(0)},
	})
	require.JSONEq(t, `[
		{"label":"a - p::none","breakdown_value":["p",""],"count":5,"data":[0,5],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]},
		{"label":"a - none::q","breakdown_value":["","q"],"count":1,"data":[1,0],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]},
		{"label":"a - p::q","breakdown_value":["p","q"],"count":1,"data":[0,1],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]},
		{"label":"b - p::q","breakdown_value":["p","q"],"count":2.5,"data":[2.5,0],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]}]`, got, "shape = %s, want %s", got, `[
		{"label":"a - p::none","breakdown_value":["p",""],"count":5,"data":[0,5],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]},
		{"label":"a - none::q","breakdown_value":["","q"],"count":1,"data":[1,0],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]},
		{"label":"a - p::q","breakdown_value":["p","q"],"count":1,"data":[0,1],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]},
		{"label":"b - p::q","breakdown_value":["p","q"],"count":2.5,"data":[2.5,0],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]}]`)

	// The other series (rows flagged 1, their values '') comes last in its
	// query series, whatever its count, named as PostHog names it.
	got = shapeJSON(t, broken, [][]any{
		{int64(0), "2025-05-01 00:00:00", "p", "q", int64(1), int64(0)},
		{int64(0), "2025-04-01 00:00:00", "", "", int64(3), int64(1)},
		{int64(0), "2025-05-01 00:00:00", []byte(""), nil, "4", []byte("1")},
		{int64(1), "2025-05-01 00:00:00", "", "", 2.0, 1.0},
	})
	require.JSONEq(t, `[
		{"label":"a - p::q","breakdown_value":["p","q"],"count":1,"data":[0,1],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]},
		{"label":"a - Other (i.e. all remaining values)","breakdown_value":["$$_posthog_breakdown_other_$$","$$_posthog_breakdown_other_$$"],"count":7,"data":[3,4],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]},
		{"label":"b - Other (i.e. all remaining values)","breakdown_value":["$$_posthog_breakdown_other_$$","$$_posthog_breakdown_other_$$"],"count":2,"data":[0,2],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]}]`, got, "shape = %s, want %s", got, `[
		{"label":"a - p::q","breakdown_value":["p","q"],"count":1,"data":[0,1],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]},
		{"label":"a - Other (i.e. all remaining values)","breakdown_value":["$$_posthog_breakdown_other_$$","$$_posthog_breakdown_other_$$"],"count":7,"data":[3,4],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]},
		{"label":"b - Other (i.e. all remaining values)","breakdown_value":["$$_posthog_breakdown_other_$$","$$_posthog_breakdown_other_$$"],"count":2,"data":[0,2],"days":["2025-04-01","2025-05-01"],"labels":["Apr 2025","May 2025"]}]`)

	hourly := compiled(t, `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"a"}],"interval":"hour",
		"dateRange":{"date_from":"2025-05-01T22:00:00Z","date_to":"2025-05-01T23:00:00Z"},"breakdownFilter":{"breakdown":"x"}}`)
	got = shapeJSON(t, hourly, [][]any{{int64(0), "2025-05-01 23:00:00", "v", nil, int64(0)}, {int64(0), "2025-05-01 22:00:00", "", nil, int64(1)}})
	require.JSONEq(t, `[{"label":"v","breakdown_value":"v","count":0,"data":[0,0],"days":["2025-05-01 22:00:00","2025-05-01 23:00:00"],"labels":["1-May 22:00","1-May 23:00"]},
		{"label":"Other (i.e. all remaining values)","breakdown_value":"$$_posthog_breakdown_other_$$","count":0,"data":[0,0],"days":["2025-05-01 22:00:00","2025-05-01 23:00:00"],"labels":["1-May 22:00","1-May 23:00"]}]`, got, "shape = %s, want %s", got, `[{"label":"v","breakdown_value":"v","count":0,"data":[0,0],"days":["2025-05-01 22:00:00","2025-05-01 23:00:00"],"labels":["1-May 22:00","1-May 23:00"]},
		{"label":"Other (i.e. all remaining values)","breakdown_value":"$$_posthog_breakdown_other_$$","count":0,"data":[0,0],"days":["2025-05-01 22:00:00","2025-05-01 23:00:00"],"labels":["1-May 22:00","1-May 23:00"]}]`)

	// Hidden, the other series is dropped and still tells that values
	// were left out; without other rows nothing was.
	hidden := compiled(t, `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"a"}],"interval":"hour",
		"dateRange":{"date_from":"2025-05-01T22:00:00Z","date_to":"2025-05-01T23:00:00Z"},"breakdownFilter":{"breakdown":"x","breakdown_hide_other_aggregation":true}}`)
	res, err := hidden.Shape([][]any{{int64(0), "2025-05-01 23:00:00", "v", int64(2), int64(0)}, {int64(0), "2025-05-01 22:00:00", "", int64(5), int64(1)}})
	require.NoError(t, err)
	require.True(t, res.HasMore, "res.HasMore is false")
	require.Len(t, res.Series, 1)
	require.Equal(t, "v", res.Series[0].BreakdownValue)
	res, err = hidden.Shape([][]any{{int64(0), "2025-05-01 23:00:00", "v", int64(2), int64(0)}})
	require.NoError(t, err)
	require.False(t, res.HasMore, "res.HasMore is true")

	// No rows with breakdowns: an empty array, not null.
	require.Equal(t, `[]`, shapeJSON(t, broken, nil))
}

func TestShapeRetention(t *testing.T) {
	c := compiled(t, `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"a","type":"events"},"returningEntity":{"id":"a","type":"events"},
		"period":"Week","totalIntervals":2},"dateRange":{"date_from":"2025-05-05","date_to":"2025-05-18"},"breakdownFilter":{"breakdown":"x"}}`)
	got := shapeJSON(t, c, [][]any{
		{"p", "2025-05-05 00:00:00", "2025-05-05 00:00:00", int64(1)},
		{"p", "2025-05-12 00:00:00", "2025-05-12 00:00:00", int64(1)},
		{"q", "2025-05-05 00:00:00", "2025-05-05 00:00:00", int64(3)},
		{"q", "2025-05-05 00:00:00", "2025-05-12 00:00:00", int64(1)},
	})
	require.JSONEq(t, `[
		{"date":"2025-05-05T00:00:00Z","label":"Week 0","values":[{"count":3,"label":"Week 0"},{"count":1,"label":"Week 1"}],"breakdown_value":"q"},
		{"date":"2025-05-12T00:00:00Z","label":"Week 1","values":[{"count":0,"label":"Week 0"},{"count":0,"label":"Week 1"}],"breakdown_value":"q"},
		{"date":"2025-05-05T00:00:00Z","label":"Week 0","values":[{"count":1,"label":"Week 0"},{"count":0,"label":"Week 1"}],"breakdown_value":"p"},
		{"date":"2025-05-12T00:00:00Z","label":"Week 1","values":[{"count":1,"label":"Week 0"},{"count":0,"label":"Week 1"}],"breakdown_value":"p"}]`, got, "shape = %s, want %s", got, `[
		{"date":"2025-05-05T00:00:00Z","label":"Week 0","values":[{"count":3,"label":"Week 0"},{"count":1,"label":"Week 1"}],"breakdown_value":"q"},
		{"date":"2025-05-12T00:00:00Z","label":"Week 1","values":[{"count":0,"label":"Week 0"},{"count":0,"label":"Week 1"}],"breakdown_value":"q"},
		{"date":"2025-05-05T00:00:00Z","label":"Week 0","values":[{"count":1,"label":"Week 0"},{"count":0,"label":"Week 1"}],"breakdown_value":"p"},
		{"date":"2025-05-12T00:00:00Z","label":"Week 1","values":[{"count":1,"label":"Week 0"},{"count":0,"label":"Week 1"}],"breakdown_value":"p"}]`)
	require.Equal(t, `[]`, shapeJSON(t, c, nil))
}

func TestShapeRefusesForeignRows(t *testing.T) {
	trends := compiled(t, `{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}],"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-02"}}`)
	broken := compiled(t, `{"kind":"TrendsQuery","series":[{"kind":"EventsNode"}],"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-02"},
		"breakdownFilter":{"breakdown":"x"}}`)
	retention := compiled(t, `{"kind":"RetentionQuery","retentionFilter":{"targetEntity":{"id":"a","type":"events"},"returningEntity":{"id":"a","type":"events"}},
		"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-02"}}`)
	cases := []struct {
		c    *Compiled
		row  []any
		want string
	}{
		{trends, []any{int64(0), "2025-05-01 00:00:00"}, "row 0 has 2 columns, want 3"},
		{trends, []any{int64(1), "2025-05-01 00:00:00", int64(1)}, "bad series 1"},
		{trends, []any{0.5, "2025-05-01 00:00:00", int64(1)}, "bad series 0.5"},
		{trends, []any{int64(0), "2025-04-30 00:00:00", int64(1)}, `bucket "2025-04-30 00:00:00" is not an interval of the date range`},
		{trends, []any{int64(0), true, int64(1)}, "unexpected bool"},
		{trends, []any{int64(0), "2025-05-01 00:00:00", "many"}, `"many" is not a number`},
		{broken, []any{int64(0), "2025-05-01 00:00:00", "v", int64(1)}, "row 0 has 4 columns, want 5"},
		{broken, []any{int64(0), "2025-05-01 00:00:00", "v", int64(1), int64(2)}, "bad other flag 2"},
		{broken, []any{int64(0), "2025-05-01 00:00:00", "v", int64(1), "yes"}, "bad other flag yes"},
		{retention, []any{"2025-05-01 00:00:00", "2026-01-01 00:00:00", int64(1)}, `period "2026-01-01 00:00:00" is not in the date range`},
		{retention, []any{"2025-05-01 00:00:00", "2025-05-01 00:00:00", struct{}{}}, "unexpected struct {}"},
	}
	for _, c := range cases {
		_, err := c.c.Shape([][]any{c.row})
		require.ErrorContains(t, err, c.want)
	}
}

// TestSeriesShareNothing: each series of an answer has its own days,
// labels and (lifecycle) action, so that a host writing to one series
// changes no other.
func TestSeriesShareNothing(t *testing.T) {
	trends := compiled(t, `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"a"}],"interval":"day",
		"dateRange":{"date_from":"2025-05-01","date_to":"2025-05-02"},"breakdownFilter":{"breakdown":"x"}}`)
	res, err := trends.Shape([][]any{{int64(0), "2025-05-01 00:00:00", "v", int64(2), int64(0)}, {int64(0), "2025-05-02 00:00:00", "w", int64(1), int64(0)}})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(res.Series), 2)
	day, label := res.Series[1].Days[0], res.Series[1].Labels[0]
	res.Series[0].Days[0], res.Series[0].Labels[0] = "written", "written"
	require.Equal(t, day, res.Series[1].Days[0], "writing series 0 changed series 1")
	require.Equal(t, label, res.Series[1].Labels[0], "writing series 0 changed series 1")

	lifecycle := compiled(t, `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"a"}],"interval":"day",
		"dateRange":{"date_from":"2025-05-03","date_to":"2025-05-04"}}`)
	res, err = lifecycle.Shape(nil)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(res.Lifecycle), 2, "lifecycle series %+v", res.Lifecycle)
	require.NotNil(t, res.Lifecycle[1].Action.ID, "lifecycle series %+v", res.Lifecycle)
	day, label, id := res.Lifecycle[1].Days[0], res.Lifecycle[1].Labels[0], *res.Lifecycle[1].Action.ID
	res.Lifecycle[0].Days[0], res.Lifecycle[0].Labels[0], *res.Lifecycle[0].Action.ID = "written", "written", "written"
	require.Equal(t, day, res.Lifecycle[1].Days[0], "writing series 0 changed series 1")
	require.Equal(t, label, res.Lifecycle[1].Labels[0], "writing series 0 changed series 1")
	require.Equal(t, id, *res.Lifecycle[1].Action.ID, "writing series 0 changed series 1")
}
