package materialize

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// TestEdgeProbes: a plan whose runs read the source beside the stored
// table gives one probe for the partial buckets of each bucketed
// expression and one for the live tail: each the branch's SELECT over the
// (scoped) source with a two-sided range on the time column first, the
// query's own filters, and no variable's predicate; SQLite searches the
// demo schema's time index for each. A plan whose runs never read the
// source gives none.
func TestEdgeProbes(t *testing.T) {
	types := map[string]variable.Type{"country": variable.String, "from": variable.Date, "to": variable.Date}
	query := `SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users FROM events
		WHERE json_extract(properties, '$.country') = {variables.country} AND event <> 'x'
		AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY day`
	a, err := Analyze(query, Options{Engine: engine.SQLite, Types: types, TailColumn: "timestamp"})
	require.NoError(t, err)
	require.True(t, a.Materializable(), a.Reason())
	at := time.Date(2025, 5, 31, 12, 34, 56, 0, time.UTC)
	probes, err := a.Plan.EdgeProbes(at, nil)
	require.NoError(t, err)
	require.Len(t, probes, 2)
	assert.Equal(t, `the partial buckets of "timestamp"`, probes[0].Name)
	assert.Equal(t, `the live tail ("timestamp" after the build)`, probes[1].Name)
	assert.Contains(t, probes[0].SQL, `FROM "events" WHERE "timestamp" >= ? AND "timestamp" < ? AND "event" <> 'x' GROUP BY`)
	assert.Equal(t, []any{"2025-05-31 11:34:56", "2025-05-31 12:34:56"}, probes[0].Args)
	assert.Contains(t, probes[1].SQL, `FROM "events" WHERE "timestamp" > ? AND "timestamp" < ? AND "event" <> 'x' GROUP BY`)
	assert.Equal(t, []any{"2025-05-31 12:34:56", "2025-06-01"}, probes[1].Args)
	for _, p := range probes {
		assert.NotContains(t, p.SQL, "json_extract", "no variable's predicate")
	}

	db := openDemo(t, 2000)
	for _, p := range probes {
		rows, err := db.Query("EXPLAIN QUERY PLAN "+p.SQL, p.Args...)
		require.NoError(t, err)
		var plan strings.Builder
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			plan.WriteString(detail + "\n")
		}
		require.NoError(t, rows.Err())
		rows.Close()
		assert.Contains(t, plan.String(), "SEARCH events USING INDEX events_timestamp (timestamp>? AND timestamp<?)", p.Name)
	}

	scoped, err := a.Plan.ScopeSource(func(q string) (string, error) {
		return strings.Replace(q, `"events"`, `(SELECT * FROM "events" WHERE "project_id" = {variables.tenant}) AS "events"`, 1), nil
	})
	require.NoError(t, err)
	probes, err = scoped.EdgeProbes(at, map[string]any{"tenant": "7"})
	require.NoError(t, err)
	require.Len(t, probes, 2)
	for _, p := range probes {
		assert.Contains(t, p.SQL, `FROM (SELECT * FROM "events" WHERE "project_id" = ?) AS "events" WHERE "timestamp" >`)
		assert.Equal(t, "7", p.Args[0])
	}

	plain, err := Analyze(`SELECT count(*) AS n FROM events WHERE json_extract(properties, '$.country') = {variables.country}`,
		Options{Engine: engine.SQLite, Types: types})
	require.NoError(t, err)
	require.True(t, plain.Materializable(), plain.Reason())
	probes, err = plain.Plan.EdgeProbes(at, nil)
	require.NoError(t, err)
	assert.Empty(t, probes)
}
