package placeholder

import (
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
	return scan(sql, nil, nil)
}

// token kinds the list-position rule looks back at.
type tokKind uint8

const (
	tokOther tokKind = iota
	tokIn
	tokLParen
)

// scan does Scan's work. When parens is not nil it also records, for
// each placeholder, whether its list form must bring its own parentheses
// (it follows IN directly) or not (it sits inside IN ( )). When st is not
// nil it also fills in *st (see Template.Statement): the walk already
// tells tokens from comments and quotes, and a second walk over the same
// text would only repeat it.
func scan(src string, parens *[]bool, st *Statement) ([]Placeholder, error) {
	out := placeholderSlice(src)
	pos := positioner{src: src}
	prev1, prev2 := tokOther, tokOther
	ends := statementEnds{semi: -1}
	n := len(src)
	i := 0
	for i < n {
		c := src[i]
		switch classes[c] {
		case clSpace:
			i++
			continue // whitespace is not a token
		case clIdent:
			j := wordEnd(src, i)
			prev2, prev1 = prev1, wordKind(src[i:j])
			i = j
			continue
		case clDash, clSlash, clQuote:
			end, what, err := skipNonCode(src, i, &pos)
			if err != nil {
				return nil, err
			}
			switch what {
			case skippedQuoted:
				prev2, prev1 = prev1, tokOther
				i = end
				continue
			case skippedComment: // comments are not tokens
				ends.comment(src, i, end)
				i = end
				continue
			}
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
				f.InList = inList(src, end, prev1, prev2)
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
		if c == ';' {
			ends.semicolon(src, i)
		}
		i++
		prev2, prev1 = prev1, tokOther
	}
	if st != nil {
		*st = ends.statement(src, &pos)
	}
	return out, nil
}

// placeholderSlice returns the slice that scan fills: nil when src holds
// no brace, else with room for every brace up to a few. Every placeholder
// starts with a brace; a few spare slots cost less than growing the slice
// several times.
func placeholderSlice(src string) []Placeholder {
	if n := strings.Count(src, "{"); n > 0 {
		return make([]Placeholder, 0, min(n, 32))
	}
	return nil
}

// wordKind is tokIn for the keyword IN, in any case, and tokOther for any
// other word.
func wordKind(w string) tokKind {
	if len(w) == 2 && w[0]|0x20 == 'i' && w[1]|0x20 == 'n' {
		return tokIn
	}
	return tokOther
}

// inList reports whether the placeholder that ends at end, after tokens
// prev2 and prev1, may render a list: it follows the keyword IN, or it is
// the only element of IN ( ).
func inList(src string, end int, prev1, prev2 tokKind) bool {
	switch {
	case prev1 == tokIn:
		return true
	case prev1 == tokLParen && prev2 == tokIn:
		k := skipSpaceAndComments(src, end)
		return k < len(src) && src[k] == ')'
	}
	return false
}

// statementEnds follows where a text's statements end, for Statement.
// Comments and semicolons are rare, words are not: updating last at every
// token made BenchmarkScan 5% slower, so the tokens of a gap are looked at
// only when it closes (see lastTokenEnd).
type statementEnds struct {
	// last is the end of the last token other than ';' before gap, the
	// end of the last comment or ';'.
	last, gap int
	// semi is the offset of the first ';' token, or -1.
	semi int
}

// comment notes a comment over src[start:end].
func (e *statementEnds) comment(src string, start, end int) {
	e.last = lastTokenEnd(src, e.gap, start, e.last)
	e.gap = end
}

// semicolon notes a ';' token at src[i].
func (e *statementEnds) semicolon(src string, i int) {
	e.last = lastTokenEnd(src, e.gap, i, e.last)
	e.gap = i + 1
	if e.semi < 0 {
		e.semi = i
	}
}

// statement returns the Statement of src, once the scan has seen all of it.
func (e *statementEnds) statement(src string, pos *positioner) Statement {
	last := lastTokenEnd(src, e.gap, len(src), e.last)
	st := Statement{Body: src[:last], Second: -1}
	// The first ';' is followed by more code exactly when a token other
	// than ';' ends after it: that token opens a second statement,
	// whatever other semicolons stand between.
	if e.semi >= 0 && e.semi < last {
		st.Second = e.semi
		st.Line, st.Column = pos.at(e.semi)
	}
	return st
}

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

// skipSpaceAndComments returns the offset of the first byte at or after i
// that is neither whitespace nor inside a comment. An unclosed block
// comment yields len(src); the main scan reports it.
func skipSpaceAndComments(src string, i int) int {
	n := len(src)
	for i < n {
		if isSpace(src[i]) {
			i++
			continue
		}
		end, ok := commentEnd(src, i)
		switch {
		case !ok:
			return i
		case end < 0:
			return n
		}
		i = end
	}
	return n
}

// lastTokenEnd returns the end of the last token in src[from:to], a
// stretch of whitespace and tokens only (no comment, no ';'), or last
// when it holds none. A token never ends with whitespace, not even a
// string literal (it ends with its quote), so the stretch's tokens end
// where its trailing whitespace begins.
func lastTokenEnd(src string, from, to, last int) int {
	for to > from && isSpace(src[to-1]) {
		to--
	}
	if to > from {
		return to
	}
	return last
}
