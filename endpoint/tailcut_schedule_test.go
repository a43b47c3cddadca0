package endpoint_test

import (
	"context"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hourlyDistinct is propertyDistinct by the hour: with hour buckets its
// groups lie in one bucket each, so a live tail's table is summarized and
// its runs read the source from the start of the build instant's hour.
const hourlyDistinct = `SELECT strftime('%Y-%m-%d %H', timestamp) AS hr, count(DISTINCT distinct_id) AS users, count(*) AS n
FROM events WHERE json_extract(properties, '$.country') = {variables.country}
AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY hr ORDER BY hr`

// tailCutDay is the day the tail-cut schedule tests build on (the env's
// clock starts the day before).
var tailCutDay = time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC)

// buildAt moves e's clock to at and refreshes name there; it returns the
// status after.
func buildAt(t *testing.T, e *env, name string, at time.Time) endpoint.MaterializationReport {
	t.Helper()
	e.clock.Advance(at.Sub(e.clock.Now()))
	e.materialize(t, name)
	r := e.status(t, name)
	require.NotNil(t, r.LastSuccessAt, "%s built at %v: no table", name, at)
	require.NotNil(t, r.NextRefreshAt, "%s built at %v: no next refresh", name, at)
	return r
}

// TestTailCutNextRefresh: where the scheduler refreshes a live tail over a
// summarized table (next_refresh_at, which dueAwake shares): at the last
// start of its cut's bucket within its freshness period, never at or
// before its build instant (a table built at a bucket's start, or a
// second before it, is not refreshed in a loop); with a period that ends
// before the next day starts, with hour buckets (an hour's cut, not
// aligned) and with week buckets (not summarized), at its period less the
// jitter, as before. A period that is not whole
// days refreshes more often than it says: 47 hours at every midnight, 23
// hours twice a day (cutAligned).
func TestTailCutNextRefresh(t *testing.T) {
	d0, d1, d2 := tailCutDay, tailCutDay.AddDate(0, 0, 1), tailCutDay.AddDate(0, 0, 2)
	hours := map[string]engine.Bucket{"from": engine.Hour, "to": engine.Hour}
	weeks := map[string]engine.Bucket{"from": engine.Week, "to": engine.Week}
	jittered := func(at time.Time, period time.Duration) func(time.Time) bool {
		return func(next time.Time) bool {
			return !next.Before(at.Add(period-period/10)) && !next.After(at.Add(period)) && !next.Equal(engine.Day.Floor(next))
		}
	}
	at := func(t time.Time) func(time.Time) bool { return func(next time.Time) bool { return next.Equal(t) } }
	type build struct {
		at   time.Time
		want func(time.Time) bool
		says string
	}
	for _, tc := range []struct {
		name    string
		query   string
		period  time.Duration
		buckets map[string]engine.Bucket
		builds  []build
	}{
		{"a day", propertyDistinct, 24 * time.Hour, nil, []build{
			{d0.Add(14*time.Hour + 30*time.Minute + 17*time.Second), at(d1), "the next midnight"},
			{d1, at(d2), "the midnight after the one it was built at"},
			{d1.Add(24*time.Hour - time.Second), at(d2), "the midnight a second later"},
			{d2, at(d2.AddDate(0, 0, 1)), "the next midnight"},
		}},
		{"half a day", propertyDistinct, 12 * time.Hour, nil, []build{
			{d0.Add(14*time.Hour + 30*time.Minute), at(d1), "the next midnight, within its period"},
			{d1, jittered(d1, 12*time.Hour), "its period less the jitter: no midnight within it"},
		}},
		{"23 hours", propertyDistinct, 23 * time.Hour, nil, []build{
			{d0, jittered(d0, 23*time.Hour), "its period less the jitter: no midnight within it"},
			{d0.Add(22 * time.Hour), at(d1), "the next midnight, two hours on: a second refresh that day"},
		}},
		{"47 hours", propertyDistinct, 47 * time.Hour, nil, []build{
			{d0.Add(14*time.Hour + 30*time.Minute), at(d2), "the last midnight within its period"},
			{d2, at(d2.AddDate(0, 0, 1)), "the last midnight within its period, a day later"},
		}},
		{"hour buckets", hourlyDistinct, 24 * time.Hour, hours, []build{
			{d0.Add(14*time.Hour + 30*time.Minute + 17*time.Second), jittered(d0.Add(14*time.Hour+30*time.Minute+17*time.Second), 24*time.Hour), "its period less the jitter: an hour's cut is not aligned"},
		}},
		{"week buckets", propertyDistinct, 24 * time.Hour, weeks, []build{
			{d0.Add(14*time.Hour + 30*time.Minute + 17*time.Second), jittered(d0.Add(14*time.Hour+30*time.Minute+17*time.Second), 24*time.Hour), "its period less the jitter"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newMatEnv(t, 2000)
			e.createMat(t, "tail", e.query(tc.query, "country", "from", "to"), endpoint.CreateRequest{
				MaterializationTail: "timestamp", MaterializationFreshness: endpoint.Seconds(tc.period), MaterializationBuckets: tc.buckets})
			for _, b := range tc.builds {
				r := buildAt(t, e, "tail", b.at)
				assert.True(t, r.NextRefreshAt.After(*r.LastSuccessAt), "built at %v: refreshed at %v, not after", r.LastSuccessAt, r.NextRefreshAt)
				assert.True(t, b.want(*r.NextRefreshAt), "built at %v: refreshed at %v, not at %s", r.LastSuccessAt, r.NextRefreshAt, b.says)
			}
		})
	}
}

// TestTailCutAfterFailure: a live tail's refresh at midnight that fails
// is tried again after the back-off (next_refresh_at says so), while the
// table it would have replaced serves on through its grace; the retry's
// table is then refreshed at the next midnight, not its period after the
// retry.
func TestTailCutAfterFailure(t *testing.T) {
	e, x := newMatEnv(t, 2000)
	e.createMat(t, "tail", e.query(propertyDistinct, "country", "from", "to"), endpoint.CreateRequest{MaterializationTail: "timestamp"})
	d1 := tailCutDay.AddDate(0, 0, 1)
	r := buildAt(t, e, "tail", tailCutDay.Add(25*time.Second))
	require.Equal(t, d1, *r.NextRefreshAt)

	e.clock.Advance(d1.Add(10 * time.Second).Sub(e.clock.Now()))
	x.fail.Store(true)
	require.Error(t, e.svc.Materialize(context.Background(), "1", "tail"))
	r = e.status(t, "tail")
	require.NotNil(t, r.LastErrorAt)
	assert.Equal(t, r.LastErrorAt.Add(5*time.Minute), *r.NextRefreshAt, "after the failed refresh")
	assert.True(t, r.Serving, "the last good table does not serve after a failed refresh, within its period")

	e.clock.Advance(5 * time.Minute)
	vars := map[string]any{"country": "US", "from": "2025-05-01", "to": "2025-06-03"}
	res := e.mustRun(t, "tail", vars)
	assert.Empty(t, res.InlineReason, "a run past the period, within the grace, goes inline")
	assert.True(t, e.status(t, "tail").Serving, "the table does not serve within its grace")
	x.fail.Store(false)
	e.materialize(t, "tail")
	r = e.status(t, "tail")
	assert.Equal(t, d1.Add(5*time.Minute+10*time.Second), *r.LastSuccessAt)
	assert.Equal(t, d1.AddDate(0, 0, 1), *r.NextRefreshAt, "the retry's table is not refreshed at the next midnight")
}

// TestRefreshStaleAtTheCut: RefreshStale, the pass a host runs from its
// own timer instead of Schedule, refreshes a live tail over a table
// summarized by the day once the day after its build has begun, as the
// scheduler does, not a whole period after its build; a table without a
// tail waits for its period.
func TestRefreshStaleAtTheCut(t *testing.T) {
	ctx := context.Background()
	e, _ := newMatEnv(t, 2000)
	q := e.query(propertyDistinct, "country", "from", "to")
	e.createMat(t, "tail", q, endpoint.CreateRequest{MaterializationTail: "timestamp"})
	e.createMat(t, "plain", q, endpoint.CreateRequest{})
	built := tailCutDay.Add(14 * time.Hour)
	buildAt(t, e, "tail", built)
	buildAt(t, e, "plain", built)

	e.clock.Advance(tailCutDay.AddDate(0, 0, 1).Add(-time.Second).Sub(e.clock.Now()))
	n, err := e.svc.RefreshStale(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "refreshed before midnight")
	e.clock.Advance(2 * time.Second)
	n, err = e.svc.RefreshStale(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "refreshed at midnight")
	assert.True(t, e.status(t, "tail").LastSuccessAt.After(built), "the tail was not refreshed at midnight")
	assert.Equal(t, built, *e.status(t, "plain").LastSuccessAt, "the table without a tail was refreshed at midnight")
	n, err = e.svc.RefreshStale(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "refreshed again right after midnight")
}

// TestTailGraceIsTheJitter: a live tail's table serves past its period
// for the jitter's share of it (a tenth: 2.4 hours of a day), the time the
// refreshes due at one midnight may take to get their turns, and for at
// least Config.RefreshTimeout.
func TestTailGraceIsTheJitter(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	e.createMat(t, "tail", e.query(propertyDistinct, "country", "from", "to"), endpoint.CreateRequest{MaterializationTail: "timestamp"})
	built := tailCutDay.Add(30 * time.Second)
	buildAt(t, e, "tail", built)
	e.clock.Advance(built.Add(26*time.Hour + 23*time.Minute).Sub(e.clock.Now()))
	assert.True(t, e.status(t, "tail").Serving, "the table does not serve 2 hours 23 minutes past its period")
	e.clock.Advance(2 * time.Minute)
	assert.False(t, e.status(t, "tail").Serving, "the table serves 2 hours 25 minutes past its period")
}
