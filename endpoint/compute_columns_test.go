package endpoint_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// TestEmptyAnswerKeepsTypes: on SQLite, whose expressions have a type
// only through their values, an answer with no rows types an aggregate
// column as an answer with rows does (INTEGER), not "".
func TestEmptyAnswerKeepsTypes(t *testing.T) {
	e := newEnv(t)
	e.create(t, "per_country", e.query("SELECT country, count(*) AS n, sum(amount) AS total FROM orders WHERE country = {variables.country} GROUP BY country", "country"))
	full, err := run(e, "per_country", map[string]any{"country": "US"})
	require.NoError(t, err)
	require.NotEmpty(t, full.Results)
	empty, err := e.svc.Run(context.Background(), "1", "per_country", endpoint.RunRequest{Variables: map[string]any{"country": "ZZ"}, Refresh: endpoint.RefreshForce})
	require.NoError(t, err)
	require.Empty(t, empty.Results)
	assert.Equal(t, full.Columns, empty.Columns)
	assert.Equal(t, full.Types, empty.Types)
	assert.Equal(t, "INTEGER", empty.Types[1])
	// sum's type is its values' (INTEGER or REAL), which SQLite does not
	// know before it runs: none, with rows and without.
	assert.Equal(t, []endpoint.ColumnKind{endpoint.KindString, endpoint.KindInteger, endpoint.KindOther}, empty.ColumnKinds())
}

// TestEmptyFirstAnswerTypes: on SQLite, a version whose first answers
// have no rows types its expressions as the answers with rows do: count,
// avg, CAST and lower by the type SQLite gives them whatever the values,
// sum (whose type is its values') as none, the same before and after an
// answer with rows.
func TestEmptyFirstAnswerTypes(t *testing.T) {
	e := newEnv(t)
	e.create(t, "typed", e.query("SELECT country, count(*) AS n, avg(amount) AS mean, sum(amount) AS total, "+
		"CAST(sum(amount) AS INTEGER) AS whole, lower(country) lc FROM orders WHERE country = {variables.country} GROUP BY country", "country"))
	want := []string{"TEXT", "INTEGER", "REAL", "", "INTEGER", "TEXT"}
	for i, country := range []string{"ZZ", "ZZ", "US", "ZZ"} {
		res, err := e.svc.Run(context.Background(), "1", "typed", endpoint.RunRequest{Variables: map[string]any{"country": country}, Refresh: endpoint.RefreshForce})
		require.NoError(t, err)
		assert.Equal(t, want, res.Types, "run %d (%s)", i, country)
		assert.Equal(t, country == "US", len(res.Results.([][]any)) > 0)
	}
}

// TestValueTypedColumnNotLearned: on SQLite, a column whose values are
// INTEGER in one row and REAL in another keeps no type, rather than the
// type of the first answer's first value, and its values are SQLite's.
func TestValueTypedColumnNotLearned(t *testing.T) {
	e := newEnv(t)
	e.create(t, "mixed", e.query("SELECT id, CASE WHEN id % 2 = 0 THEN 1.5 ELSE 1 END AS x FROM orders ORDER BY id"))
	for range 2 {
		res, err := e.svc.Run(context.Background(), "1", "mixed", endpoint.RunRequest{Refresh: endpoint.RefreshForce})
		require.NoError(t, err)
		assert.Equal(t, []string{"INTEGER", ""}, res.Types)
		rows := res.Results.([][]any)
		assert.Equal(t, int64(1), rows[0][1])
		assert.Equal(t, 1.5, rows[1][1])
	}
}

// TestFloatColumnKind: every value of a REAL column is a float64, an
// integral one (10) as one with a fraction (25.5), whatever the row.
func TestFloatColumnKind(t *testing.T) {
	e := newEnv(t)
	e.create(t, "amounts", e.query("SELECT id, avg(amount) AS a FROM orders GROUP BY id ORDER BY id"))
	res, err := run(e, "amounts", nil)
	require.NoError(t, err)
	for _, row := range res.Results.([][]any) {
		assert.IsType(t, float64(0), row[1], "row %v", row)
		assert.IsType(t, int64(0), row[0], "row %v", row)
	}
}

// TestColumnKindOf: the kinds of the engines' type names.
func TestColumnKindOf(t *testing.T) {
	for _, tc := range []struct {
		engine engine.Engine
		typ    string
		want   endpoint.ColumnKind
	}{
		{engine.PostgreSQL, "INT8", endpoint.KindInteger},
		{engine.PostgreSQL, "NUMERIC", endpoint.KindDecimal},
		{engine.PostgreSQL, "FLOAT8", endpoint.KindFloat},
		{engine.PostgreSQL, "TIMESTAMPTZ", endpoint.KindTime},
		{engine.SQLite, "NUMERIC", endpoint.KindFloat},
		{engine.SQLite, "", endpoint.KindOther},
		{engine.MySQL, "DECIMAL", endpoint.KindDecimal},
		{engine.MySQL, "BIGINT", endpoint.KindInteger},
		{engine.ClickHouse, "Nullable(Decimal(38, 2))", endpoint.KindDecimal},
		{engine.ClickHouse, "LowCardinality(String)", endpoint.KindString},
		{engine.ClickHouse, "UInt64", endpoint.KindInteger},
		{engine.ClickHouse, "DateTime64(3, 'UTC')", endpoint.KindTime},
		{engine.ClickHouse, "Array(String)", endpoint.KindOther},
	} {
		assert.Equal(t, tc.want, endpoint.ColumnKindOf(tc.engine, tc.typ), "%s %s", tc.engine, tc.typ)
	}
}

// TestFloatColumnJSON: json.Marshal of an answer (what the MCP tools and a
// debug answer write) writes an integral value of a float column as a
// float, 256.0, while the Go value stays the float64 256; an integer
// column stays an integer.
func TestFloatColumnJSON(t *testing.T) {
	e := newEnv(t)
	e.create(t, "whole", e.query("SELECT id, CAST(256 AS REAL) AS a, 256.5 AS b FROM orders ORDER BY id LIMIT 1"))
	res, err := run(e, "whole", nil)
	require.NoError(t, err)
	rows := res.Results.([][]any)
	require.Len(t, rows, 1)
	assert.Equal(t, float64(256), rows[0][1])
	b, err := json.Marshal(res)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"results":[[1,256.0,256.5]]`)
	var back map[string]any
	require.NoError(t, json.Unmarshal(b, &back), "%s", b)
	assert.Equal(t, float64(256), rows[0][1], "marshalling leaves the Go value")
}

// TestRefreshChecksColumns: a refresh whose query the engine now describes
// with another type than its version was saved with (the view it reads
// changed) fails with a status error naming the column, told to the
// Observer (logged and counted), the last good table still serving, and
// builds no table of the other shape.
func TestRefreshChecksColumns(t *testing.T) {
	rec := &recorder{}
	e := newEnv(t, func(c *endpoint.Config) { c.Observer = rec })
	_, err := e.db.Exec("CREATE VIEW sales AS SELECT country, paid FROM orders")
	require.NoError(t, err)
	e.createMat(t, "by_country", e.query("SELECT paid, count(*) AS n FROM sales GROUP BY paid"), endpoint.CreateRequest{})
	ctx := context.Background()
	require.NoError(t, e.svc.Materialize(ctx, "1", "by_country"))
	before, err := run(e, "by_country", nil)
	require.NoError(t, err)
	require.True(t, before.EndpointMaterialized)

	_, err = e.db.Exec("DROP VIEW sales; CREATE VIEW sales AS SELECT country, plan AS paid FROM orders")
	require.NoError(t, err)
	err = e.svc.Materialize(ctx, "1", "by_country")
	var ee *endpoint.Error
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, endpoint.CodeMaterializationFailed, ee.Code)
	assert.Contains(t, ee.Detail, "column 1 of the query is now paid TEXT where version 1 was saved with paid INTEGER")
	var changed *endpoint.ColumnsChangedError
	require.ErrorAs(t, err, &changed)
	assert.Equal(t, []string{"paid", "n"}, changed.SavedColumns)

	report, err := e.svc.MaterializationStatus(ctx, "1", "by_country")
	require.NoError(t, err)
	require.NotNil(t, report.Status)
	assert.Equal(t, endpoint.MaterializationStatus("failed"), *report.Status)
	require.NotNil(t, report.LastError)
	assert.Contains(t, *report.LastError, "column 1 of the query is now paid TEXT")
	rec.mu.Lock()
	last := rec.refreshes[len(rec.refreshes)-1]
	rec.mu.Unlock()
	assert.ErrorAs(t, last.Err, &changed, "the Observer is told why")

	after, err := run(e, "by_country", nil)
	require.NoError(t, err)
	assert.True(t, after.EndpointMaterialized, "the last good table still serves")
	assert.Equal(t, before.Types, after.Types)
	var n int
	require.NoError(t, e.db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name LIKE '%_next'").Scan(&n))
	assert.Zero(t, n, "no table of the other shape is left")
}
