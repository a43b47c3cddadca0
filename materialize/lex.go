package materialize

import (
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
)

// token is one lexical token of the original query text, enough to find
// the constructs materialization refuses before the tree reads the query,
// and the text spans of the SELECT list.
type token struct {
	kind       tokenKind
	start, end int  // byte offsets in the query
	open       bool // a quote never closed: it runs to the end
}

type tokenKind uint8

const (
	tokWord     tokenKind = iota // identifier, keyword or number
	tokString                    // '...'
	tokDQuote                    // "..."
	tokBacktick                  // `...`
	tokPunct                     // one byte of punctuation, or ||, ::, -> or ->>
)

// lexed is the token list of a query plus the first trap found in it: a
// construct the engine reads as code that the tree does not print (a
// MySQL executable comment), or a bind marker, which belongs to the
// engine and not to a saved query.
type lexed struct {
	src    string
	tokens []token
	trap   string
	lx     engine.Lexical
}

// lex splits src into tokens, skipping comments, as sql/sqltoken reads
// the text for engine d (the one tokenizer of the library), and records
// the first trap. It never fails: an unterminated quote or comment runs to
// the end (open), and the parser reports it.
func lex(src string, d engine.Engine) *lexed {
	lx := d.Lexical()
	l := &lexed{src: src, lx: lx}
	var sc sqltoken.Scanner
	sc.Reset(lx, src)
	for {
		t, ok := sc.Next()
		if !ok {
			return l
		}
		switch t.Kind {
		case sqltoken.Comment:
			l.comment(t)
		case sqltoken.String:
			// '...', E'...', N'...', dollar quotes, and MySQL's "...",
			// which the neutral pass reads by DoubleQuoteStrings.
			kind := tokString
			if src[t.Start] == '"' {
				kind = tokDQuote
			}
			l.tokens = append(l.tokens, token{kind: kind, start: t.Start, end: t.End, open: t.Is(sqltoken.Unclosed)})
		case sqltoken.QuotedName:
			l.tokens = append(l.tokens, token{kind: quoteKind(src[t.Start]), start: t.Start, end: t.End, open: t.Is(sqltoken.Unclosed)})
		case sqltoken.Word, sqltoken.Number:
			l.tokens = append(l.tokens, token{kind: tokWord, start: t.Start, end: t.End})
		case sqltoken.Placeholder:
			l.placeholder(t)
		case sqltoken.BindMarker:
			l.setTrap(t.Start, "bind markers belong to the engine, not to a saved query; use {variables.name}")
			l.tokens = append(l.tokens, token{kind: tokPunct, start: t.Start, end: t.End})
		default:
			l.punctuation(t)
		}
	}
}

// comment records a trap for MySQL's executable comments (/*! ... */,
// version comments and optimizer hints): code to MySQL that the tree reads
// as a comment, so the statements printed from it would leave it out.
// Other comments are read by the tree as the engine reads them (see
// sql/sqltoken), and left out of what it prints.
func (l *lexed) comment(t sqltoken.Token) {
	if t.Why == sqltoken.ExecutableComment {
		l.setTrap(t.Start, "the parser executes MySQL-style /*! comments")
	}
}

// punctuation adds a punctuation token, joined to the one before it into
// ||, ::, -> or ->>.
func (l *lexed) punctuation(t sqltoken.Token) {
	src := l.src
	if n := len(l.tokens); n > 0 {
		prev := &l.tokens[n-1]
		if prev.kind == tokPunct && prev.end == t.Start {
			switch src[prev.start:t.End] {
			case "||", "::", "->", "->>":
				prev.end = t.End
				return
			}
		}
	}
	l.tokens = append(l.tokens, token{kind: tokPunct, start: t.Start, end: t.End})
}

// placeholder adds the tokens of {variables.x} as the rest of the analysis
// reads them: the braces and dot as punctuation, the words as words.
func (l *lexed) placeholder(t sqltoken.Token) {
	src := l.src
	for i := t.Start; i < t.End; {
		c := src[i]
		switch {
		case sqltoken.IsSpace(c):
			i++
		case isWordByte(c):
			j := i
			for j < t.End && isWordByte(src[j]) {
				j++
			}
			l.tokens = append(l.tokens, token{kind: tokWord, start: i, end: j})
			i = j
		default:
			l.tokens = append(l.tokens, token{kind: tokPunct, start: i, end: i + 1})
			i++
		}
	}
}

// unsupported names the first construct of the query that materialization
// does not take, in words a user can act on, "" when none is known: it is
// the reason given for SQL its engine runs that the parser cannot read.
// With inlined, a leading WITH is not one: its queries were put where
// they are read (see inlineWith).
func (l *lexed) unsupported(inlined bool) (string, int) { return l.unsupportedBut(inlined, false) }

// windowReason is the reason of a window function materialization does
// not take.
const windowReason = "window functions (OVER) materialize only in the outer SELECT list, computed when the table is built; this one is elsewhere (a subquery, WITH, ORDER BY or a WINDOW clause) or beside a construct materialization does not take"

// unsupportedBut is unsupported, not counting window functions when
// windows is set.
func (l *lexed) unsupportedBut(inlined, windows bool) (string, int) {
	ts := l.tokens
	for i, t := range ts {
		next := func(k int, w string) bool { return i+k < len(ts) && (l.word(ts[i+k], w) || l.punct(ts[i+k], w)) }
		switch {
		case i == 0 && l.word(t, "with") && !inlined:
			return "a query that starts with WITH (common table expressions) cannot be materialized yet; write each CTE as a subquery in FROM, with the variables' conditions in the outer WHERE over the columns it keeps", t.start
		case l.word(t, "over") && (next(1, "(") || i+1 < len(ts) && ts[i+1].kind == tokWord) && !windows:
			return windowReason, t.start
		case l.word(t, "is") && next(1, "distinct") || l.word(t, "is") && next(1, "not") && next(2, "distinct"):
			return "IS [NOT] DISTINCT FROM cannot be materialized; compare with = and IS NULL", t.start
		case l.word(t, "at") && next(1, "time") && next(2, "zone"):
			return "AT TIME ZONE cannot be materialized", t.start
		case l.word(t, "interval") && i+1 < len(ts) && ts[i+1].kind == tokString && !(i+2 < len(ts) && ts[i+2].kind == tokWord && l.unit(ts[i+2])):
			return "interval literals written as one string (INTERVAL '90 days') cannot be materialized; write INTERVAL '90' DAY", t.start
		case l.punct(t, "~") || l.punct(t, "#") || l.punct(t, "@"):
			return fmt.Sprintf("the operator %s cannot be materialized", l.text(t)), t.start
		case l.word(t, "lateral"):
			return "LATERAL joins cannot be materialized", t.start
		case l.word(t, "filter") && next(1, "(") && next(2, "where"):
			return "aggregate FILTER (WHERE ...) clauses cannot be materialized", t.start
		case l.word(t, "qualify"):
			return "QUALIFY cannot be materialized", t.start
		}
	}
	return "", 0
}

// topWord returns the byte offset of the first (or, when last, the last)
// keyword kw outside parentheses, -1 when there is none.
func (l *lexed) topWord(kw string, last bool) int {
	off, depth := -1, 0
	for _, t := range l.tokens {
		switch {
		case l.punct(t, "("):
			depth++
		case l.punct(t, ")"):
			depth--
		case depth == 0 && l.word(t, kw):
			if !last {
				return t.start
			}
			off = t.start
		}
	}
	return off
}

// unit reports whether t names an interval unit.
func (l *lexed) unit(t token) bool {
	_, ok := fixedUnits[strings.TrimSuffix(strings.ToLower(l.text(t)), "s")]
	return ok || l.word(t, "month") || l.word(t, "year") || l.word(t, "quarter")
}

// setTrap records the first trap, with its position.
func (l *lexed) setTrap(off int, format string, args ...any) {
	if l.trap != "" {
		return
	}
	line, col := lineCol(l.src, off)
	l.trap = fmt.Sprintf("%s (line %d, column %d)", fmt.Sprintf(format, args...), line, col)
}

func (l *lexed) text(t token) string { return l.src[t.start:t.end] }

// word reports whether t is the keyword kw, case-insensitively.
func (l *lexed) word(t token, kw string) bool {
	return t.kind == tokWord && strings.EqualFold(l.text(t), kw)
}

// punct reports whether t is the punctuation p.
func (l *lexed) punct(t token, p string) bool {
	return t.kind == tokPunct && l.text(t) == p
}

// selectItems returns the text spans of the items of the first SELECT
// list, as [start, end) token index ranges, or nil when it cannot find it.
// SQLite names an unaliased result column by the text of its expression, so
// the read query repeats that text as the column's alias.
func (l *lexed) selectItems() [][2]int {
	i, ok := l.selectListStart()
	if !ok {
		return nil
	}
	var items [][2]int
	depth, start := 0, i
	for ; i < len(l.tokens); i++ {
		t := l.tokens[i]
		switch {
		case l.punct(t, "("):
			depth++
		case l.punct(t, ")"):
			depth--
			if depth < 0 {
				return append(items, [2]int{start, i})
			}
		case depth > 0:
			// inside parentheses: a comma or keyword there is not the list's
		case l.punct(t, ","):
			items = append(items, [2]int{start, i})
			start = i + 1
		case l.punct(t, ";") || l.endsSelectList(t):
			return append(items, [2]int{start, i})
		}
	}
	return append(items, [2]int{start, i})
}

// selectListStart returns the index of the first token of the first SELECT
// list: past opening parentheses, SELECT, and DISTINCT or ALL. It reports
// false when something else comes first.
func (l *lexed) selectListStart() (int, bool) {
	i := 0
	for i < len(l.tokens) && l.punct(l.tokens[i], "(") {
		i++
	}
	if i < len(l.tokens) && !l.word(l.tokens[i], "select") {
		return 0, false
	}
	i++
	for i < len(l.tokens) && (l.word(l.tokens[i], "distinct") || l.word(l.tokens[i], "all")) {
		i++
	}
	return i, true
}

// selectListEnds are the keywords that end a SELECT list outside
// parentheses.
var selectListEnds = []string{"from", "where", "group", "having", "order", "limit", "union"}

// endsSelectList reports whether t is a keyword of selectListEnds.
func (l *lexed) endsSelectList(t token) bool {
	for _, kw := range selectListEnds {
		if l.word(t, kw) {
			return true
		}
	}
	return false
}

// span returns the source text of tokens [from, to).
func (l *lexed) span(from, to int) string {
	if from >= to {
		return ""
	}
	return l.src[l.tokens[from].start:l.tokens[to-1].end]
}

// quoteKind is the token kind of a quote byte.
func quoteKind(q byte) tokenKind {
	switch q {
	case '\'':
		return tokString
	case '"':
		return tokDQuote
	}
	return tokBacktick
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// lineCol returns the 1-based line and rune column of byte offset off.
func lineCol(src string, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	line = 1 + strings.Count(src[:off], "\n")
	lineStart := strings.LastIndexByte(src[:off], '\n') + 1
	return line, 1 + len([]rune(src[lineStart:off]))
}

// statements are the words that start a statement other than a query.
var statements = setOf("insert", "update", "delete", "replace", "create", "drop", "alter", "truncate",
	"set", "show", "describe", "explain", "use", "begin", "commit", "rollback", "grant", "revoke", "call", "do", "load")

// statementWord returns the first word of the query when it starts a
// statement other than a query (INSERT, UPDATE, ...), else "".
func (l *lexed) statementWord() string {
	if len(l.tokens) == 0 || l.tokens[0].kind != tokWord || !statements[strings.ToLower(l.text(l.tokens[0]))] {
		return ""
	}
	return l.text(l.tokens[0])
}
