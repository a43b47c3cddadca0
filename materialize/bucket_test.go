package materialize

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

func TestBucketBoundary(t *testing.T) {
	monday := time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC) // also the 1st of a month
	cases := []struct {
		t    time.Time
		want map[engine.Bucket]bool
	}{
		{monday, map[engine.Bucket]bool{engine.Minute: true, engine.Hour: true, engine.Day: true, engine.Week: true, engine.Month: true}},
		{monday.AddDate(0, 0, 1), map[engine.Bucket]bool{engine.Minute: true, engine.Hour: true, engine.Day: true}},
		{monday.AddDate(0, 0, 7), map[engine.Bucket]bool{engine.Minute: true, engine.Hour: true, engine.Day: true, engine.Week: true}},
		{monday.Add(3 * time.Hour), map[engine.Bucket]bool{engine.Minute: true, engine.Hour: true}},
		{monday.Add(3*time.Hour + 5*time.Minute), map[engine.Bucket]bool{engine.Minute: true}},
		{monday.Add(time.Second), map[engine.Bucket]bool{}},
		{monday.Add(time.Millisecond), map[engine.Bucket]bool{}},
		{time.Date(2025, 9, 1, 2, 0, 0, 0, time.FixedZone("CEST", 2*3600)), map[engine.Bucket]bool{engine.Minute: true, engine.Hour: true, engine.Day: true, engine.Week: true, engine.Month: true}},
	}
	for _, c := range cases {
		for _, b := range []engine.Bucket{engine.Minute, engine.Hour, engine.Day, engine.Week, engine.Month} {
			got, want := boundary(b, c.t), c.want[b]
			require.Equal(t, want, got, "%s %v: boundary(b, c.t)", b, c.t)
		}
	}
}

// truncate is the bucket start in Go, to check the SQL against.
func truncate(b engine.Bucket, t time.Time) time.Time {
	switch b {
	case engine.Minute:
		return t.Truncate(time.Minute)
	case engine.Hour:
		return t.Truncate(time.Hour)
	}
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch b {
	case engine.Week:
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	case engine.Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return day
}

// The SQLite bucket expressions agree with Go on every weekday, month end
// and leap day of two years, at several times of day.
func TestBucketExprSQLite(t *testing.T) {
	db := testdb.SQLite(t)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, b := range []engine.Bucket{engine.Minute, engine.Hour, engine.Day, engine.Week, engine.Month} {
		stmt, err := db.Prepare("SELECT " + bucketExpr(b, engine.SQLite, `"v"`) + ` FROM (SELECT ? AS "v")`)
		require.NoError(t, err)
		for d := 0; d < 731; d += 3 {
			for _, tod := range []time.Duration{0, 59 * time.Second, 90 * time.Minute, 23*time.Hour + 59*time.Minute + 59*time.Second} {
				ts := start.AddDate(0, 0, d).Add(tod)
				var got string
				require.NoError(t, stmt.QueryRow(ts.Format("2006-01-02 15:04:05")).Scan(&got))
				if got, want := got, truncate(b, ts).Format("2006-01-02 15:04:05"); got != want {
					t.Fatalf("%s of %v: got = %q, want %q", b, ts, got, want)
				}
			}
		}
		stmt.Close()
	}
}

func TestBucketExprDialects(t *testing.T) {
	// PostgreSQL casts, so that a text column buckets as a timestamp one.
	require.Equal(t, `date_trunc('week', ("ts")::timestamp)`, bucketExpr(engine.Week, engine.PostgreSQL, `"ts"`))
	require.Equal(t, "toStartOfHour(toDateTime(`ts`, 'UTC'))", bucketExpr(engine.Hour, engine.ClickHouse, "`ts`"))
	require.Equal(t, "DATE_FORMAT(`ts`, '%Y-%m-01 00:00:00')", bucketExpr(engine.Month, engine.MySQL, "`ts`"))
	got, want := bucketExpr(engine.Day, engine.SQLite, `"ts"`), (`strftime('%Y-%m-%d 00:00:00', CASE WHEN "ts" IS NULL OR "ts" = strftime('%Y-%m-%d %H:%M:%S', "ts") THEN "ts" ` +
		`ELSE json_extract('{}', 'materialize: "ts" is not UTC text YYYY-MM-DD HH:MM:SS: ' || "ts") END)`)
	require.Equal(t, want, got, "bucketExpr(engine.Day, engine.SQLite, `\"ts\"`)")
}

// On SQLite, a refresh fails on a time column that is not UTC text
// YYYY-MM-DD HH:MM:SS, whose inline comparisons are not comparisons of
// instants; NULL passes, as inline it matches no range either.
func TestBucketGuardSQLite(t *testing.T) {
	db := testdb.SQLite(t)
	_, err := db.Exec("CREATE TABLE e (ts TEXT); INSERT INTO e VALUES ('2025-05-01 10:00:00'), (NULL)")
	require.NoError(t, err)
	plan := mustPlan(t, "SELECT count(*) AS n FROM e WHERE ts >= {variables.from}",
		Options{Engine: engine.SQLite, Types: map[string]variable.Type{"from": variable.Date}})
	build := func() error {
		r, err := plan.Refresh("m")
		require.NoError(t, err)
		for _, s := range r.Statements() {
			if _, err := db.Exec(s); err != nil {
				return err
			}
		}
		return nil
	}
	require.NoError(t, build())
	for _, bad := range []string{"2025-05-01T10:00:00Z", "2025-05-01", "1746093600"} {
		_, err = db.Exec("INSERT INTO e VALUES (?)", bad)
		require.NoError(t, err)
		err := build()
		require.ErrorContains(t, err, `materialize: "ts" is not UTC text YYYY-MM-DD HH:MM:SS: `+bad)
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM "m"`).Scan(&n), "the last good table stays")
		_, err = db.Exec("DELETE FROM e WHERE ts = ?", bad)
		require.NoError(t, err)
	}
}

// floor and next bound every instant by the bucket it is in: the floor is a
// boundary at or before it, the next boundary after it.
func TestBucketFloorNext(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, b := range []engine.Bucket{engine.Minute, engine.Hour, engine.Day, engine.Week, engine.Month} {
		for range 2000 {
			at := start.Add(time.Duration(rng.Int64N(int64(800 * 24 * time.Hour))))
			if rng.IntN(4) == 0 {
				at = at.Truncate(time.Hour)
			}
			f := b.Floor(at)
			n := b.Next(f)
			require.True(t, boundary(b, f), "%s floor of %s: %s: boundary(b, f) is false", b, at, f)
			require.True(t, boundary(b, n), "%s next of %s: %s: boundary(b, n) is false", b, f, n)
			require.False(t, at.Before(f), "%s floor of %s: %s: at.Before(f) is true", b, at, f)
			require.True(t, at.Before(n), "%s next of %s: %s: at.Before(n) is false", b, at, n)
			got, want := b.Floor(n), n
			require.Equal(t, want, got, "%s: a boundary is its own floor: b.Floor(n)", b)
			if got, want := b.Floor(n.Add(-time.Nanosecond)), f; !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: the last instant of the bucket: b.Floor(n.Add(-time.Nanosecond)) = %+v, want %+v", b, got, want)
			}
		}
	}
}
