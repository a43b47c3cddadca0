package engine_test

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
)

// TestDifferencesMovedHere: the differences that code outside this package
// told apart by an engine's name (issue 38) are the engines' own now, with
// the same SQL: the measure of a stored table, the cast of a decimal sum
// back to an integer, the engines whose aggregates are decimals, SQLite's
// affinities and embedding, MySQL's missing partial indexes and RETURNING.
func TestDifferencesMovedHere(t *testing.T) {
	for _, c := range []struct {
		e                        engine.Engine
		prepare, measure, cast   string
		decimal, embedded, typed bool
	}{
		{engine.SQLite, "", "SELECT coalesce(sum(pgsize), 0) AS bytes FROM dbstat WHERE name = 'ek_t'", "BIGINT", false, true, false},
		{engine.PostgreSQL, "", "SELECT pg_total_relation_size('ek_t'::regclass) AS bytes", "bigint", true, false, true},
		{engine.MySQL, "ANALYZE TABLE `ek_t`", "SELECT coalesce(sum(data_length + index_length), 0) AS bytes FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'ek_t'", "SIGNED", true, false, true},
		{engine.ClickHouse, "", "SELECT sum(bytes_on_disk) AS bytes FROM system.parts WHERE active AND database = currentDatabase() AND table = 'ek_t'", "Int64", false, false, true},
	} {
		prepare, measure := c.e.TableBytes("ek_t")
		assert.Equal(t, c.prepare, prepare, c.e.Name())
		assert.Equal(t, c.measure, measure, c.e.Name())
		assert.Equal(t, c.cast, c.e.IntegerCast(), c.e.Name())
		assert.Equal(t, c.decimal, c.e.DecimalAggregates(), c.e.Name())
		assert.Equal(t, c.embedded, c.e.Embedded(), c.e.Name())
		assert.Equal(t, c.typed, c.e.TypedAsDeclared(), c.e.Name())
	}
	for _, c := range []struct {
		e       engine.Engine
		prefix  string
		form    engine.PlanForm
		display string
	}{
		{engine.SQLite, "EXPLAIN QUERY PLAN ", engine.PlanSQLite, "SQLite"},
		{engine.PostgreSQL, "EXPLAIN (FORMAT JSON) ", engine.PlanPostgresJSON, "PostgreSQL"},
		{engine.MySQL, "EXPLAIN ", engine.PlanMySQL, "MySQL"},
		{engine.ClickHouse, "", engine.PlanNone, "ClickHouse"},
	} {
		prefix, form := c.e.Explain()
		assert.Equal(t, c.prefix, prefix, c.e.Name())
		assert.Equal(t, c.form, form, c.e.Name())
		assert.Equal(t, c.display, c.e.DisplayName(), c.e.Name())
	}
	_, measure := engine.SQLite.TableBytes("it's")
	assert.Contains(t, measure, "'it''s'", "a quote in a name is doubled")
	for _, s := range []engine.Store{engine.SQLite, engine.PostgreSQL} {
		assert.True(t, s.PartialIndexes(), s.Name())
		assert.True(t, s.UpsertReturns(), s.Name())
	}
	assert.False(t, engine.MySQL.PartialIndexes())
	assert.False(t, engine.MySQL.UpsertReturns())
}
