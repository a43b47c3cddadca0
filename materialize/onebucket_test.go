package materialize

import (
	"database/sql"
	"reflect"
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

// storeOneBucket builds the table "stored" of plan, a one-bucket plan, in
// db.
func storeOneBucket(t *testing.T, db *sql.DB, plan *Plan) {
	t.Helper()
	require.NotNil(t, plan.oneBucket, "plan.oneBucket is nil")
	r, err := plan.Refresh("stored")
	require.NoError(t, err)
	for _, st := range r.Statements() {
		_, err := db.Exec(st)
		require.NoError(t, err, "%v", st)
	}
}

func TestDetermines(t *testing.T) {
	for _, c := range []struct {
		key    string
		bucket engine.Bucket
		zoned  bool
		want   bool
	}{
		{"ts", engine.Month, false, true},
		{"date(ts)", engine.Day, false, true},
		{"DATE(ts)", engine.Month, false, true},
		{"date(ts)", engine.Week, false, true},
		{"date(ts)", engine.Hour, false, false},
		{"date(other)", engine.Day, false, false},
		{"date(ts, 'localtime')", engine.Day, false, false},
		{"strftime('%Y-%m-%d %H:00', ts)", engine.Day, false, true},
		{"strftime('%Y-%m-%d %H:00', ts)", engine.Hour, false, true},
		{"strftime('%Y-%m-%d %H:00', ts)", engine.Minute, false, false},
		{"strftime('%Y-%m', ts)", engine.Month, false, true},
		{"strftime('%Y-%m', ts)", engine.Day, false, false},
		{"strftime('%m-%d', ts)", engine.Day, false, false}, // no year: May 2 of every year is one group
		{"strftime('%Y-%W', ts)", engine.Week, false, false},
		{"date_trunc('hour', ts)", engine.Week, false, true},
		{"date_trunc('week', ts)", engine.Week, false, true},
		{"date_trunc('week', ts)", engine.Month, false, false}, // a week straddles two months
		{"date_trunc('month', ts)", engine.Day, false, false},
		{"date_trunc('decade', ts)", engine.Month, false, false},
		{"date_trunc('day', ts, 'UTC')", engine.Day, false, false}, // a zone the session may not have
		{"lower(ts)", engine.Day, false, false},
		{"count(ts)", engine.Day, false, false},
		// ClickHouse truncates in the column's or server's zone: only an
		// explicit 'UTC' agrees with the stored buckets.
		{"toDate(ts)", engine.Day, true, false},
		{"toDate(ts, 'UTC')", engine.Day, true, true},
		{"toStartOfHour(ts, 'UTC')", engine.Month, true, true},
		{"toMonday(ts, 'UTC')", engine.Week, true, true},
		{"toMonday(ts, 'UTC')", engine.Month, true, false},
		{"dateTrunc('minute', ts, 'UTC')", engine.Hour, true, true},
		{"toDate(ts, 'Europe/Amsterdam')", engine.Day, true, false},
		{"ts", engine.Day, true, true},
	} {
		got := determines(parseExpr(t, c.key), parseExpr(t, "ts"), c.bucket, c.zoned)
		assert.Equal(t, c.want, got, "%s of the %s bucket (zoned %v)", c.key, c.bucket, c.zoned)
	}
}

func TestStrftimeUnit(t *testing.T) {
	for format, want := range map[string]string{
		"%Y-%m-%d %H:%M:%S": "second", "%Y-%m-%d %H:%M": "minute", "%Y%m%d%H": "hour", "%d.%m.%Y": "day",
		"%Y-%m": "month", "%Y": "", "%m": "", "%Y-%d": "", "%Y-%m-%H": "month", "%Y-%W": "", "%%Y-%m-%d": "", "%Y-%m-%d %%": "",
	} {
		got, want := strftimeUnit(format), want
		assert.Equal(t, want, got, "%v: strftimeUnit(format)", format)
	}
}

// TestOneBucketChosen: the equivalence shapes whose every group lies in one
// bucket read that way, and the others do not; TestReadEqualsInline and
// TestTailEqualsInline check that either read equals the inline run.
func TestOneBucketChosen(t *testing.T) {
	want := map[string]bool{
		"range_daily": true, "daily_purchases_revenue_country": true, "lower_coalesce_property_range_distinct": true,
		"hourly_two_distincts_day_bucket": true, "daily_distinct_amounts_month_bucket_having": true,
		"daily_by_event_list": false, "weekly_groups_month_bucket": false, "daily_ordered_by_last": false,
		"range_min_max_by_event": false, "range_weekly": false, "having_top_users": false,
	}
	seen := 0
	for _, s := range shapes {
		w, ok := want[s.name]
		if !ok {
			continue
		}
		seen++
		opts := s.options()
		plan := mustPlan(t, s.query, opts)
		got, want := plan.oneBucket != nil, w
		assert.Equal(t, want, got, "%v: plan.oneBucket", s.name)
	}
	if got, want := seen, len(want); got != want {
		t.Fatalf("a shape named here is gone: seen = %v, want %v", got, want)
	}

	// On ClickHouse the day of a DateTime is in its own zone.
	types := map[string]variable.Type{"from": variable.Date}
	for key, w := range map[string]bool{"toDate(timestamp)": false, "toDate(timestamp, 'UTC')": true} {
		plan := mustPlan(t, `SELECT `+key+` AS day, count() AS n FROM events WHERE timestamp >= {variables.from} GROUP BY day`,
			Options{Engine: engine.ClickHouse, Types: types})
		got, want := plan.oneBucket != nil, w
		assert.Equal(t, want, got, "%v: plan.oneBucket", key)
	}
}

// TestOneBucketReadStreams: on SQLite the stored part of a one-bucket read
// groups its rows as the table's index holds them (no sorter), and its
// DISTINCT over the one grain column is gone.
func TestOneBucketReadStreams(t *testing.T) {
	db := openDemo(t, 3000)
	types := map[string]variable.Type{"from": variable.Date, "to": variable.Date}
	plan := mustPlan(t, `SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users FROM events
		WHERE json_extract(properties, '$.country') = {variables.country} AND timestamp >= {variables.from}
		AND timestamp < {variables.to} GROUP BY day ORDER BY day`, Options{Engine: engine.SQLite, Types: types})
	storeOneBucket(t, db, plan)
	q, args, err := plan.Read("stored", map[string]any{"country": "US",
		"from": variable.Timestamp{Time: demo.End.AddDate(0, 0, -40)}, "to": variable.Timestamp{Time: demo.End.AddDate(0, 0, -10)}})
	require.NoError(t, err)
	assert.NotContains(t, q, "DISTINCT")
	steps := query(t, db, "EXPLAIN QUERY PLAN "+q, args)
	var detail []string
	for _, row := range steps.rows {
		detail = append(detail, row[len(row)-1].(string))
	}
	plain := strings.Join(detail, "\n")
	assert.Contains(t, plain, "USING COVERING INDEX")
	assert.NotContains(t, plain, "TEMP B-TREE FOR GROUP BY")
}

// TestOneBucketTighterAlignedBound: two lower bounds on one column, the
// looser off a day's boundary and the tighter on one, leave the range
// unaligned (intervals) but with no partial bucket (group.partial): the
// one-bucket merged read then has nothing to merge after its stored
// groups, and Read fails with "a merged read with nothing to merge",
// where the read before one-bucket reads (and the inline query) answer.
func TestOneBucketTighterAlignedBound(t *testing.T) {
	db := openDemo(t, 3000)
	q := `SELECT date(timestamp) AS day, count(*) AS n, count(DISTINCT distinct_id) AS users FROM events
		WHERE timestamp >= {variables.a} AND timestamp >= {variables.b} AND timestamp < {variables.to}
		GROUP BY day ORDER BY day`
	types := map[string]variable.Type{"a": variable.Date, "b": variable.Date, "to": variable.Date}
	plan := mustPlan(t, q, Options{Engine: engine.SQLite, Types: types})
	storeOneBucket(t, db, plan)
	values := map[string]any{
		"a":  variable.Timestamp{Time: demo.End.AddDate(0, 0, -30).Add(5 * time.Hour)}, // off a boundary, looser
		"b":  variable.Timestamp{Time: demo.End.AddDate(0, 0, -20)},                    // on one, tighter
		"to": variable.Timestamp{Time: demo.End.AddDate(0, 0, -10)},
	}
	tpl, err := placeholder.Compile(q)
	require.NoError(t, err)
	iq, iargs, err := tpl.Render(engine.SQLite, values)
	require.NoError(t, err)
	want := query(t, db, iq, iargs)
	v := want.rows
	require.NotEmpty(t, v, "want.rows is empty")

	rq, rargs, err := plan.Read("stored", values)
	require.NoError(t, err)
	if got, want := query(t, db, rq, rargs).rows, want.rows; !reflect.DeepEqual(got, want) {
		t.Fatalf("%v: query(t, db, rq, rargs).rows = %+v, want %+v", rq, got, want)
	}
	pq, pargs, err := plan.ReadPage("stored", values, 5, 2)
	require.NoError(t, err)
	if got, want := query(t, db, pq, pargs).rows, want.rows[2:7]; !reflect.DeepEqual(got, want) {
		t.Fatalf("%v: query(t, db, pq, pargs).rows = %+v, want %+v", pq, got, want)
	}
}
