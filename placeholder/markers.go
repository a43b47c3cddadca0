package placeholder

import (
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
)

// BindMarker is a bind marker written by hand in a query's SQL text: '?',
// '?1', '$1', ':name', '@name' or '$name'. A saved query must use
// {variables.<code_name>} instead: a hand-written marker would run with no
// argument bound to it.
type BindMarker struct {
	// Text is the marker as written ("?", "$2", ":country").
	Text string
	// Offset is the byte offset of its first character.
	Offset int
	// Line and Column locate it; both are 1-based and Column counts runes.
	Line, Column int
}

// BindMarkers returns the bind markers that e's drivers would read in sql,
// outside string literals, quoted identifiers and comments, in order of
// appearance; a quote or comment left open is a *SyntaxError, as in Scan.
//
// Which texts are markers depends on the engine (see its ReadsMarker); a
// nil engine finds what any engine would read. SQLite reads all of ?,
// ?NNN, :name, @name, $name and $NNN. PostgreSQL
// reads only $NNN: its '?' is a jsonb operator and '@' the absolute value.
// MySQL reads only '?' ('@name' is a user variable). ClickHouse's driver
// reads ?, $NNN and @name. Casts ("x::text"), assignments (":="), "@@"
// (MySQL system variables, PostgreSQL text search) and identifiers that
// merely contain '$' ("a$1") are never markers.
func BindMarkers(e engine.Engine, sql string) ([]BindMarker, error) {
	reads, lx := readsMarker(e), anyReading
	if e != nil {
		lx = e.Lexical()
	}
	var out []BindMarker
	pos := positioner{src: sql}
	var sc sqltoken.Scanner
	sc.Reset(lx, sql)
	for {
		t, ok := sc.Next()
		if !ok {
			return out, nil
		}
		switch {
		case t.Is(sqltoken.Unclosed):
			return nil, openError(sql, t, &pos)
		case t.Kind == sqltoken.BindMarker && reads(sql[t.Start], sql[t.Start+1:t.End]):
			line, col := pos.at(t.Start)
			out = append(out, BindMarker{Text: sql[t.Start:t.End], Offset: t.Start, Line: line, Column: col})
		}
	}
}

// readsMarker returns e's ReadsMarker, or for a nil engine one that
// reads what any engine reads.
func readsMarker(e engine.Engine) func(sigil byte, rest string) bool {
	if e != nil {
		return e.ReadsMarker
	}
	return func(sigil byte, rest string) bool {
		for _, e := range engine.All() {
			if e.ReadsMarker(sigil, rest) {
				return true
			}
		}
		return false
	}
}
