package equivalence

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// difference is an entry of the allow-list: a case (spec#i), every case of
// a spec (spec), or of the specs a prefix names (prefix*), on which the
// named engines answer otherwise than they should, for a reason
// docs/engines.md explains under the same id. The test fails on a
// difference that is not listed, and on an entry whose difference no
// longer occurs on an engine it names that ran a case it covers.
type difference struct {
	id      string
	engines []string
	// of is what differs (crossEngine when zero).
	of  differs
	why string
}

// differs is what a listed difference is between.
type differs int

const (
	// crossEngine: the engine's run and SQLite's.
	crossEngine differs = iota
	// storedValues: the run after Materialize and the inline run on the
	// same engine (their values, or the JSON types of equal values).
	storedValues
)

// listed is the allow-list.
var listed = []difference{
	{id: "text_like", engines: []string{"postgres", "mysql", "clickhouse"},
		why: "SQLite's LIKE ignores the case of ASCII letters; PostgreSQL's, ClickHouse's, and MySQL's on a binary collation, do not"},
	{id: "text_eq_default_collation", engines: []string{"mysql"},
		why: "a column of MariaDB's default collation ignores letter case, accents and trailing spaces in comparisons"},
	{id: "text_against_number", engines: []string{"postgres", "mysql", "clickhouse"},
		why: "a Number compared with a text column: SQLite compares as text, PostgreSQL refuses (pgx cannot send a number as text), ClickHouse refuses (no supertype of String and Int64), MySQL compares as numbers ('apple' = 0)"},
	{id: "null_order", engines: []string{"postgres", "clickhouse"},
		why: "PostgreSQL and ClickHouse sort NULL after every value in ascending order; SQLite and MySQL before"},
	{id: "integer_division", engines: []string{"mysql", "clickhouse"},
		why: "MySQL's / divides integers exactly (7 / 2 = 3.5000), ClickHouse's in double precision (3.5); SQLite and PostgreSQL truncate"},
	{id: "avg_of_integers", engines: []string{"mysql"},
		why: "MySQL's avg of integers is a DECIMAL of 4 decimals (div_precision_increment)"},
	{id: "json_native_null", engines: []string{"mysql", "clickhouse"},
		why: "MySQL's JSON_UNQUOTE(JSON_EXTRACT()) answers a JSON null as the text 'null', ClickHouse's JSONExtractString as ''"},
	{id: "json_native_number", engines: []string{"postgres", "mysql", "clickhouse"},
		why: "SQLite's json_extract answers a JSON number as a number; PostgreSQL's ->>, MySQL's JSON_UNQUOTE and ClickHouse's JSONExtractString as text"},
	{id: "trends_filter4_icontains_*", engines: []string{"postgres", "mysql", "clickhouse"},
		why: "SQLite's lower() folds ASCII letters only, so icontains does not match Ü with ü there"},
	{id: "date_eq_ts#3", engines: []string{"postgres", "mysql", "clickhouse"}, why: wholeDay},
	{id: "date_eq_tstz#3", engines: []string{"postgres", "mysql", "clickhouse"}, why: wholeDay},
	{id: "date_after_ts#0", engines: []string{"postgres", "mysql", "clickhouse"}, why: wholeDay},
	{id: "date_after_tstz#0", engines: []string{"postgres", "mysql", "clickhouse"}, why: wholeDay},
}

// wholeDay is the reason of the whole-day cases: it is the storage that
// differs, not the engine (SQLite stores every timestamp as text).
const wholeDay = "a whole day (2025-05-01) is bound as the text '2025-05-01', which a text timestamp column compares as " +
	"text (before '2025-05-01 00:00:00') and a timestamp column as midnight: = and > differ, >= and < agree"

// matches reports whether allow-list id covers case caseID of spec name.
func matches(id, name, caseID string) bool {
	switch {
	case strings.HasSuffix(id, "*"):
		return strings.HasPrefix(name, strings.TrimSuffix(id, "*"))
	case strings.Contains(id, "#"):
		return id == caseID
	}
	return id == name
}

// listedFor returns the allow-list entry covering a difference of one
// kind in a case on an engine.
func listedFor(of differs, name, caseID, engineName string) (*difference, bool) {
	for i, l := range listed {
		if l.of == of && matches(l.id, name, caseID) && slices.Contains(l.engines, engineName) {
			return &listed[i], true
		}
	}
	return nil, false
}

// TestDifferencesDocumented: docs/engines.md lists every allow-list entry
// by its id, so that a reader finds each remaining difference with the
// case that shows it.
func TestDifferencesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "engines.md"))
	require.NoError(t, err)
	for _, l := range listed {
		assert.Contains(t, string(doc), "`"+l.id+"`", "docs/engines.md does not list `%s` (%s)", l.id, l.why)
		if assert.NotEqual(t, "", l.why, "allow-list entry %s names no reason or no engine", l.id) {
			assert.NotEmpty(t, l.engines, "allow-list entry %s names no reason or no engine", l.id)
		}
	}
}
