package materialize

import (
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dailyDistinct is users and events per day of one country over a range:
// a one-bucket query with a DISTINCT aggregate (BenchmarkPropertyDistinct's).
const dailyDistinct = `SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users, count(*) AS n
FROM events WHERE json_extract(properties, '$.country') = {variables.country}
AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY day ORDER BY day`

var rangeTypes = map[string]variable.Type{"from": variable.Date, "to": variable.Date}

// TestSummarizedChosen: a one-bucket plan with a DISTINCT aggregate and
// no live tail stores its groups summarized, on every engine's spelling of
// the day: the pre-compute query keeps no grain and the stored part of the
// read counts no DISTINCT; so does one with a live tail on the range's
// column by the day. A live tail by the month or on another column, an OR
// of variables, a group that spans buckets, and a query with no DISTINCT
// aggregate keep the table as it was.
func TestSummarizedChosen(t *testing.T) {
	for _, c := range []struct {
		eng engine.Engine
		day string
	}{
		{engine.SQLite, "date(timestamp)"}, {engine.MySQL, "date(timestamp)"},
		{engine.PostgreSQL, "date(timestamp)"}, {engine.ClickHouse, "toDate(timestamp, 'UTC')"},
	} {
		q := `SELECT ` + c.day + ` AS day, count(DISTINCT distinct_id) AS users, avg(DISTINCT amount) AS a, count(*) AS n FROM events
			WHERE event = {variables.e} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY day ORDER BY day`
		plan := mustPlan(t, q, Options{Engine: c.eng, Types: rangeTypes})
		require.True(t, plan.summarized, "%s: not summarized", c.eng.Name())
		assert.NotContains(t, plan.Precompute(), "_d0", "%s: the pre-compute query keeps a grain", c.eng.Name())
		assert.Contains(t, plan.Precompute(), "count(DISTINCT", "%s: the pre-compute query counts no distinct users", c.eng.Name())
		assert.NotContains(t, plan.oneBucket.head, "DISTINCT", "%s: the stored part counts distinct values", c.eng.Name())

		tail := mustPlan(t, q, Options{Engine: c.eng, Types: rangeTypes, TailColumn: "timestamp"})
		assert.True(t, tail.summarized, "%s: a live tail's plan by the day is not summarized", c.eng.Name())
		bucket, ok := tail.TailCutBucket()
		assert.True(t, ok && bucket == engine.Day, "%s: the summarized tail's cut bucket is %q, %v", c.eng.Name(), bucket, ok)
		_, ok = plan.TailCutBucket()
		assert.False(t, ok, "%s: a plan without a live tail has a cut bucket", c.eng.Name())
		months := map[string]engine.Bucket{"from": engine.Month, "to": engine.Month}
		monthly := mustPlan(t, q, Options{Engine: c.eng, Types: rangeTypes, TailColumn: "timestamp", Buckets: months})
		assert.False(t, monthly.summarized, "%s: a live tail's plan by the month is summarized", c.eng.Name())
		_, ok = monthly.TailCutBucket()
		assert.False(t, ok, "%s: a live tail's plan by the month, read from its build instant, has a cut bucket", c.eng.Name())
		require.NotNil(t, monthly.oneBucket, "%s: the live tail's plan by the month is not one-bucket", c.eng.Name())
		assert.Contains(t, monthly.Precompute(), "_d0", "%s: a live tail's table by the month lost its grain", c.eng.Name())
		other := mustPlan(t, q, Options{Engine: c.eng, Types: rangeTypes, TailColumn: "created_at"})
		assert.False(t, other.summarized, "%s: a live tail on a column no range compares is summarized", c.eng.Name())
	}
	for name, q := range map[string]string{
		"or of variables": `SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users FROM events
			WHERE (event = {variables.e} OR distinct_id = {variables.u}) AND timestamp >= {variables.from} GROUP BY day`,
		"week of a month bucket": `SELECT date_trunc('week', timestamp) AS week, count(DISTINCT distinct_id) AS users FROM events
			WHERE timestamp >= {variables.from} GROUP BY week`,
		"no distinct": `SELECT date(timestamp) AS day, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY day`,
	} {
		opts := Options{Engine: engine.PostgreSQL, Types: rangeTypes}
		if name == "week of a month bucket" {
			opts.Buckets = map[string]engine.Bucket{"from": engine.Month}
		}
		plan := mustPlan(t, q, opts)
		assert.False(t, plan.summarized, "%s: summarized", name)
	}
}

// TestSummarizedReadEqualsInline: the summarized table of dailyDistinct
// holds one row per day and country (not one per day, country and user),
// and its reads, whole and paged, equal the inline query's answer: over
// aligned and unaligned ranges, a range inside one day, an empty one, one
// past the data, and a country that matches no event.
func TestSummarizedReadEqualsInline(t *testing.T) {
	db := openDemo(t, 20000)
	plan := mustPlan(t, dailyDistinct, Options{Engine: engine.SQLite, Types: rangeTypes})
	require.True(t, plan.summarized, "not summarized")
	refreshInto(t, db, plan, "stored")
	stored := query(t, db, `SELECT count(*) FROM "stored"`, nil).rows[0][0]
	groups := query(t, db, `SELECT count(*) FROM (SELECT DISTINCT date(timestamp), json_extract(properties, '$.country') FROM events)`, nil).rows[0][0]
	require.Equal(t, groups, stored, "stored rows: want one per day and country")

	tpl, err := placeholder.Compile(dailyDistinct)
	require.NoError(t, err)
	merged := 0
	for _, r := range [][2]variable.Timestamp{
		{demoAt(-30, 0), demoAt(-1, 0)},
		{demoAt(-30, 9*time.Hour+30*time.Minute), demoAt(0, 15*time.Hour+15*time.Minute)},
		{demoAt(-20, 23*time.Hour+59*time.Minute), demoAt(-10, time.Second)},
		{demoAt(-5, 6*time.Hour), demoAt(-5, 18*time.Hour)}, // inside one day
		{demoAt(-5, 6*time.Hour), demoAt(-5, 6*time.Hour)},  // empty
		{demoAt(-400, 0), demoAt(400, 0)},
		{demoAt(3, 0), demoAt(30, 0)}, // past the data
	} {
		for _, country := range []string{"US", "DE", "ZZ"} {
			values := map[string]any{"country": country, "from": r[0], "to": r[1]}
			q, args, err := tpl.Render(engine.SQLite, values)
			require.NoError(t, err)
			want := query(t, db, q, args)
			rq, rargs, err := plan.Read("stored", values)
			require.NoError(t, err)
			if strings.Contains(rq, "stored_parts") {
				merged++
			}
			got := query(t, db, rq, rargs)
			require.Equal(t, want, got, "values %v\nread: %s", values, rq)
			for _, pg := range [][2]int64{{3, 0}, {5, 2}, {100, 0}} {
				pq, pargs, err := plan.ReadPage("stored", values, pg[0], pg[1])
				require.NoError(t, err)
				page := want.rows[min(int(pg[1]), len(want.rows)):min(int(pg[0]+pg[1]), len(want.rows))]
				require.Equal(t, page, query(t, db, pq, pargs).rows, "values %v, page %v\nread: %s", values, pg, pq)
			}
		}
	}
	require.Positive(t, merged, "no read merged partial days")
}

// TestOneBucketOrOfVariablesEqualsInline: the stored rows of one day of a
// query whose variables are compared under an OR hold a user once per
// value of the OR's columns, so that a group is spread over several stored
// rows (a user of the event and of the country is in two): such a plan is
// not one-bucket, and its distinct users per day equal the inline query's.
// (A one-bucket read counted the user of two stored rows twice.)
func TestOneBucketOrOfVariablesEqualsInline(t *testing.T) {
	db := openDemo(t, 20000)
	q := `SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users, count(*) AS n FROM events
		WHERE (event = {variables.e} OR json_extract(properties, '$.country') = {variables.c})
		AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY day ORDER BY day`
	plan := mustPlan(t, q, Options{Engine: engine.SQLite, Types: rangeTypes})
	assert.Nil(t, plan.oneBucket, "an OR of variables is one-bucket")
	refreshInto(t, db, plan, "stored")
	tpl, err := placeholder.Compile(q)
	require.NoError(t, err)
	for _, from := range []time.Duration{0, 9 * time.Hour} {
		values := map[string]any{"e": "$pageview", "c": "US",
			"from": variable.Timestamp{Time: demo.End.AddDate(0, 0, -10).Add(from)}, "to": variable.Timestamp{Time: demo.End}}
		iq, args, err := tpl.Render(engine.SQLite, values)
		require.NoError(t, err)
		want := query(t, db, iq, args)
		require.NotEmpty(t, want.rows)
		rq, rargs, err := plan.Read("stored", values)
		require.NoError(t, err)
		require.Equal(t, want, query(t, db, rq, rargs), "values %v\nread: %s", values, rq)
	}
}

// TestSummarizedTailEqualsInline: with a live tail by the day, the
// summarized table is built as of mid-day, rows arrive after it, and every
// read, whole and paged, equals the inline query: the stored days before
// the build instant's, and that day and the newer ones from the source.
// Ranges end before the build instant's day, in it, and after the late
// rows, and start off a day's boundary or on one.
func TestSummarizedTailEqualsInline(t *testing.T) {
	db := openDemo(t, 20000)
	plan := mustPlan(t, dailyDistinct, Options{Engine: engine.SQLite, Types: rangeTypes, TailColumn: "timestamp"})
	require.True(t, plan.summarized, "not summarized")
	builtAt := demo.End.AddDate(0, 0, -3).Add(10*time.Hour + 20*time.Minute)
	buildAt(t, db, plan, "stored", builtAt)
	insertLate(t, db)
	tpl, err := placeholder.Compile(dailyDistinct)
	require.NoError(t, err)
	fromCut := 0
	for _, r := range [][2]variable.Timestamp{
		{demoAt(-30, 9*time.Hour), demoAt(3, 0)},
		{demoAt(-30, 0), demoAt(-3, 0)},                          // before the build instant's day
		{demoAt(-10, 0), demoAt(-3, 12*time.Hour)},               // into it, past the build instant
		{demoAt(-3, 0), demoAt(-2, 0)},                           // the build instant's day alone
		{demoAt(-3, 11*time.Hour), demoAt(-1, 5*time.Hour)},      // from after the build instant
		{demoAt(-20, 23*time.Hour+59*time.Minute), demoAt(5, 0)}, // past the late rows
	} {
		for _, country := range []string{"US", "GB", "ZZ"} {
			values := map[string]any{"country": country, "from": r[0], "to": r[1]}
			q, args, err := tpl.Render(engine.SQLite, values)
			require.NoError(t, err)
			want := query(t, db, q, args)
			rq, got := readTail(t, db, plan, "stored", values, builtAt)
			if strings.Contains(rq, `"timestamp" >= ?`) && strings.Contains(rq, "stored_parts") {
				fromCut++
			}
			require.Equal(t, want, got, "values %v\nread: %s", values, rq)
			withAt := map[string]any{BuiltAtVariable: builtAt}
			for k, v := range values {
				withAt[k] = v
			}
			pq, pargs, err := plan.ReadPage("stored", withAt, 4, 1)
			require.NoError(t, err)
			page := want.rows[min(1, len(want.rows)):min(5, len(want.rows))]
			require.Equal(t, page, query(t, db, pq, pargs).rows, "values %v\nread: %s", values, pq)
		}
	}
	require.Positive(t, fromCut, "no read took the source from the cut")
}

// demoAt is the instant days days and h after the demo's end.
func demoAt(days int, h time.Duration) variable.Timestamp {
	return variable.Timestamp{Time: demo.End.AddDate(0, 0, days).Add(h)}
}
