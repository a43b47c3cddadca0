package materialize

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWithChains: a CTE read once stands as a derived table, and the
// conditions of variables in its WHERE are carried out, level by level,
// where its rows are keyed by the compared column; otherwise the query is
// refused with a reason that says which and where.
func TestWithChains(t *testing.T) {
	for _, c := range []struct {
		name, query string
		code        Code // "" when it materializes
		reason      string
	}{
		{"projection", "WITH e AS (SELECT event, distinct_id FROM events WHERE event = {variables.e}) SELECT distinct_id FROM e ORDER BY distinct_id", "", ""},
		{"chain through a qualified column", "WITH a AS (SELECT x.event, x.distinct_id FROM events x WHERE x.event = {variables.e}), b AS (SELECT event, distinct_id FROM a) SELECT count(*) AS n FROM b", "", ""},
		{"grouped by the column", "WITH g AS (SELECT event, count(*) AS n FROM events WHERE event IN {variables.e} GROUP BY event) SELECT sum(n) AS n FROM g", "", ""},
		{"read twice", "WITH e AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM e JOIN e AS f ON f.event = e.event", CodeUnsupportedQuery, "starts with WITH"},
		{"never read", "WITH e AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM events", CodeUnsupportedQuery, "starts with WITH"},
		{"recursive", "WITH RECURSIVE e AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM e", CodeUnsupportedQuery, "starts with WITH"},
		{"column list", "WITH e(ev) AS (SELECT event FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM e", CodeUnsupportedQuery, "starts with WITH"},
		{"not keyed: grouped by another column", "WITH g AS (SELECT distinct_id, count(*) AS n FROM events WHERE event = {variables.e} GROUP BY distinct_id) SELECT count(*) AS users FROM g",
			CodeNotInWhere, "variable 'e' is used in a subquery in FROM"},
		{"not keyed: a LIMIT picks rows first", "WITH e AS (SELECT event FROM events WHERE event = {variables.e} ORDER BY event LIMIT 5) SELECT count(*) AS n FROM e",
			CodeNotInWhere, "variable 'e' is used in a subquery in FROM"},
		{"window in a CTE", "WITH r AS (SELECT event, row_number() OVER (ORDER BY timestamp) AS k FROM events WHERE event = {variables.e}) SELECT count(*) AS n FROM r",
			CodeUnsupportedQuery, "window functions (OVER) cannot be materialized yet (line 1, column 39)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := Analyze(c.query, Options{Engine: engine.SQLite})
			require.NoError(t, err)
			if c.code == "" {
				require.True(t, a.Materializable(), "%v", a.Reasons)
				return
			}
			require.False(t, a.Materializable())
			assert.Equal(t, c.code, a.Reasons[0].Code)
			assert.Contains(t, a.Reasons[0].Located(), c.reason)
		})
	}
}
