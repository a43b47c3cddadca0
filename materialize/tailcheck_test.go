package materialize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// TestCheckTailColumn: the live tail's column is looked for among the
// columns the outermost FROM gives, where its bound goes: a derived
// table's or a WITH query's SELECT list, an alias's column list; a
// table's columns are the engine's to know (nil), as are those of a FROM
// this reading does not resolve. What it cannot read is an error.
func TestCheckTailColumn(t *testing.T) {
	cohort := "SELECT first_day, count(*) AS n FROM (SELECT distinct_id, min(timestamp) AS first_day FROM events GROUP BY distinct_id) f WHERE first_day >= {variables.from} GROUP BY first_day"
	cte := "WITH s AS (SELECT distinct_id, timestamp AS at FROM events WHERE event = 'x') SELECT count(*) AS n FROM s JOIN users u ON u.id = s.distinct_id WHERE s.at >= {variables.from}"
	for _, c := range []struct {
		query, col string
		want       *TailColumnUnread // nil: readable, or the engine's to tell
	}{
		{cohort, "first_day", nil},
		{cohort, "F.first_day", nil},
		{cohort, "timestamp", &TailColumnUnread{Column: "timestamp", Relations: []Relation{{Name: "f", Columns: []string{"distinct_id", "first_day"}, Known: true}}}},
		{cohort, "f.timestamp", &TailColumnUnread{Column: "f.timestamp", Relations: []Relation{{Name: "f", Columns: []string{"distinct_id", "first_day"}, Known: true}}}},
		{cohort, "x.first_day", &TailColumnUnread{Column: "x.first_day", Qualifier: "x", Relations: []Relation{{Name: "f", Columns: []string{"distinct_id", "first_day"}, Known: true}}}},
		{cte, "s.at", nil},
		{cte, "at", nil},
		{cte, "u.created", nil}, // a table: the engine knows its columns
		{cte, "timestamp", nil}, // users may have it
		{cte, "s.timestamp", &TailColumnUnread{Column: "s.timestamp", Relations: []Relation{{Name: "s", Table: "s", Columns: []string{"distinct_id", "at"}, Known: true}}}},
		{"SELECT count(*) AS n FROM events e WHERE e.timestamp >= {variables.from}", "events.timestamp", nil},
		{"SELECT count(*) AS n FROM (SELECT a FROM t) AS x(b) WHERE b = {variables.k}", "x.a", &TailColumnUnread{Column: "x.a", Relations: []Relation{{Name: "x", Columns: []string{"b"}, Known: true}}}},
		{"SELECT a FROM t UNION ALL SELECT a FROM u", "a", nil}, // not placed in a set operation
		// Materialized at its subquery's grain (nested.go): the bound
		// goes in the subquery's FROM.
		{"WITH p AS (SELECT distinct_id, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY distinct_id) SELECT sum(n) AS n FROM p", "timestamp", nil},
		{"SELECT sum(n) AS n FROM (SELECT e.distinct_id, count(*) AS n FROM events e WHERE e.timestamp >= {variables.from} GROUP BY e.distinct_id) p", "p.n",
			&TailColumnUnread{Column: "p.n", Qualifier: "p", Subquery: true, Relations: []Relation{{Name: "e", Table: "events"}}}},
		{"WITH p AS (SELECT e.distinct_id, count(*) AS n FROM events e WHERE e.timestamp >= {variables.from} GROUP BY e.distinct_id), h AS (SELECT n, count(*) AS users FROM p GROUP BY n) SELECT max(users) AS most FROM h", "e.timestamp", nil},
		{"SELECT sum(n) AS n FROM (SELECT x.distinct_id, count(*) AS n FROM (SELECT distinct_id, event FROM events) x WHERE x.event = {variables.e} GROUP BY x.distinct_id) p", "timestamp",
			&TailColumnUnread{Column: "timestamp", Subquery: true, Relations: []Relation{{Name: "x", Columns: []string{"distinct_id", "event"}, Known: true}}}},
	} {
		got, err := CheckTailColumn(engine.PostgreSQL, c.query, c.col)
		require.NoError(t, err, c.query)
		assert.Equal(t, c.want, got, "%s: %s", c.col, c.query)
	}
	_, err := CheckTailColumn(engine.SQLite, "SELECT count(* FROM events", "timestamp")
	require.ErrorIs(t, err, tree.ErrSyntax)
}
