//go:build chdb

package chdb

import (
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
)

// withClause returns query with list (settings "name = value, ...") in a
// SETTINGS clause where ClickHouse reads one for the whole statement, so
// that the settings travel with it rather than in SET statements of their
// own; ok is false, and query unchanged, for a statement that takes no
// SETTINGS clause (USE, SET, SYSTEM, a transaction's statements) or would
// keep it in what it stores (CREATE VIEW, ALTER ... MODIFY QUERY), none of
// which reads data.
//
// An INSERT takes the clause before its data (VALUES, FORMAT, the SELECT,
// or a parenthesized SELECT; after the list of a SETTINGS clause it has
// there): data after VALUES or FORMAT is read raw, up to the end. Any
// other statement takes it at its end, after its last token (a trailing
// comment or ';' is dropped): a SELECT's own SETTINGS clause, a CREATE
// TABLE ... AS SELECT's and an INSERT ... SELECT's SELECT's, or the
// clause ClickHouse reads after DDL (CREATE, DROP, ALTER, EXCHANGE,
// TRUNCATE, OPTIMIZE).
func withClause(query, list string) (_ string, ok bool) {
	toks := topLevel(query)
	if len(toks) == 0 {
		return query, false
	}
	first := toks[0]
	if first.Kind == sqltoken.Word {
		switch strings.ToUpper(first.Text(query)) {
		case "USE", "SET", "SYSTEM", "BEGIN", "COMMIT", "ROLLBACK", "START":
			return query, false
		case "CREATE", "ATTACH", "ALTER":
			if storesQuery(query, toks) {
				return query, false
			}
		}
	}
	for i, t := range toks {
		if t.depth == 0 && isWord(query, t.Token, "INSERT") {
			if at, more := insertData(query, toks[i+1:]); at >= 0 {
				if more {
					// After the last setting of the list.
					end := toks[i].End
					for _, u := range toks[i+1:] {
						if u.Start >= at {
							break
						}
						end = u.End
					}
					return query[:end] + ", " + list + " " + query[at:], true
				}
				return query[:at] + "SETTINGS " + list + " " + query[at:], true
			}
			break
		}
	}
	last := len(toks) - 1
	for last > 0 && toks[last].Kind == sqltoken.Punct && query[toks[last].Start] == ';' {
		last--
	}
	return query[:toks[last].End] + " SETTINGS " + list, true
}

// storesQuery reports whether a CREATE, ATTACH or ALTER statement keeps
// its SELECT to run later (a view's, a materialized view's, ALTER ...
// MODIFY QUERY): a SETTINGS clause at its end would be kept with it, for
// every later read, and the statement itself reads nothing (a
// materialized view's POPULATE aside).
func storesQuery(query string, toks []token) bool {
	if isWord(query, toks[0].Token, "ALTER") {
		for i, t := range toks[:len(toks)-1] {
			if t.depth == 0 && isWord(query, t.Token, "MODIFY") && isWord(query, toks[i+1].Token, "QUERY") {
				return true
			}
		}
		return false
	}
	// CREATE [OR REPLACE] [MATERIALIZED | LIVE | WINDOW] VIEW.
	for _, t := range toks[1:] {
		switch {
		case isWord(query, t.Token, "VIEW"):
			return true
		case isWord(query, t.Token, "OR"), isWord(query, t.Token, "REPLACE"), isWord(query, t.Token, "MATERIALIZED"),
			isWord(query, t.Token, "LIVE"), isWord(query, t.Token, "WINDOW"):
		default:
			return false
		}
	}
	return false
}

// insertData is where the data of an INSERT starts in query, whose tokens
// after the word INSERT are toks: the first top-level VALUES, FORMAT,
// SELECT, WITH, or '(' before SELECT or WITH; more is whether a SETTINGS
// clause comes before it (the settings are added to its list). at is -1
// when there is none.
func insertData(query string, toks []token) (at int, more bool) {
	for i, t := range toks {
		if t.depth != 0 {
			continue
		}
		switch {
		case isWord(query, t.Token, "SETTINGS"):
			more = true
		case isWord(query, t.Token, "VALUES"), isWord(query, t.Token, "FORMAT"),
			isWord(query, t.Token, "SELECT"), isWord(query, t.Token, "WITH"):
			return t.Start, more
		case t.Kind == sqltoken.Punct && query[t.Start] == '(' && i+1 < len(toks) &&
			(isWord(query, toks[i+1].Token, "SELECT") || isWord(query, toks[i+1].Token, "WITH")):
			return t.Start, more
		}
	}
	return -1, false
}

// token is a token of a statement with its depth in parentheses and
// brackets.
type token struct {
	sqltoken.Token
	depth int
}

// topLevel returns query's tokens but its comments, as ClickHouse reads
// them, each with its depth.
func topLevel(query string) []token {
	var s sqltoken.Scanner
	s.Reset(engine.ClickHouse.Lexical(), query)
	var out []token
	depth := 0
	for {
		t, ok := s.Next()
		if !ok {
			return out
		}
		if t.Kind == sqltoken.Comment {
			continue
		}
		if t.Kind == sqltoken.Punct {
			switch query[t.Start] {
			case '(', '[':
				out = append(out, token{t, depth})
				depth++
				continue
			case ')', ']':
				depth = max(depth-1, 0)
			}
		}
		out = append(out, token{t, depth})
	}
}

// isWord reports whether t is the keyword w (in capitals), in any case.
func isWord(query string, t sqltoken.Token, w string) bool {
	return t.Kind == sqltoken.Word && strings.EqualFold(t.Text(query), w)
}
