package materialize

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// TestAnalyzeBetweenAndIntervals: BETWEEN is read as >= and <= (both ends
// variables, or one a constant, which stays in the pre-compute query), and
// a Date variable moved by a constant interval of fixed length, in each
// engine's forms, is compared with the stored column as itself; the rest
// is refused with its reason.
func TestAnalyzeBetweenAndIntervals(t *testing.T) {
	dates := map[string]variable.Type{"from": variable.Date, "to": variable.Date, "n": variable.Number}
	cases := []struct {
		name  string
		e     engine.Engine
		query string
		code  Code   // "" when it materializes
		ops   string // the operators of the last variable
		inPre string // a text the pre-compute query holds
	}{
		{"between both ends", engine.SQLite, "SELECT a, count(*) FROM t WHERE ts BETWEEN {variables.from} AND {variables.to} GROUP BY a", "", "<=", ""},
		{"between constant upper end", engine.SQLite, "SELECT a, count(*) FROM t WHERE amount BETWEEN {variables.n} AND 400 GROUP BY a", "", ">=", `WHERE "amount" <= 400`},
		{"between constant lower end", engine.SQLite, "SELECT a, count(*) FROM t WHERE b = 1 AND amount BETWEEN 10 AND {variables.n} GROUP BY a", "", "<=", `"amount" >= 10`},
		{"between parenthesized", engine.MySQL, "SELECT a FROM t WHERE (ts BETWEEN {variables.from} AND {variables.to})", "", "<=", ""},
		{"not between", engine.SQLite, "SELECT a FROM t WHERE ts NOT BETWEEN {variables.from} AND {variables.to}", CodeUnsupportedOperator, "", ""},
		{"variable between columns", engine.SQLite, "SELECT a FROM t WHERE {variables.n} BETWEEN lo AND hi", CodeInExpression, "", ""},
		{"between end in arithmetic", engine.SQLite, "SELECT a FROM t WHERE amount BETWEEN {variables.n} + 1 AND 400", CodeInExpression, "", ""},
		{"sqlite datetime modifier", engine.SQLite, "SELECT a, count(*) FROM t WHERE ts >= datetime({variables.to}, '-90 days') AND ts < {variables.to} GROUP BY a", "", ">= <", ""},
		{"sqlite two modifiers", engine.SQLite, "SELECT a FROM t WHERE ts >= datetime({variables.to}, '-1 day', '+6 hours')", "", ">=", ""},
		{"sqlite start of day", engine.SQLite, "SELECT a FROM t WHERE ts >= datetime({variables.to}, 'start of day')", CodeInExpression, "", ""},
		{"sqlite months", engine.SQLite, "SELECT a FROM t WHERE ts >= datetime({variables.to}, '-3 months')", CodeInExpression, "", ""},
		{"mysql interval", engine.MySQL, "SELECT a, count(*) FROM t WHERE ts >= {variables.to} - INTERVAL 90 DAY AND ts < {variables.to} GROUP BY a", "", ">= <", ""},
		{"mysql date_sub", engine.MySQL, "SELECT a FROM t WHERE ts >= DATE_SUB({variables.to}, INTERVAL 2 WEEK)", "", ">=", ""},
		{"mysql date_add mirrored", engine.MySQL, "SELECT a FROM t WHERE DATE_ADD({variables.from}, INTERVAL 1 HOUR) > ts", "", "<", ""},
		{"postgres cast interval", engine.PostgreSQL, "SELECT a, count(*) FROM t WHERE ts >= CAST({variables.to} AS timestamp) - INTERVAL '90' DAY GROUP BY a", "", ">=", ""},
		{"postgres cast to date", engine.PostgreSQL, "SELECT a FROM t WHERE ts >= CAST({variables.to} AS date) - INTERVAL '1' DAY", CodeInExpression, "", ""},
		{"clickhouse subtractDays", engine.ClickHouse, "SELECT a FROM t WHERE ts >= subtractDays(toDateTime64({variables.to}, 6, 'UTC'), 7)", "", ">=", ""},
		{"clickhouse other zone", engine.ClickHouse, "SELECT a FROM t WHERE ts >= subtractDays(toDateTime64({variables.to}, 6, 'Asia/Tokyo'), 7)", CodeInExpression, "", ""},
		{"interval of months", engine.MySQL, "SELECT a FROM t WHERE ts >= {variables.to} - INTERVAL 1 MONTH", CodeInExpression, "", ""},
		{"interval of a column", engine.MySQL, "SELECT a FROM t WHERE ts >= {variables.to} - INTERVAL n DAY", CodeInExpression, "", ""},
		{"interval on a number", engine.MySQL, "SELECT a FROM t WHERE ts >= {variables.n} - INTERVAL 1 DAY", CodeInExpression, "", ""},
		{"between moved ends", engine.MySQL, "SELECT a, count(*) FROM t WHERE ts BETWEEN {variables.to} - INTERVAL 7 DAY AND {variables.to} GROUP BY a", "", ">= <=", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := analyzeCase(t, c.query, Options{Engine: c.e, Types: dates}, c.code)
			if c.code != "" {
				return
			}
			v := a.Variables[len(a.Variables)-1]
			assert.Equal(t, c.ops, strings.Join(v.Operators, " "))
			assert.Contains(t, a.Plan.Precompute(), c.inPre)
			assert.NotContains(t, a.Plan.Precompute(), "BETWEEN")
		})
	}
}

// TestReadMovesValues: a read binds a moved use's value moved by its
// interval (and the variable's other uses as they are), on and off a
// bucket's boundary; a missing, null or non-date value is a *ValueError
// naming the variable.
func TestReadMovesValues(t *testing.T) {
	opts := Options{Engine: engine.SQLite, Types: map[string]variable.Type{"to": variable.Date}}
	a, err := Analyze("SELECT uuid FROM events WHERE ts >= datetime({variables.to}, '-7 days', '+1 hour') AND ts < {variables.to}", opts)
	require.NoError(t, err)
	require.True(t, a.Materializable(), a.Reason())
	to := time.Date(2025, 5, 20, 12, 0, 0, 0, time.UTC)
	q, args, err := a.Plan.Read("stored", map[string]any{"to": variable.Timestamp{Time: to}})
	require.NoError(t, err)
	assert.Equal(t, `SELECT "_c0" AS "uuid" FROM "stored" WHERE "to" >= ? AND "to" < ?`, q)
	require.Len(t, args, 2)
	assert.Equal(t, sqliteText(to.Add(-7*24*time.Hour+time.Hour)), args[0])
	assert.Equal(t, sqliteText(to), args[1])

	for _, c := range []struct {
		values map[string]any
		detail string
	}{
		{map[string]any{}, "no value"},
		{map[string]any{"to": nil}, "null"},
		{map[string]any{"to": "2025-05-20"}, "want a date"},
	} {
		_, _, err := a.Plan.Read("stored", c.values)
		var ve *ValueError
		require.True(t, errors.As(err, &ve), "%v", err)
		assert.Equal(t, "to", ve.Variable)
		assert.Contains(t, ve.Detail, c.detail)
	}

	// Bucketed by day: the moved bound off the boundary reads its partial
	// day from the source, on it the stored table alone.
	agg, err := Analyze("SELECT event, count(*) AS n FROM events WHERE ts >= datetime({variables.to}, '-7 days') AND ts < {variables.to} GROUP BY event", opts)
	require.NoError(t, err)
	require.True(t, agg.Materializable(), agg.Reason())
	q, args, err = agg.Plan.Read("stored", map[string]any{"to": variable.Timestamp{Time: time.Date(2025, 5, 20, 0, 0, 0, 0, time.UTC), DateOnly: true}})
	require.NoError(t, err)
	assert.NotContains(t, q, `"events"`, "an aligned range reads the stored table alone")
	require.Len(t, args, 2)
	assert.Equal(t, sqliteText(time.Date(2025, 5, 13, 0, 0, 0, 0, time.UTC)), args[0])
	q, _, err = agg.Plan.Read("stored", map[string]any{"to": variable.Timestamp{Time: to}})
	require.NoError(t, err)
	assert.Contains(t, q, `"events"`, "an unaligned range reads its partial days from the source")
}

// sqliteText is how a SQLite read binds an instant.
func sqliteText(t time.Time) any {
	v, _, err := engine.SQLite.Arg(variable.Timestamp{Time: t})
	if err != nil {
		panic(err)
	}
	return v
}
