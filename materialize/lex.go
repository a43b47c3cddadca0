package materialize

import (
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint/engine"
)

// token is one lexical token of the original query text, enough to find
// traps of the parser and the text spans of the SELECT list.
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
// construct that the MySQL grammar of the parser reads differently from the
// target engine.
type lexed struct {
	src    string
	tokens []token
	trap   string
	lx     engine.Lexical
}

// lex splits src into tokens, skipping comments. It never fails: an
// unterminated quote or comment runs to the end, and the parser reports it.
func lex(src string, d engine.Engine) *lexed {
	x := lexer{lexed: &lexed{src: src, lx: d.Lexical()}, d: d, lx: d.Lexical()}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case isSpace(c):
			i++
		case isCommentStart(src[i:]):
			i = x.skipComment(i)
		case c == '\'' || c == '"' || c == '`':
			i = x.addQuoted(i)
		case isWordByte(c):
			i = x.addWord(i)
		default:
			i = x.addPunct(i)
		}
	}
	return x.lexed
}

// lexer is the state of one lex: the tokens so far and the engine whose
// reading of the text the parser's must match.
type lexer struct {
	*lexed
	d  engine.Engine
	lx engine.Lexical
}

// skipComment returns the offset just past the comment at i, recording a trap
// for the comment syntaxes that the parser reads differently from the
// engine.
func (x *lexer) skipComment(i int) int {
	s := x.src[i:]
	switch {
	case s[0] == '#' && !x.lx.HashComments:
		x.setTrap(i, "'#' starts a comment for this parser, not for %s", x.d.Name())
	case strings.HasPrefix(s, "//"):
		x.setTrap(i, "the parser reads // as the start of a comment")
	case strings.HasPrefix(s, "/*!"):
		x.setTrap(i, "the parser executes MySQL-style /*! comments")
	}
	if !strings.HasPrefix(s, "/*") {
		return lineEnd(x.src, i)
	}
	if end := strings.Index(s[2:], "*/"); end >= 0 {
		return i + 2 + end + 2
	}
	return len(x.src)
}

// addQuoted adds the quoted token at i and returns the offset past it, read
// by the engine's rules (backslash escapes or not). The parser never reads
// what it holds (see neutral.go), so no quote is a trap.
func (x *lexer) addQuoted(i int) int {
	end, closed := quotedEnd(x.src, i, x.lx.BackslashEscapes)
	x.tokens = append(x.tokens, token{quoteKind(x.src[i]), i, end, !closed})
	return end
}

// addWord adds the word token at i and returns the offset past it.
func (x *lexer) addWord(i int) int {
	j := i
	for j < len(x.src) && isWordByte(x.src[j]) {
		j++
	}
	x.tokens = append(x.tokens, token{kind: tokWord, start: i, end: j})
	return j
}

// addPunct adds the punctuation token at i (one byte, or ||, ::, -> or ->>)
// and returns the offset past it. A bind marker in the saved text would
// bypass the variables: it is a trap.
func (x *lexer) addPunct(i int) int {
	src := x.src
	j := i + 1
	switch pair := src[i:min(i+2, len(src))]; {
	case pair == "||" || pair == "::":
		j++
	case pair == "->":
		j++
		if j < len(src) && src[j] == '>' {
			j++
		}
	case src[i] == '?' || src[i] == ':' && j < len(src) && isWordByte(src[j]):
		x.setTrap(i, "bind markers belong to the engine, not to a saved query; use {variables.name}")
	}
	x.tokens = append(x.tokens, token{kind: tokPunct, start: i, end: j})
	return j
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

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// isCommentStart reports whether s starts with a comment in either reading:
// --, #, // or /*.
func isCommentStart(s string) bool {
	return s[0] == '#' || strings.HasPrefix(s, "--") || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/*")
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

func lineEnd(src string, i int) int {
	if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(src)
}

// quotedEnd returns the offset just past the quoted token starting at i,
// read with backslash escapes or not, and whether its quote is closed.
func quotedEnd(src string, i int, backslashEscapes bool) (int, bool) {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			if backslashEscapes && q != '`' {
				j++
			}
		case q:
			if j+1 < len(src) && src[j+1] == q {
				j++
				continue
			}
			return j + 1, true
		}
	}
	return len(src), false
}

// lineCol returns the 1-based line and rune column of byte offset off.
func lineCol(src string, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	line = 1 + strings.Count(src[:off], "\n")
	lineStart := strings.LastIndexByte(src[:off], '\n') + 1
	return line, 1 + len([]rune(src[lineStart:off]))
}
