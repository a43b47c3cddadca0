package placeholder

import "github.com/endpointkit/endpointkit/endpoint/engine"

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
	reads := readsMarker(e)
	var out []BindMarker
	pos := positioner{src: sql}
	add := func(start, end int) {
		line, col := pos.at(start)
		out = append(out, BindMarker{Text: sql[start:end], Offset: start, Line: line, Column: col})
	}
	for i := 0; i < len(sql); {
		c := sql[i]
		switch classes[c] {
		case clSpace:
			i++
		case clIdent:
			j := wordEnd(sql, i)
			if c == '$' && reads('$', sql[i+1:j]) {
				add(i, j)
			}
			i = j
		case clDash, clSlash, clQuote:
			end, what, err := skipNonCode(sql, i, &pos)
			if err != nil {
				return nil, err
			}
			if what == skippedNothing { // a lone '-' or '/'
				end = i + 1
			}
			i = end
		default:
			end, ok := markerAt(sql, i)
			if ok && reads(c, sql[i+1:end]) {
				add(i, end)
			}
			i = end
		}
	}
	return out, nil
}

// markerAt returns the end of the marker that the byte at sql[i] may
// open: ':' or '@' and a name, or '?' and digits, if any. ok is false
// where no marker opens; the end then skips a doubled ':' or '@' as one
// token ("::" cast, "@@" variable or operator), else the byte alone.
func markerAt(sql string, i int) (end int, ok bool) {
	c, j, n := sql[i], i+1, len(sql)
	switch c {
	case ':', '@':
		if j < n && sql[j] == c {
			return j + 1, false
		}
		if j >= n || !isNameStart(sql[j]) {
			return j, false
		}
		for j < n && isNameByte(sql[j]) {
			j++
		}
		return j, true
	case '?':
		for j < n && sql[j] >= '0' && sql[j] <= '9' {
			j++
		}
		return j, true
	}
	return j, false
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

func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}
