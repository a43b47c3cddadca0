package endpoint

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// TestReadFault: each engine's message about an unknown column or table,
// or a syntax error, is read as such with the name (or the text the error
// is near) it quotes; other messages are other faults.
func TestReadFault(t *testing.T) {
	for _, c := range []struct {
		msg  string
		kind faultKind
		name string
	}{
		{"no such column: evnt", faultColumn, "evnt"},
		{"no such column: e.evnt", faultColumn, "e.evnt"},
		{`column "evnt" does not exist`, faultColumn, "evnt"},
		{"column e.evnt does not exist", faultColumn, "e.evnt"},
		{"Unknown column 'evnt' in 'SELECT'", faultColumn, "evnt"},
		{"Unknown expression identifier `evnt`", faultColumn, "evnt"},
		{"Identifier 'e.evnt' cannot be resolved from table with name e", faultColumn, "e.evnt"},
		{"no such table: evnts", faultTable, "evnts"},
		{`relation "evnts" does not exist`, faultTable, "evnts"},
		{"Table 'db.evnts' doesn't exist", faultTable, "db.evnts"},
		{"Unknown table expression identifier 'evnts'", faultTable, "evnts"},
		{"Table default.evnts does not exist", faultTable, "default.evnts"},
		{`near ",": syntax error`, faultSyntax, ","},
		{`syntax error at or near "FROM"`, faultSyntax, "FROM"},
		{"incomplete input", faultSyntax, ""},
		{"syntax error at end of input", faultSyntax, ""},
		{"You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near ' 1 FROM events\n) AS endpoint_q LIMIT ? OFFSET ?' at line 2", faultSyntax, " 1 FROM events\n) AS endpoint_q LIMIT ? OFFSET ?"},
		{"Syntax error: failed at position 32 (1) (line 2, col 16): 1 FROM events. Expected one of: a, b", faultSyntax, "1 FROM events"},
		{"division by zero", faultOther, ""},
		{"ambiguous column name: event", faultOther, ""},
	} {
		kind, name := readFault(c.msg)
		assert.Equal(t, c.kind, kind, c.msg)
		assert.Equal(t, c.name, name, c.msg)
	}
}

// TestCleanMessage: the statement the Service wraps around a query is cut
// from an engine's message, and MySQL's and ClickHouse's syntax errors
// read as one.
func TestCleanMessage(t *testing.T) {
	for msg, want := range map[string]string{
		"no such column: evnt": "no such column: evnt",
		"You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near ') AS endpoint_q LIMIT ? OFFSET ?' at line 3": "syntax error at the end of the query",
		"Syntax error: failed at position 48 ()) (line 3, col 1): ) AS endpoint_q LIMIT {p1:Int64} OFFSET {p2:Int64} SETTINGS max_execution_time = 30, readonly = 1. Expected one of: x":       "syntax error at the end of the query",
	} {
		assert.Equal(t, want, cleanMessage(msg), msg)
	}
}

// TestSuggest: the nearest names by Damerau-Levenshtein distance, case
// aside; all of them listed when none is near.
func TestSuggest(t *testing.T) {
	assert.Equal(t, 1, distance("evnt", "event"))
	assert.Equal(t, 1, distance("evnet", "event"), "a transposition is one edit")
	assert.Equal(t, 0, distance("", ""))
	assert.Equal(t, 3, distance("abc", ""))
	assert.Equal(t, "did you mean event?", suggest("evnt", []string{"uuid", "event", "timestamp"}, "columns"))
	assert.Equal(t, "did you mean Event?", suggest("EVNT", []string{"Event"}, "columns"))
	assert.Equal(t, "did you mean orders or ordre?", suggest("ordrs", []string{"orders", "order", "ordre"}, "tables"))
	assert.Equal(t, "columns: uuid, timestamp.", suggest("zzz", []string{"uuid", "timestamp"}, "columns"))
}

// TestLocate: where a name or an engine's quoted text is in the query.
func TestLocate(t *testing.T) {
	sql := "SELECT e.evnt\nFROM \"events\" AS e"
	off, ok := locateName(engine.PostgreSQL.Lexical(), sql, "e.evnt", "evnt")
	assert.True(t, ok)
	assert.Equal(t, 7, off)
	off, ok = locateName(engine.PostgreSQL.Lexical(), sql, "events", "events")
	assert.True(t, ok)
	line, col := position(sql, off)
	assert.Equal(t, [2]int{2, 6}, [2]int{line, col})
	_, _, ok = locateText("SELECT a,, b FROM t", ",")
	assert.False(t, ok, "a text the query holds twice has no one place")
	off, n, ok := locateText("SELECT a,, 1 FROM t", "1 FROM (SELECT * FROM t WHERE tenant = ?) AS t")
	assert.True(t, ok)
	assert.Equal(t, [2]int{11, 7}, [2]int{off, n})
	assert.True(t, balanced(engine.SQLite.Lexical(), "SELECT count(*) FROM t WHERE"))
	assert.False(t, balanced(engine.SQLite.Lexical(), "SELECT f(a,)) FROM t"))
	assert.Equal(t, []string{"events", "s.persons"}, queriedTables(engine.SQLite.Lexical(), "SELECT * FROM events e JOIN s.persons p ON 1 = 1 WHERE x IN (SELECT y FROM events)"))
}
