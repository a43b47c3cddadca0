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
	start, end int // byte offsets in the query
}

type tokenKind uint8

const (
	tokWord     tokenKind = iota // identifier, keyword or number
	tokString                    // '...'
	tokDQuote                    // "..."
	tokBacktick                  // `...`
	tokPunct                     // one byte of punctuation, or || or ::
)

// lexed is the token list of a query plus the first trap found in it: a
// construct that the MySQL grammar of the parser reads differently from the
// target engine.
type lexed struct {
	src    string
	tokens []token
	trap   string
}

// lex splits src into tokens, skipping comments. It never fails: an
// unterminated quote or comment runs to the end, and the parser reports it.
func lex(src string, d engine.Engine) *lexed {
	l := &lexed{src: src}
	lx := d.Lexical()
	backslashEscapes := lx.BackslashEscapes
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			i = lineEnd(src, i)
		case c == '#':
			if !lx.HashComments {
				l.setTrap(i, "'#' starts a comment for this parser, not for %s", d.Name())
			}
			i = lineEnd(src, i)
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			l.setTrap(i, "the parser reads // as the start of a comment")
			i = lineEnd(src, i)
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			if i+2 < len(src) && src[i+2] == '!' {
				l.setTrap(i, "the parser executes MySQL-style /*! comments")
			}
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				i = len(src)
			} else {
				i += 2 + end + 2
			}
		case c == '\'' || c == '"' || c == '`':
			end, backslash := quotedEnd(src, i, backslashEscapes)
			kind := map[byte]tokenKind{'\'': tokString, '"': tokDQuote, '`': tokBacktick}[c]
			if kind == tokDQuote && !lx.DoubleQuoteStrings {
				l.setTrap(i, "double-quoted identifiers are strings to this parser")
			}
			if backslash && !backslashEscapes && kind == tokString {
				l.setTrap(i, "the parser reads backslashes in strings as MySQL escapes, %s does not", d.Name())
			}
			l.tokens = append(l.tokens, token{kind, i, end})
			i = end
		case isWordByte(c):
			j := i
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			l.tokens = append(l.tokens, token{tokWord, i, j})
			i = j
		default:
			j := i + 1
			if i+1 < len(src) && (c == '|' && src[i+1] == '|' || c == ':' && src[i+1] == ':') {
				j++
				if c == '|' && !lx.PipesOr {
					l.setTrap(i, "the parser reads || as OR, not as string concatenation")
				}
			} else if c == '?' || c == ':' && i+1 < len(src) && isWordByte(src[i+1]) {
				l.setTrap(i, "bind markers belong to the engine, not to a saved query; use {variables.name}")
			}
			l.tokens = append(l.tokens, token{tokPunct, i, j})
			i = j
		}
	}
	return l
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

// selectItems returns the text spans of the items of the first SELECT
// list, as [start, end) token index ranges, or nil when it cannot find it.
// SQLite names an unaliased result column by the text of its expression, so
// the read query repeats that text as the column's alias.
func (l *lexed) selectItems() [][2]int {
	i := 0
	for i < len(l.tokens) && !l.word(l.tokens[i], "select") {
		if l.tokens[i].kind == tokPunct && l.text(l.tokens[i]) == "(" {
			i++
			continue
		}
		return nil
	}
	i++
	for i < len(l.tokens) && (l.word(l.tokens[i], "distinct") || l.word(l.tokens[i], "all")) {
		i++
	}
	var items [][2]int
	depth, start := 0, i
	for ; i < len(l.tokens); i++ {
		t := l.tokens[i]
		if t.kind == tokPunct {
			switch l.text(t) {
			case "(":
				depth++
			case ")":
				depth--
				if depth < 0 {
					return append(items, [2]int{start, i})
				}
			case ",":
				if depth == 0 {
					items = append(items, [2]int{start, i})
					start = i + 1
				}
			case ";":
				if depth == 0 {
					return append(items, [2]int{start, i})
				}
			}
			continue
		}
		if depth == 0 && t.kind == tokWord {
			for _, kw := range []string{"from", "where", "group", "having", "order", "limit", "union"} {
				if l.word(t, kw) {
					return append(items, [2]int{start, i})
				}
			}
		}
	}
	return append(items, [2]int{start, i})
}

// span returns the source text of tokens [from, to).
func (l *lexed) span(from, to int) string {
	if from >= to {
		return ""
	}
	return l.src[l.tokens[from].start:l.tokens[to-1].end]
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
// and whether a backslash occurs inside it.
func quotedEnd(src string, i int, backslashEscapes bool) (int, bool) {
	q := src[i]
	backslash := false
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			backslash = true
			if backslashEscapes && q != '`' {
				j++
			}
		case q:
			if j+1 < len(src) && src[j+1] == q {
				j++
				continue
			}
			return j + 1, backslash
		}
	}
	return len(src), backslash
}

// lineCol returns the 1-based line and rune column of byte offset off.
func lineCol(src string, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	line = 1 + strings.Count(src[:off], "\n")
	lineStart := strings.LastIndexByte(src[:off], '\n') + 1
	return line, 1 + len([]rune(src[lineStart:off]))
}
