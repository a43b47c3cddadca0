package placeholder

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Placeholder is one {variables.<code_name>} found in SQL text.
type Placeholder struct {
	// Name is the code name, the X of {variables.X}.
	Name string
	// Start is the byte offset of '{' and End the offset just past '}'.
	Start, End int
	// Line and Column locate '{'; both are 1-based and Column counts runes.
	Line, Column int
	// InList is true when the placeholder follows the keyword IN or is
	// the only element of IN ( ... ): the one place a multi-valued list
	// may render.
	InList bool
}

// Scan returns the placeholders of sql in order of appearance, or a
// *SyntaxError for a malformed placeholder or a quote or comment left open.
// The package documentation says exactly what counts as a placeholder.
func Scan(sql string) ([]Placeholder, error) {
	return scan(sql, nil)
}

// token kinds the list-position rule looks back at.
type tokKind uint8

const (
	tokOther tokKind = iota
	tokIn
	tokLParen
)

// positioner turns byte offsets into line and column. Offsets asked for
// only grow during a scan, so it counts forward from the last answer
// instead of from the start each time.
type positioner struct {
	src       string
	off       int
	line, col int
}

func (p *positioner) at(off int) (line, col int) {
	if off < p.off || p.line == 0 {
		p.off, p.line, p.col = 0, 1, 1
	}
	for i := p.off; i < off; {
		c := p.src[i]
		switch {
		case c == '\n':
			p.line++
			p.col = 1
			i++
		case c < utf8.RuneSelf:
			p.col++
			i++
		default:
			// Counted as utf8.RuneCountInString counts: an invalid byte
			// is one rune.
			_, size := utf8.DecodeRuneInString(p.src[i:])
			p.col++
			i += size
		}
	}
	p.off = off
	return p.line, p.col
}

func (p *positioner) errorf(off int, format string, args ...any) *SyntaxError {
	line, col := p.at(off)
	return &SyntaxError{Line: line, Column: col, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// scan does Scan's work. When parens is not nil it also records, for
// each placeholder, whether its list form must bring its own parentheses
// (it follows IN directly) or not (it sits inside IN ( )).
func scan(src string, parens *[]bool) ([]Placeholder, error) {
	var out []Placeholder
	if n := strings.Count(src, "{"); n > 0 {
		// Every placeholder starts with a brace; a few spare slots cost
		// less than growing the slice several times.
		out = make([]Placeholder, 0, min(n, 32))
	}
	pos := positioner{src: src}
	prev1, prev2 := tokOther, tokOther
	n := len(src)
	i := 0
	for i < n {
		c := src[i]
		switch classes[c] {
		case clSpace:
			i++
			continue // whitespace is not a token
		case clIdent:
			j := i + 1
			for j < n && classes[src[j]] == clIdent {
				j++
			}
			prev2 = prev1
			if j-i == 2 && c|0x20 == 'i' && src[i+1]|0x20 == 'n' {
				prev1 = tokIn
			} else {
				prev1 = tokOther
			}
			i = j
			continue
		case clDash:
			if i+1 < n && src[i+1] == '-' {
				j := strings.IndexByte(src[i:], '\n')
				if j < 0 {
					return out, nil
				}
				i += j + 1
				continue // comments are not tokens
			}
		case clSlash:
			if i+1 < n && src[i+1] == '*' {
				j := strings.Index(src[i+2:], "*/")
				if j < 0 {
					return nil, pos.errorf(i, "block comment /* is never closed")
				}
				i += 2 + j + 2
				continue
			}
		case clQuote:
			end := skipQuoted(src, i)
			if end < 0 {
				what := "string literal"
				if c != '\'' {
					what = "quoted identifier"
				}
				return nil, pos.errorf(i, "%s starting with %c is never closed", what, c)
			}
			i = end
			prev2, prev1 = prev1, tokOther
			continue
		case clLParen:
			i++
			prev2, prev1 = prev1, tokLParen
			continue
		case clBrace:
			f, end, err := placeholderAt(src, i, &pos)
			if err != nil {
				return nil, err
			}
			if end >= 0 {
				switch {
				case prev1 == tokIn:
					f.InList = true
				case prev1 == tokLParen && prev2 == tokIn:
					if k := skipSpaceAndComments(src, end); k < n && src[k] == ')' {
						f.InList = true
					}
				}
				out = append(out, f)
				if parens != nil {
					*parens = append(*parens, prev1 == tokIn)
				}
				i = end
				prev2, prev1 = prev1, tokOther
				continue
			}
		}
		// Any other byte is a token of its own: an operator, a comma, a
		// brace that starts no placeholder.
		i++
		prev2, prev1 = prev1, tokOther
	}
	return out, nil
}

// Byte classes of the scanner's main loop.
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

// placeholderAt reads a placeholder whose '{' is at src[i]. It returns
// end < 0 when the brace does not start a placeholder at all.
func placeholderAt(src string, i int, pos *positioner) (f Placeholder, end int, err error) {
	n := len(src)
	j := skipSpace(src, i+1)
	const word = "variables"
	if !strings.HasPrefix(src[j:], word) {
		return f, -1, nil
	}
	j += len(word)
	if j < n && isIdentByte(src[j]) {
		return f, -1, nil
	}
	j = skipSpace(src, j)
	if j >= n || src[j] != '.' {
		return f, -1, nil
	}
	j = skipSpace(src, j+1)
	if j >= n {
		return f, 0, pos.errorf(i, "placeholder is never closed: expected a code name and '}'")
	}
	if !isNameStart(src[j]) {
		switch {
		case src[j] == '}':
			return f, 0, pos.errorf(j, "missing code name after \"variables.\"")
		case src[j] >= '0' && src[j] <= '9':
			return f, 0, pos.errorf(j, "code name must start with a letter or underscore, found %q", src[j])
		default:
			r, _ := utf8.DecodeRuneInString(src[j:])
			return f, 0, pos.errorf(j, "expected a code name after \"variables.\", found %q", r)
		}
	}
	nameStart := j
	for j < n && isNameByte(src[j]) {
		j++
	}
	name := src[nameStart:j]
	j = skipSpace(src, j)
	if j >= n {
		return f, 0, pos.errorf(i, "placeholder {variables.%s is never closed: expected '}'", name)
	}
	if src[j] != '}' {
		r, _ := utf8.DecodeRuneInString(src[j:])
		return f, 0, pos.errorf(j, "unexpected %q after code name %q: expected '}'", r, name)
	}
	line, col := pos.at(i)
	f = Placeholder{Name: name, Start: i, End: j + 1, Line: line, Column: col}
	return f, j + 1, nil
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

// skipSpaceAndComments returns the offset of the first byte at or after i
// that is neither whitespace nor inside a comment. An unclosed block
// comment yields len(src); the main scan reports it.
func skipSpaceAndComments(src string, i int) int {
	n := len(src)
	for i < n {
		switch {
		case isSpace(src[i]):
			i++
		case src[i] == '-' && i+1 < n && src[i+1] == '-':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				return n
			}
			i += j + 1
		case src[i] == '/' && i+1 < n && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return n
			}
			i += 2 + j + 2
		default:
			return i
		}
	}
	return n
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
