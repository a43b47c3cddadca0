package materialize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// TestLikeEscapeOnStoredKey: LIKE with a constant ESCAPE on a stored key
// materializes (kind match), the read applying the same escape to the
// key; an ESCAPE that is not a constant string is refused, naming it and
// its place. (TestReadEqualsInline/like_escape_key and
// TestTailEqualsInline/like_escape_key read it as inline.)
func TestLikeEscapeOnStoredKey(t *testing.T) {
	for _, e := range []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL} {
		a, err := Analyze(`SELECT event, count(*) AS n FROM events WHERE event NOT LIKE {variables.p} ESCAPE '!' GROUP BY event`, Options{Engine: e})
		require.NoError(t, err)
		require.True(t, a.Materializable(), "%s: %v", e.Name(), a.Reasons)
		assert.Equal(t, KindMatch, a.Variables[0].Kind)
		read, args, err := a.Plan.Read("stored", map[string]any{"p": "signed!_%"})
		require.NoError(t, err)
		assert.Contains(t, read, " NOT LIKE ", e.Name())
		assert.Contains(t, read, " ESCAPE '!'", e.Name())
		assert.Equal(t, []any{"signed!_%"}, args)
	}
	a, err := Analyze("SELECT event, count(*) AS n FROM events\nWHERE event LIKE {variables.p} ESCAPE {variables.e} GROUP BY event", Options{Engine: engine.PostgreSQL})
	require.NoError(t, err)
	require.False(t, a.Materializable())
	r := a.Variables[0].Reason
	require.NotNil(t, r)
	assert.Equal(t, CodeUnsupportedOperator, r.Code)
	assert.Contains(t, r.Message, "ESCAPE that is not a constant string")
	assert.Contains(t, r.Message, "ESCAPE '!'")
	assert.Equal(t, 2, r.Line)
}

// TestWindowInFixedSubquery: a window function in a subquery with no
// variable beneath it materializes (the table computes it over the rows
// a run does); with a live tail it is refused, naming the window and its
// place; a window over rows a variable selects, even where the
// variable's condition would be lifted out of its subquery, stays
// refused. (TestReadEqualsInline/window_fixed_subquery_* read it as
// inline.)
func TestWindowInFixedSubquery(t *testing.T) {
	const fixed = `SELECT e.event, count(*) AS n FROM events e
WHERE e.distinct_id IN (SELECT distinct_id FROM (SELECT distinct_id, row_number() OVER (PARTITION BY distinct_id ORDER BY timestamp, uuid) AS k FROM events) x WHERE k = 1)
AND e.timestamp >= {variables.from} GROUP BY e.event`
	opts := Options{Engine: engine.PostgreSQL, Types: map[string]variable.Type{"from": variable.Date}}
	a, err := Analyze(fixed, opts)
	require.NoError(t, err)
	require.True(t, a.Materializable(), "%v", a.Reasons)

	opts.TailColumn = "e.timestamp"
	a, err = Analyze(fixed, opts)
	require.NoError(t, err)
	require.False(t, a.Materializable())
	assert.Equal(t, CodeUnsupportedQuery, a.Reasons[0].Code)
	assert.Contains(t, a.Reasons[0].Message, "window function (OVER) in a subquery cannot be materialized with a live tail")
	assert.Equal(t, 2, a.Reasons[0].Line)
	assert.Equal(t, 70, a.Reasons[0].Column) // row_number

	for _, q := range []string{
		// The variable is beneath the window: lifted out of the
		// subquery, it would leave the window over every row.
		`SELECT d.event, count(*) AS n FROM (SELECT event, rank() OVER (ORDER BY event) AS r FROM events WHERE event = {variables.e}) d
		JOIN events x ON x.event = d.event GROUP BY d.event`,
		`SELECT d.event, count(*) AS n FROM (SELECT event, row_number() OVER (ORDER BY timestamp, uuid) AS r FROM events WHERE timestamp >= {variables.from}) d
		JOIN events x ON x.uuid = d.event GROUP BY d.event`,
	} {
		a, err := Analyze(q, Options{Engine: engine.PostgreSQL, Types: map[string]variable.Type{"from": variable.Date}})
		require.NoError(t, err)
		require.False(t, a.Materializable(), q)
		assert.Contains(t, a.Reason(), "window function (OVER) in a subquery or a WITH query materializes only where a read computes it", q)
	}
}

// TestVariableInPlainSelect: a variable in the SELECT list of a query
// that does not aggregate is computed at read (kind read): the stored
// table keeps the columns its item reads, and the read binds the value
// where the query has it. (TestReadEqualsInline/variable_in_plain_select
// and TestTailEqualsInline/variable_in_plain_select read it as inline.)
func TestVariableInPlainSelect(t *testing.T) {
	a, err := Analyze(`SELECT uuid, {variables.label} AS label, CASE WHEN event = {variables.label} THEN 1 ELSE 0 END AS hit FROM events WHERE distinct_id = {variables.user}`,
		Options{Engine: engine.SQLite})
	require.NoError(t, err)
	require.True(t, a.Materializable(), "%v", a.Reasons)
	assert.Equal(t, KindRead, a.Variables[0].Kind)
	assert.Equal(t, KindKey, a.Variables[1].Kind)
	assert.Equal(t, `SELECT "uuid" AS "_c0", "event" AS "_x0", "distinct_id" AS "user" FROM "events"`, a.Plan.Precompute())
	read, args, err := a.Plan.Read("stored", map[string]any{"label": "purchase", "user": "u1"})
	require.NoError(t, err)
	assert.Equal(t, `SELECT "_c0" AS "uuid", ? AS "label", CASE WHEN "_x0" = ? THEN 1 ELSE 0 END AS "hit" FROM "stored" WHERE "user" = ?`, read)
	assert.Equal(t, []any{"purchase", "purchase", "u1"}, args)
	_, _, err = a.Plan.Read("stored", map[string]any{"user": "u1"})
	var ve *ValueError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "label", ve.Variable)
}
