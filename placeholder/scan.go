package placeholder

import (
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
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
// The package documentation says exactly what counts as a placeholder. It
// reads sql as no engine in particular does (see Compile); ScanFor reads
// it as one engine does.
func Scan(sql string) ([]Placeholder, error) {
	return scan(anyReading, sql, nil, nil, nil)
}

// ScanFor is Scan reading sql as an engine with the rules lx does: which
// quotes, escapes and comments it has decides what is code.
func ScanFor(lx engine.Lexical, sql string) ([]Placeholder, error) {
	return scan(lx, sql, nil, nil, nil)
}

// token kinds the list-position rule looks back at.
type tokKind uint8

const (
	tokOther tokKind = iota
	tokIn
	tokLParen
)

// scan does Scan's work, reading src as lx says. When parens is not nil
// it also records, for each placeholder, whether its list form must bring
// its own parentheses (it follows IN directly) or not (it sits inside IN
// ( )). When st is not nil it also fills in *st (see Template.Statement),
// and when inert is not nil it appends the placeholders written inside
// literals and comments (see Template.Inert): the walk already tells
// tokens from comments and quotes, and a second walk over the same text
// would only repeat it.
func scan(lx engine.Lexical, src string, parens *[]bool, st *Statement, inert *[]Placeholder) ([]Placeholder, error) {
	out := placeholderSlice(src)
	pos := positioner{src: src}
	prev1, prev2 := tokOther, tokOther
	ends := statementEnds{semi: -1}
	var sc sqltoken.Scanner
	sc.Reset(lx, src)
	for {
		t, ok := sc.Next()
		if !ok {
			break
		}
		kind := tokOther
		switch t.Kind {
		case sqltoken.Word:
			kind = wordKind(src[t.Start:t.End])
		case sqltoken.Comment, sqltoken.String, sqltoken.QuotedName:
			if t.Is(sqltoken.Unclosed) {
				return nil, openError(src, t, &pos)
			}
			if inert != nil && t.Is(sqltoken.HoldsPlaceholder) {
				*inert = appendInert(*inert, src, t, &pos)
			}
			if t.Kind == sqltoken.Comment { // comments are not tokens
				ends.comment(src, t.Start, t.End)
				continue
			}
		case sqltoken.Placeholder:
			if t.Is(sqltoken.Malformed) {
				off, msg := sqltoken.Problem(src, t.Start)
				return nil, pos.errorf(off, "%s", msg)
			}
			line, col := pos.at(t.Start)
			f := Placeholder{Name: sqltoken.PlaceholderName(src[t.Start:t.End]), Start: t.Start, End: t.End, Line: line, Column: col}
			f.InList = inList(sc, src, prev1, prev2)
			out = append(out, f)
			if parens != nil {
				*parens = append(*parens, prev1 == tokIn)
			}
		case sqltoken.Punct:
			switch src[t.Start] {
			case '(':
				kind = tokLParen
			case ';':
				ends.semicolon(src, t.Start)
			}
		}
		prev2, prev1 = prev1, kind
	}
	if st != nil {
		*st = ends.statement(src, &pos)
	}
	return out, nil
}

// appendInert appends to out the placeholders written in t, a literal or
// comment, where the engine reads them as text: well formed ones with
// their name and end, malformed ones with an empty name and End at Start.
func appendInert(out []Placeholder, src string, t sqltoken.Token, pos *positioner) []Placeholder {
	for _, off := range sqltoken.Placeholders(src, t) {
		line, col := pos.at(off)
		f := Placeholder{Start: off, End: off, Line: line, Column: col}
		if name, end := sqltoken.ParsePlaceholder(src[:t.End], off); end > 0 {
			f.Name, f.End = name, end
		}
		out = append(out, f)
	}
	return out
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

// inList reports whether the placeholder just read by sc, after tokens
// prev2 and prev1, may render a list: it follows the keyword IN, or it is
// the only element of IN ( ).
func inList(sc sqltoken.Scanner, src string, prev1, prev2 tokKind) bool {
	switch {
	case prev1 == tokIn:
		return true
	case prev1 == tokLParen && prev2 == tokIn:
		for {
			t, ok := sc.Next()
			if !ok {
				return false
			}
			if t.Kind != sqltoken.Comment {
				return t.Kind == sqltoken.Punct && src[t.Start] == ')'
			}
		}
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

// lastTokenEnd returns the end of the last token in src[from:to], a
// stretch of whitespace and tokens only (no comment, no ';'), or last
// when it holds none. A token never ends with whitespace, not even a
// string literal (it ends with its quote), so the stretch's tokens end
// where its trailing whitespace begins.
func lastTokenEnd(src string, from, to, last int) int {
	for to > from && sqltoken.IsSpace(src[to-1]) {
		to--
	}
	if to > from {
		return to
	}
	return last
}
