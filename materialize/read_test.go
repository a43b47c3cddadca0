package materialize

import (
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

func mustPlan(t *testing.T, query string, opts Options) *Plan {
	t.Helper()
	a, err := Analyze(query, opts)
	require.NoError(t, err)
	require.True(t, a.Materializable(), "%v: a.Materializable() is false", a.Reasons)
	return a.Plan
}

func TestRead(t *testing.T) {
	opts := Options{Engine: engine.SQLite, Types: map[string]variable.Type{"from": variable.Date, "to": variable.Date, "after": variable.Date}}
	plan := mustPlan(t, `SELECT count(*) AS n FROM events WHERE event = {variables.e} AND timestamp >= {variables.from}
		AND timestamp < {variables.to} AND {variables.after} < timestamp`, opts)
	day := func(d int, extra time.Duration) variable.Timestamp {
		return variable.Timestamp{Time: time.Date(2025, 5, d, 0, 0, 0, 0, time.UTC).Add(extra)}
	}
	base := func() map[string]any {
		return map[string]any{"e": "purchase", "from": day(1, 0), "to": day(8, 0), "after": day(1, 0)}
	}
	// after is compared with > against a day bucket: the day of after is
	// partial, computed from the source.
	q, args, err := plan.Read("t", base())
	require.NoError(t, err)
	// One branch of the source for the partial day after after, bounded
	// on timestamp first, so that an index on it serves.
	got, want := q, `SELECT coalesce(sum("_a0"), 0) AS "n" FROM (SELECT "_a0" FROM "t" WHERE "e" = ? AND "from" >= ? AND "to" < ? AND "after" >= ?`+
		` UNION ALL SELECT count(*) AS "_a0" FROM "events" WHERE "timestamp" > ? AND "timestamp" < ? AND "event" = ?`+
		` AND "timestamp" >= ? AND "timestamp" < ? AND "timestamp" > ?) AS "stored_parts"`
	require.Equal(t, want, got, "q")
	require.Equal(t, []any{"purchase", "2025-05-01 00:00:00", "2025-05-08 00:00:00", "2025-05-02 00:00:00",
		"2025-05-01 00:00:00", "2025-05-02", "purchase", "2025-05-01 00:00:00", "2025-05-08 00:00:00", "2025-05-01 00:00:00"}, args)

	plan = mustPlan(t, `SELECT count(*) AS n FROM events WHERE event = {variables.e} AND timestamp >= {variables.from}
		AND timestamp < {variables.to}`, opts)
	q, args, err = plan.Read("stored", base())
	require.NoError(t, err)
	require.Equal(t, `SELECT coalesce(sum("_a0"), 0) AS "n" FROM "stored" WHERE "e" = ? AND "from" >= ? AND "to" < ?`, q)
	require.Equal(t, []any{"purchase", "2025-05-01 00:00:00", "2025-05-08 00:00:00"}, args)

	cases := []struct {
		name   string
		change func(map[string]any)
		want   string
	}{
		{"missing", func(v map[string]any) { delete(v, "e") }, "no value"},
		{"null", func(v map[string]any) { v["e"] = nil }, "null"},
		{"list", func(v map[string]any) { v["e"] = []string{"a"} }, "a list"},
		{"not a date", func(v map[string]any) { v["from"] = "2025-05-01" }, "want a date"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := base()
			c.change(v)
			_, _, err := plan.Read("stored", v)
			require.ErrorContains(t, err, c.want)
			require.ErrorIs(t, err, ErrInvalidValue)
		})
	}
	t.Run("time.Time and a date-only value", func(t *testing.T) {
		v := base()
		v["from"] = time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
		v["to"] = variable.Timestamp{Time: time.Date(2025, 5, 2, 0, 0, 0, 0, time.UTC), DateOnly: true}
		_, args, err := plan.Read("stored", v)
		require.NoError(t, err)
		require.Equal(t, []any{"purchase", "2025-05-01 00:00:00", "2025-05-02 00:00:00"}, args)
	})
	t.Run("off a boundary and = against a bucket", func(t *testing.T) {
		// Every instant off a boundary, and = on a bucketed date, reads
		// the partial buckets from the source: intervals says which.
		for _, c := range []struct {
			from, to variable.Timestamp
			lo, hi   string // the whole days read from the stored table
		}{
			{day(1, time.Hour), day(8, 0), "2025-05-02", "2025-05-08"},
			{day(1, 0), day(8, time.Second), "2025-05-01", "2025-05-08"},
			{day(1, 23*time.Hour), day(2, time.Hour), "2025-05-02", "2025-05-02"},
		} {
			v := base()
			v["from"], v["to"] = c.from, c.to
			ivs, aligned, err := plan.intervals(v)
			require.NoError(t, err)
			require.False(t, aligned, "aligned is true")
			got, want := ivs["from"].lo.Format(time.DateOnly), c.lo
			require.Equal(t, want, got, "ivs[\"from\"].lo.Format(time.DateOnly)")
			if got, want := ivs["to"].hi.Format(time.DateOnly), c.hi; got != want {
				t.Fatalf("ivs[\"to\"].hi.Format(time.DateOnly) = %q, want %q", got, want)
			}
		}
		p := mustPlan(t, "SELECT count(*) FROM events WHERE timestamp >= {variables.from} AND timestamp = {variables.from}", opts)
		ivs, aligned, err := p.intervals(map[string]any{"from": day(1, 0)})
		require.NoError(t, err)
		require.False(t, aligned, "aligned is true")
		require.True(t, (ivs["from"].empty()), "ivs[\"from\"].empty() is false")
		q, _, err := p.Read("t", map[string]any{"from": day(1, 0)})
		require.NoError(t, err)
		require.NotContains(t, q, `FROM "t"`, "no whole bucket: the source answers alone")
	})
	_, _, err = plan.Read("", base())
	require.ErrorIs(t, err, ErrInvalidTable)
}

// A value is always bound, never written into the read query.
func TestReadBindsValues(t *testing.T) {
	plan := mustPlan(t, "SELECT count(*) FROM events WHERE event = {variables.e}", Options{Engine: engine.SQLite})
	evil := "' OR 1=1 --"
	q, args, err := plan.Read("t", map[string]any{"e": evil})
	require.NoError(t, err)
	require.NotContains(t, q, "OR 1=1")
	require.Equal(t, []any{evil}, args)
}

// TestReadPage: a page goes on the read itself, after its ORDER BY, as
// two more bound arguments; a query with a LIMIT of its own is read whole
// (its LIMIT first) and paged around; a negative bound is a *PageError.
func TestReadPage(t *testing.T) {
	cases := []struct {
		d     engine.Engine
		query string
		want  string
	}{
		{engine.SQLite, `SELECT day, count(*) AS n FROM events WHERE event = {variables.e} GROUP BY day ORDER BY day`,
			`SELECT "_k0" AS "day", coalesce(sum("_a0"), 0) AS "n" FROM "t" WHERE "e" = ? GROUP BY "_k0" ORDER BY 1 ASC LIMIT ? OFFSET ?`},
		{engine.PostgreSQL, `SELECT uuid FROM events WHERE event = {variables.e} ORDER BY timestamp DESC`,
			`SELECT "_c0" AS "uuid" FROM "t" WHERE "e" = $1 ORDER BY "_o0" DESC LIMIT $2 OFFSET $3`},
		{engine.SQLite, `SELECT uuid FROM events WHERE event = {variables.e} ORDER BY uuid LIMIT 10 OFFSET 5`,
			`SELECT * FROM (SELECT "_c0" AS "uuid" FROM "t" WHERE "e" = ? ORDER BY 1 ASC LIMIT 10 OFFSET 5) AS "stored_page" LIMIT ? OFFSET ?`},
		{engine.MySQL, `SELECT count(*) AS n FROM events WHERE event = {variables.e} LIMIT 1`,
			"SELECT * FROM (SELECT CAST(coalesce(sum(`_a0`), 0) AS SIGNED) AS `n` FROM `t` WHERE `e` = ? LIMIT 1) AS `stored_page` LIMIT ? OFFSET ?"},
	}
	for _, c := range cases {
		plan := mustPlan(t, c.query, Options{Engine: c.d})
		q, args, err := plan.ReadPage("t", map[string]any{"e": "purchase"}, 101, 200)
		require.NoError(t, err)
		require.Equal(t, c.want, q)
		require.Equal(t, []any{"purchase", int64(101), int64(200)}, args)
		// Read is the same query without the page.
		whole, _, err := plan.Read("t", map[string]any{"e": "purchase"})
		require.NoError(t, err)
		require.Contains(t, q, whole)
	}
	plan := mustPlan(t, `SELECT uuid FROM events WHERE event = {variables.e} ORDER BY uuid`, Options{Engine: engine.SQLite})
	for _, bounds := range [][2]int64{{-1, 0}, {1, -1}} {
		_, _, err := plan.ReadPage("t", map[string]any{"e": "x"}, bounds[0], bounds[1])
		var pe *PageError
		require.ErrorAs(t, err, &pe)
		require.ErrorIs(t, err, ErrInvalidPage)
		got, want := ([2]int64{pe.Limit, pe.Offset}), bounds
		require.Equal(t, want, got, "([2]int64{pe.Limit, pe.Offset})")
	}
	// Read's own checks apply to a page too.
	_, _, err := plan.ReadPage("t", map[string]any{}, 1, 0)
	require.ErrorIs(t, err, ErrInvalidValue)
	_, _, err = plan.ReadPage("", map[string]any{"e": "x"}, 1, 0)
	require.ErrorIs(t, err, ErrInvalidTable)
}

// TestReadList: a list variable binds every value of its list, one marker
// each; a single value binds as a list of one; an empty list is refused,
// as a run refuses it, rather than read as "matches nothing" or "all".
func TestReadList(t *testing.T) {
	plan := mustPlan(t, "SELECT count(*) AS n FROM events WHERE event IN {variables.events}", Options{Engine: engine.PostgreSQL})
	q, args, err := plan.Read("t", map[string]any{"events": []string{"a", "b", "c"}})
	require.NoError(t, err)
	require.Equal(t, `SELECT CAST(coalesce(sum("_a0"), 0) AS bigint) AS "n" FROM "t" WHERE "events" IN ($1, $2, $3)`, q)
	require.Equal(t, []any{"a", "b", "c"}, args)
	q, args, err = plan.Read("t", map[string]any{"events": "a"})
	require.NoError(t, err)
	require.Equal(t, `SELECT CAST(coalesce(sum("_a0"), 0) AS bigint) AS "n" FROM "t" WHERE "events" IN ($1)`, q)
	require.Equal(t, []any{"a"}, args)
	_, _, err = plan.Read("t", map[string]any{"events": []string{}})
	require.ErrorIs(t, err, ErrInvalidValue)
	require.ErrorContains(t, err, "empty list")
}
