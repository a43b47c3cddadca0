package endpoint

import (
	"strings"
	"unicode/utf8"
)

// statementBody returns src without what follows its last token: trailing
// semicolons, whitespace and comments, which cannot stand inside the
// subquery that pages a run. A semicolon followed by more SQL means a
// second statement, which an endpoint may not hold; its offset is returned
// (else -1). Quotes and comments are read as package placeholder reads
// them, so both agree on what is SQL text.
func statementBody(src string) (body string, semicolon int) {
	n := len(src)
	lastEnd, pendingSemi := 0, -1
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '-' && i+1 < n && src[i+1] == '-':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				i = n
			} else {
				i += j + 1
			}
			continue
		case c == '/' && i+1 < n && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				i = n
			} else {
				i += 2 + j + 2
			}
			continue
		case c == ';':
			if pendingSemi < 0 {
				pendingSemi = i
			}
			i++
			continue
		}
		if pendingSemi >= 0 {
			return src, pendingSemi
		}
		if c == '\'' || c == '"' || c == '`' {
			i = skipQuoted(src, i)
		} else {
			i++
		}
		lastEnd = i
	}
	return src[:lastEnd], -1
}

// skipQuoted returns the offset just past the quoted text opened at src[i],
// or len(src) when it is never closed. A doubled quote stands for itself;
// in '...' a backslash escapes the next byte.
func skipQuoted(src string, i int) int {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case q:
			if j+1 < len(src) && src[j+1] == q {
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
	return len(src)
}

// position returns the 1-based line and rune column of offset off in src.
func position(src string, off int) (line, col int) {
	line = 1 + strings.Count(src[:off], "\n")
	start := strings.LastIndexByte(src[:off], '\n') + 1
	return line, 1 + utf8.RuneCountInString(src[start:off])
}
