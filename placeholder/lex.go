package placeholder

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file holds how the package reads SQL text, shared by Scan (which
// looks for placeholders) and Dialect.BindMarkers (which looks for bind
// markers), so that both agree on what is code and what is a literal or a
// comment. Each keeps its own main loop over the code, dispatching on the
// byte classes below: a shared loop calling back per token would cost Scan,
// which runs on every save, a function call per word.

// Byte classes of the main loops.
type byteClass uint8

const (
	clOther byteClass = iota
	clSpace
	clIdent
	clQuote
	clBrace
	clLParen
	clDash
	clSlash
)

var classes = func() (t [256]byteClass) {
	for c := range 256 {
		b := byte(c)
		switch {
		case b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v':
			t[c] = clSpace
		case isNameByte(b) || b == '$' || b >= 0x80:
			t[c] = clIdent
		case b == '\'' || b == '"' || b == '`':
			t[c] = clQuote
		case b == '{':
			t[c] = clBrace
		case b == '(':
			t[c] = clLParen
		case b == '-':
			t[c] = clDash
		case b == '/':
			t[c] = clSlash
		}
	}
	return t
}()

// skipped tells what skipNonCode went past.
type skipped uint8

const (
	skippedNothing skipped = iota // the byte opens code
	skippedComment
	skippedQuoted // a string literal or quoted identifier: a token
)

// skipNonCode returns the offset just past the comment, string literal or
// quoted identifier that opens at src[i], and which of them it was; it
// returns i and skippedNothing when src[i] opens none of them. A '--'
// comment on the last line ends at len(src). A quote or block comment left
// open is a *SyntaxError at its first character.
func skipNonCode(src string, i int, pos *positioner) (end int, what skipped, err error) {
	if c := src[i]; classes[c] == clQuote {
		end := skipQuoted(src, i)
		if end < 0 {
			what := "string literal"
			if c != '\'' {
				what = "quoted identifier"
			}
			return 0, skippedNothing, pos.errorf(i, "%s starting with %c is never closed", what, c)
		}
		return end, skippedQuoted, nil
	}
	end, ok := commentEnd(src, i)
	switch {
	case !ok:
		return i, skippedNothing, nil
	case end < 0:
		return 0, skippedNothing, pos.errorf(i, "block comment /* is never closed")
	}
	return end, skippedComment, nil
}

// commentEnd reports whether a comment opens at src[i] and returns the
// offset just past it: past the newline of a '--' comment (len(src) on the
// last line), past the "*/" of a block comment, or -1 for a block comment
// never closed.
func commentEnd(src string, i int) (end int, ok bool) {
	if i+1 >= len(src) {
		return 0, false
	}
	switch {
	case src[i] == '-' && src[i+1] == '-':
		j := strings.IndexByte(src[i:], '\n')
		if j < 0 {
			return len(src), true
		}
		return i + j + 1, true
	case src[i] == '/' && src[i+1] == '*':
		j := strings.Index(src[i+2:], "*/")
		if j < 0 {
			return -1, true
		}
		return i + 2 + j + 2, true
	}
	return 0, false
}

// skipQuoted returns the offset just past the quoted text opened at
// src[i], or -1 when it is never closed. A doubled quote stands for
// itself; in '...' a backslash escapes the next byte.
func skipQuoted(src string, i int) int {
	q := src[i]
	n := len(src)
	for j := i + 1; j < n; j++ {
		switch src[j] {
		case q:
			if j+1 < n && src[j+1] == q {
				j++
				continue
			}
			return j + 1
		case '\\':
			if q == '\'' {
				j++
			}
		}
	}
	return -1
}

// wordEnd returns the offset just past the SQL word (see isIdentByte) that
// starts at src[i].
func wordEnd(src string, i int) int {
	j := i + 1
	for j < len(src) && classes[src[j]] == clIdent {
		j++
	}
	return j
}

func skipSpace(src string, i int) int {
	for i < len(src) && isSpace(src[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return classes[c] == clSpace }

func isNameStart(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isNameByte(c byte) bool {
	return isNameStart(c) || (c >= '0' && c <= '9')
}

// isIdentByte reports whether c can continue an SQL word on some engine:
// letters, digits, '_', '$' (PostgreSQL, MySQL) and any byte of a
// multi-byte UTF-8 character. A bind marker next to one would merge with it.
func isIdentByte(c byte) bool { return classes[c] == clIdent }

// positioner turns byte offsets into line and column. Offsets asked for
// only grow during a scan, so it counts forward from the last answer
// instead of from the start each time. Line and column are what recount
// (in the tests) gives: columns count runes as utf8.RuneCountInString
// does, an invalid byte being one rune.
type positioner struct {
	src       string
	off       int
	line, col int
}

func (p *positioner) at(off int) (line, col int) {
	if off < p.off || p.line == 0 {
		p.off, p.line, p.col = 0, 1, 1
	}
	// Counting newlines and runes a whole stretch at a time, rather than
	// byte by byte, is most of what makes Scan fast: it asks for the
	// position of every placeholder.
	seg := p.src[p.off:off]
	if nl := strings.LastIndexByte(seg, '\n'); nl >= 0 {
		p.line += strings.Count(seg[:nl+1], "\n")
		p.col = 1
		seg = seg[nl+1:]
	}
	p.col += utf8.RuneCountInString(seg)
	p.off = off
	return p.line, p.col
}

func (p *positioner) errorf(off int, format string, args ...any) *SyntaxError {
	line, col := p.at(off)
	return &SyntaxError{Line: line, Column: col, Offset: off, Msg: fmt.Sprintf(format, args...)}
}
