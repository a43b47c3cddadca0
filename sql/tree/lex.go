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
	raw := sqltoken.Tokens(lx, src)
	toks := make([]token, 0, len(raw)+1)
	for i := 0; i < len(raw); i++ {
		t := raw[i]
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
			end := t.End
			for _, op := range operators {
				n := len(op)
				if t.Start+n > len(src) || src[t.Start:t.Start+n] != op || i+n-1 >= len(raw) {
					continue
				}
				// Every character must be a punctuation token of its own,
				// each right after the other.
				ok := true
				for k := 1; k < n; k++ {
					r := raw[i+k]
					if r.Kind != sqltoken.Punct || r.Start != t.Start+k {
						ok = false
						break
					}
				}
				if ok {
					end = t.Start + n
					i += n - 1
					break
				}
			}
			t.End = end
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

// lower returns s with ASCII letters in lower case.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
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
