package sqltoken

import (
	"fmt"
	"unicode/utf8"
)

// The placeholder grammar: '{', optional spaces, "variables" (exactly, in
// lower case, not followed by a word byte), optional spaces and '.' start
// a placeholder; then optional spaces, a code name [A-Za-z_][A-Za-z0-9_]*,
// optional spaces and '}' end it. Anything else after the start is a
// malformed placeholder; a '{' that starts none is a brace.

// placeholderParse is what parsePlaceholder found at a '{'.
type placeholderParse struct {
	// started: the text after '{' starts a placeholder.
	started bool
	// nameStart, nameEnd: the code name; end: just past '}'.
	nameStart, nameEnd, end int
	// problem says what is wrong with a started placeholder, at offset
	// off; "" when it is well formed.
	problem string
	off     int
}

// parsePlaceholder reads the placeholder whose '{' is at src[i].
func parsePlaceholder(src string, i int) (p placeholderParse) {
	n := len(src)
	j := skipSpace(src, i+1)
	const word = "variables"
	if n-j < len(word) || src[j:j+len(word)] != word {
		return p
	}
	j += len(word)
	if j < n && IsWordByte(src[j]) {
		return p
	}
	j = skipSpace(src, j)
	if j >= n || src[j] != '.' {
		return p
	}
	p.started = true
	j = skipSpace(src, j+1)
	if j >= n {
		p.problem, p.off = "placeholder is never closed: expected a code name and '}'", i
		return p
	}
	if classes[src[j]] != cLetter {
		p.off = j
		switch {
		case src[j] == '}':
			p.problem = `missing code name after "variables."`
		case classes[src[j]] == cDigit:
			p.problem = fmt.Sprintf("code name must start with a letter or underscore, found %q", src[j])
		default:
			r, _ := utf8.DecodeRuneInString(src[j:])
			p.problem = fmt.Sprintf("expected a code name after \"variables.\", found %q", r)
		}
		return p
	}
	p.nameStart = j
	for j < n && (classes[src[j]] == cLetter || classes[src[j]] == cDigit) {
		j++
	}
	p.nameEnd = j
	name := src[p.nameStart:j]
	j = skipSpace(src, j)
	if j >= n {
		p.problem, p.off = fmt.Sprintf("placeholder {variables.%s is never closed: expected '}'", name), i
		return p
	}
	if src[j] != '}' {
		r, _ := utf8.DecodeRuneInString(src[j:])
		p.problem, p.off = fmt.Sprintf("unexpected %q after code name %q: expected '}'", r, name), j
		return p
	}
	p.end = j + 1
	return p
}

func skipSpace(src string, i int) int {
	for i < len(src) && classes[src[i]] == cSpace {
		i++
	}
	return i
}

// PlaceholderName returns the code name of a well-formed Placeholder
// token, whose text is text.
func PlaceholderName(text string) string {
	p := parsePlaceholder(text, 0)
	return text[p.nameStart:p.nameEnd]
}

// ParsePlaceholder reads the placeholder whose '{' is at src[i]: its code
// name and the offset just past its '}', or end -1 when no well-formed
// placeholder starts there.
func ParsePlaceholder(src string, i int) (name string, end int) {
	p := parsePlaceholder(src, i)
	if !p.started || p.problem != "" {
		return "", -1
	}
	return src[p.nameStart:p.nameEnd], p.end
}

// Problem says what is wrong with the placeholder that starts at
// src[start], the Start of a token marked Malformed, and at which offset
// of src; msg is "" when a well-formed placeholder or none starts there.
func Problem(src string, start int) (off int, msg string) {
	p := parsePlaceholder(src, start)
	return p.off, p.problem
}

// Placeholders returns the offsets of the '{' of every placeholder,
// well-formed or not, that starts inside the text of t, a token marked
// HoldsPlaceholder: text that looks like a placeholder but that the
// engine reads as part of a string literal, quoted name or comment.
func Placeholders(src string, t Token) []int {
	var out []int
	text := src[:t.End]
	for k := t.Start + 1; k < t.End; k++ {
		if text[k] == '{' && parsePlaceholder(text, k).started {
			out = append(out, k)
		}
	}
	return out
}
