package executortest

import "github.com/endpointkit/endpointkit/sql/engine"

// Fixture tells the suite how to write the one table it creates, so that
// its SQL stays portable: the suite writes
//
//	CREATE TABLE <name> (id <Integer>, name <Text>, score <Float>) <TableOptions>
//
// and otherwise only INSERT ... VALUES, INSERT ... SELECT, SELECT with
// WHERE and ORDER BY, and DROP TABLE IF EXISTS, with identifiers quoted and
// markers written by the executor's dialect. Every column must accept
// NULL.
type Fixture struct {
	// Integer is a signed 64-bit integer column type.
	Integer string
	// Float is a double-precision floating-point column type.
	Float string
	// Text is a text column type whose equality is exact: byte for byte,
	// case- and accent-sensitive, without padding.
	Text string
	// TableOptions follows the column list (ClickHouse needs an engine).
	TableOptions string
	// TextRejectsNUL says that the engine's text cannot hold U+0000
	// (PostgreSQL): the suite then wants the insert of such a value to
	// fail with an error, rather than round-trip.
	TextRejectsNUL bool
	// Slow is a query that runs for a minute or more, or never ends, on
	// the engine, reading no table: the suite runs it with a
	// Bounds.Timeout of a fraction of a second and wants it ended within
	// a few seconds. Without one the time bound is not checked.
	Slow string
}

// fixtures are the suite's column types per engine name: types that hold
// NULL and compare text byte for byte.
var fixtures = map[string]Fixture{
	"sqlite": {Integer: "INTEGER", Float: "REAL", Text: "TEXT",
		Slow: "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"},
	"postgresql": {Integer: "BIGINT", Float: "DOUBLE PRECISION", Text: "TEXT", TextRejectsNUL: true, Slow: "SELECT pg_sleep(60)"},
	// The default collations ignore case (and, in MySQL 8, accents),
	// which would let a hostile value match another's row.
	"mysql": {Integer: "BIGINT", Float: "DOUBLE", Text: "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", Slow: "SELECT SLEEP(60)"},
	"clickhouse": {Integer: "Nullable(Int64)", Float: "Nullable(Float64)", Text: "Nullable(String)", TableOptions: "ENGINE = Memory",
		Slow: "SELECT count() FROM system.numbers"},
}

// FixtureFor returns the fixture for engine e, which Run uses. An engine
// this package does not know (or nil) gets standard SQL types.
func FixtureFor(e engine.Engine) Fixture {
	if e != nil {
		if f, ok := fixtures[e.Name()]; ok {
			return f
		}
	}
	return Fixture{Integer: "BIGINT", Float: "DOUBLE PRECISION", Text: "TEXT"}
}

// createTable returns the DDL of the suite's table named name.
func (f Fixture) createTable(d engine.Engine, name string) string {
	sql := "CREATE TABLE " + d.QuoteIdent(name) + " (id " + f.Integer + ", name " + f.Text + ", score " + f.Float + ")"
	if f.TableOptions != "" {
		sql += " " + f.TableOptions
	}
	return sql
}
