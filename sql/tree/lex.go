package tree

import (
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
)

// tEOF is the kind of the token that ends the query.
const tEOF sqltoken.Kind = 0

// token is one token of the query, comments left out. Operators of
// several characters (<=, ->>, ::) are one token.
type token struct {
	kind       sqltoken.Kind
	start, end int
	// text is the token as written.
	text string
	// lower is a word's text in lower case, for keywords.
	lower string
}

// operators are the operators of several characters, longest first.
var operators = []string{"<=>", "->>", "#>>", "!~*", "<=", ">=", "<>", "!=", "==", "||", "&&",
	"->", "::", "<<", ">>", "#>", "@>", "<@", "~*", "!~", "?|", "?&", "@@"}

// lexQuery returns the tokens of src as an engine with the rules lx reads
// them, ending with a tEOF token.
func lexQuery(lx engine.Lexical, src string) ([]token, *Error) {
	var sc sqltoken.Scanner
	sc.Reset(lx, src)
	toks := make([]token, 0, len(src)/5+2)
	// ahead holds the tokens read past the current one, to join the
	// characters of an operator.
	var ahead [2]sqltoken.Token
	n := 0
	read := func() (sqltoken.Token, bool) {
		if n > 0 {
			t := ahead[0]
			ahead[0] = ahead[1]
			n--
			return t, true
		}
		return sc.Next()
	}
	// peek returns the k-th token after the current one (k is 0 or 1).
	peek := func(k int) (sqltoken.Token, bool) {
		for n <= k {
			t, ok := sc.Next()
			if !ok {
				return sqltoken.Token{}, false
			}
			ahead[n] = t
			n++
		}
		return ahead[k], true
	}
	for {
		t, ok := read()
		if !ok {
			break
		}
		switch t.Kind {
		case sqltoken.Comment:
			if t.Is(sqltoken.Unclosed) {
				return nil, errorAt(src, t.Start, ErrSyntax, "the comment /* is never closed")
			}
			continue
		case sqltoken.String, sqltoken.QuotedName:
			if t.Is(sqltoken.Unclosed) {
				what := "string"
				if t.Kind == sqltoken.QuotedName {
					what = "quoted name"
				}
				return nil, errorAt(src, t.Start, ErrSyntax, "the %s starting with %s is never closed", what, src[t.Start:t.Start+1])
			}
		case sqltoken.Placeholder:
			if t.Is(sqltoken.Malformed) {
				return nil, errorAt(src, t.Start, ErrSyntax, "malformed placeholder: expected {variables.<code_name>}")
			}
		case sqltoken.Punct:
			if t.Start+1 < len(src) && opStart[src[t.Start]] {
				for _, op := range operators {
					l := len(op)
					if t.Start+l > len(src) || src[t.Start:t.Start+l] != op {
						continue
					}
					// Every character must be a punctuation token of its
					// own, each right after the other.
					ok := true
					for k := 1; k < l; k++ {
						r, more := peek(k - 1)
						if !more || r.Kind != sqltoken.Punct || r.Start != t.Start+k {
							ok = false
							break
						}
					}
					if ok {
						for k := 1; k < l; k++ {
							read()
						}
						t.End = t.Start + l
						break
					}
				}
			}
		}
		tk := token{kind: t.Kind, start: t.Start, end: t.End, text: src[t.Start:t.End]}
		if t.Kind == sqltoken.Word {
			tk.lower = lower(tk.text)
		}
		toks = append(toks, tk)
	}
	toks = append(toks, token{kind: tEOF, start: len(src), end: len(src)})
	return toks, nil
}

// opStart are the characters that start an operator of several
// characters.
var opStart = func() (m [256]bool) {
	for _, op := range operators {
		m[op[0]] = true
	}
	return m
}()

// keywords interns the lower-case spelling of the words the parser looks
// for, so that an upper-case keyword costs no allocation.
var keywords = func() map[string]string {
	m := make(map[string]string)
	for _, set := range []map[string]bool{clauseWords, joinWords, fromEnd, tableAliasReserved, notAValue, niladic, typedLiterals, intervalUnits, likeWords} {
		for w := range set {
			m[w] = w
		}
	}
	for _, w := range []string{"select", "distinct", "count", "sum", "min", "max", "avg", "cast", "extract", "current", "row", "unbounded", "preceding", "following", "coalesce", "date", "ties", "first", "last", "only", "recursive", "materialized", "symmetric", "unknown", "to", "fill", "step", "strict", "rollup", "cube", "grouping", "sets", "totals", "ordinality", "exclude", "at", "time", "zone"} {
		m[w] = w
	}
	return m
}()

// lower returns s with ASCII letters in lower case.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			if len(s) <= 16 {
				var buf [16]byte
				b := buf[:len(s)]
				for j := 0; j < len(s); j++ {
					c := s[j]
					if c >= 'A' && c <= 'Z' {
						c += 'a' - 'A'
					}
					b[j] = c
				}
				if kw, ok := keywords[string(b)]; ok {
					return kw
				}
			}
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// upper returns s with ASCII letters in upper case.
func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
