package materialize

import (
	"errors"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

func mustPlan(t *testing.T, query string, opts Options) *Plan {
	t.Helper()
	a, err := Analyze(query, opts)
	require.NoError(t, err)
	require.True(t, a.Materializable(), "%v", a.Reasons)
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
	// after is compared with > against a day bucket: never exact.
	_, _, err := plan.Read("t", base())
	var inline *InlineError
	require.ErrorAs(t, err, &inline)
	require.Equal(t, "after", inline.Variable)
	require.ErrorIs(t, err, ErrRunInline)

	plan = mustPlan(t, `SELECT count(*) AS n FROM events WHERE event = {variables.e} AND timestamp >= {variables.from}
		AND timestamp < {variables.to}`, opts)
	q, args, err := plan.Read("stored", base())
	require.NoError(t, err)
	require.Equal(t, `SELECT coalesce(sum("_a0"), 0) AS "n" FROM "stored" WHERE "e" = ? AND "from" >= ? AND "to" < ?`, q)
	require.Equal(t, []any{"purchase", "2025-05-01 00:00:00", "2025-05-08 00:00:00"}, args)

	cases := []struct {
		name   string
		change func(map[string]any)
		inline bool
		want   string
	}{
		{"off the day boundary", func(v map[string]any) { v["to"] = day(8, time.Hour) }, true, "is not the start of a day"},
		{"a second off", func(v map[string]any) { v["from"] = day(1, time.Second) }, true, "is not the start of a day"},
		{"missing", func(v map[string]any) { delete(v, "e") }, false, "no value"},
		{"null", func(v map[string]any) { v["e"] = nil }, false, "null"},
		{"list", func(v map[string]any) { v["e"] = []string{"a"} }, false, "a list"},
		{"not a date", func(v map[string]any) { v["from"] = "2025-05-01" }, false, "want a date"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := base()
			c.change(v)
			_, _, err := plan.Read("stored", v)
			require.ErrorContains(t, err, c.want)
			require.Equal(t, c.inline, errors.Is(err, ErrRunInline))
			require.Equal(t, !c.inline, errors.Is(err, ErrInvalidValue))
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
	t.Run("= against a bucket", func(t *testing.T) {
		p := mustPlan(t, "SELECT count(*) FROM events WHERE timestamp >= {variables.from} AND timestamp = {variables.from}", opts)
		_, _, err := p.Read("t", map[string]any{"from": day(1, 0)})
		require.ErrorIs(t, err, ErrRunInline)
		require.ErrorContains(t, err, "= against a day bucket cannot be exact")
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

func TestRefresh(t *testing.T) {
	cases := []struct {
		d    engine.Engine
		want []string
	}{
		{engine.SQLite, []string{`DROP TABLE IF EXISTS "m_next"`, `CREATE TABLE "m_next" AS SELECT`, `DROP TABLE IF EXISTS "m"`, `ALTER TABLE "m_next" RENAME TO "m"`}},
		{engine.ClickHouse, []string{"DROP TABLE IF EXISTS `m_next`", "CREATE TABLE `m_next` ENGINE = MergeTree ORDER BY tuple() AS SELECT", "CREATE TABLE IF NOT EXISTS `m` AS `m_next`", "EXCHANGE TABLES `m_next` AND `m`", "DROP TABLE IF EXISTS `m_next`"}},
	}
	for _, c := range cases {
		plan := mustPlan(t, "SELECT count(*) FROM events WHERE event = {variables.e}", Options{Engine: c.d})
		r, err := plan.Refresh("m")
		require.NoError(t, err)
		stmts := r.Statements()
		require.Len(t, stmts, len(c.want))
		for i := range stmts {
			require.Contains(t, stmts[i], c.want[i])
		}
		_, err = plan.Refresh("")
		require.ErrorIs(t, err, ErrInvalidTable)
	}
}
