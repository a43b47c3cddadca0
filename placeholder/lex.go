package placeholder

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
)

// The package reads SQL text with package sql/sqltoken, the
// library's one tokenizer, as the engine at hand reads it. Scan, Compile
// and a nil engine's BindMarkers read it as anyReading does.

// anyReading is how Scan and Compile read a text whose engine they are
// not told: backslashes escape in '...' literals (as on MySQL and
// ClickHouse) and "..." and `...` quote names, so that a literal ending in
// a backslash reads as left open and is reported rather than misread.
var anyReading = engine.Lexical{BackslashEscapes: true, BacktickNames: true}

// isIdentByte reports whether c can continue an SQL word on some engine:
// letters, digits, '_', '$' (PostgreSQL, MySQL) and any byte of a
// multi-byte UTF-8 character. A bind marker next to one would merge with it.
func isIdentByte(c byte) bool { return sqltoken.IsWordByte(c) }

func isNameByte(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') || (c >= '0' && c <= '9')
}

// openError is the *SyntaxError of a token left open: a string literal,
// quoted name or block comment whose end is missing.
func openError(src string, t sqltoken.Token, pos *positioner) *SyntaxError {
	text := t.Text(src)
	switch c := text[0]; {
	case t.Kind == sqltoken.Comment:
		return pos.errorf(t.Start, "block comment /* is never closed")
	case c == '$':
		return pos.errorf(t.Start, "dollar-quoted string starting with %s is never closed", text[:strings.IndexByte(text[1:], '$')+2])
	case t.Kind == sqltoken.String && (c == 'E' || c == 'e'):
		return pos.errorf(t.Start, "string literal starting with %s is never closed", text[:2])
	case t.Kind == sqltoken.String:
		return pos.errorf(t.Start, "string literal starting with %c is never closed", c)
	default:
		return pos.errorf(t.Start, "quoted identifier starting with %c is never closed", c)
	}
}

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
