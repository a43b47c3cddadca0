// Package sqltoken is the library's one reading of SQL text: it splits a
// query into tokens (words, quoted names, string literals, numbers,
// {variables.x} placeholders, bind markers, comments and punctuation) the
// way one engine reads it, as its engine.Lexical describes.
//
// Every token also says whether another engine would read the same text
// another way (Token.Why): a quote that ends elsewhere when backslashes
// escape, a comment that nests on some engines, a '#' that is a comment on
// MySQL only, a word with characters outside ASCII. A caller that must be
// right on every engine (the access checker) refuses those; a caller that
// knows its engine reads the tokens as they are.
//
// Whitespace (ASCII only) is not a token. The scanner never fails: a quote
// or comment left open runs to the end of the text and is marked Unclosed,
// and a malformed placeholder is a Placeholder token marked Malformed
// (Malformed says what is wrong and where).
package sqltoken

import (
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// Kind is what a token is.
type Kind uint8

// The kinds of tokens.
const (
	// Word is an unquoted identifier or keyword.
	Word Kind = iota + 1
	// QuotedName is a quoted identifier: "...", `...` or [...], as the
	// engine reads them.
	QuotedName
	// String is a string literal: '...', "..." on MySQL, E'...' and
	// dollar-quoted text on PostgreSQL.
	String
	// Number is a numeric literal: digits, an optional fraction and an
	// optional exponent.
	Number
	// Placeholder is {variables.<code_name>}, or the start of a malformed
	// one (see Malformed).
	Placeholder
	// BindMarker is text that some engine's driver reads as a bind marker:
	// '?' and digits, ':name', '@name', '$' and digits or a word. Which of
	// them a given engine reads is engine.Engine.ReadsMarker's answer.
	BindMarker
	// Comment is a "--" or '#' comment (without its newline) or a block
	// comment.
	Comment
	// Punct is one character of punctuation or an operator, or one
	// character the scanner knows no other kind for.
	Punct
)

var kindNames = [...]string{"?", "word", "quoted name", "string", "number", "placeholder", "bind marker", "comment", "punctuation"}

// String names the kind, for messages and tests.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "?"
}

// Flags qualify a token.
type Flags uint8

// The flags of a token.
const (
	// Unclosed marks a string literal, quoted name or block comment whose
	// end is missing: the token runs to the end of the text.
	Unclosed Flags = 1 << iota
	// Malformed marks a Placeholder token whose text starts a placeholder
	// ("{variables.") but does not finish one; the token is its '{' alone.
	Malformed
	// HoldsPlaceholder marks a string literal, quoted name or comment
	// whose text holds a {variables.x} placeholder, or the start of one:
	// the engine reads it as text, not as a placeholder.
	HoldsPlaceholder
)

// Ambiguity says why another engine could read a token's text another
// way; 0 (None) means that every engine reads it alike.
type Ambiguity uint8

// The reasons a token is ambiguous.
const (
	// None: every engine reads the token alike.
	None Ambiguity = iota
	// Backslash: the quote ends at another place depending on whether a
	// backslash escapes the next character.
	Backslash
	// DashComment: "--" followed by something other than a space: MySQL
	// reads two minus signs, the other engines a comment.
	DashComment
	// CarriageReturn: a carriage return not followed by a newline inside a
	// "--" comment ends the comment on PostgreSQL only.
	CarriageReturn
	// NestedComment: a "/*" inside a block comment nests on PostgreSQL and
	// ClickHouse, not on MySQL and SQLite.
	NestedComment
	// ExecutableComment: /*! /*M! and /*+ are code on MySQL and MariaDB
	// (version comments, optimizer hints).
	ExecutableComment
	// Hash: '#' starts a comment on MySQL, an operator elsewhere.
	Hash
	// Dollar: '$' opens a dollar-quoted string, a parameter or a heredoc,
	// or is part of a name, depending on the engine.
	Dollar
	// NonASCII: a character outside ASCII outside quotes, a letter on some
	// engines, a space, a quote or an error on others.
	NonASCII
	// Bracket: '[' is a name quote on SQLite and a subscript elsewhere, and
	// the text up to the first ']' holds a quote or a comment, or no ']'
	// follows.
	Bracket
	// NumberRun: a number runs into a letter, '$' or '.' ("1from"): a
	// number and a word on some engines, one name on MySQL.
	NumberRun
	// At: '@' before a name, a quote, '$' or '@' is a variable on MySQL, a
	// bind marker on SQLite and ClickHouse, an operator on PostgreSQL.
	At
	// Brace: a '{' that starts no placeholder, or a '}' outside one
	// (ClickHouse reads {name:Type} as a query parameter).
	Brace
	// Char: a control character, a backslash or a backtick outside quotes
	// (where the engine does not quote names with it), or another ASCII
	// character that no engine reads the same way.
	Char
)

var ambiguityNames = [...]string{"none", "backslash", "dash comment", "carriage return", "nested comment", "executable comment", "hash", "dollar", "non-ASCII", "bracket", "number run", "at", "brace", "character"}

// String names the reason, for tests.
func (a Ambiguity) String() string {
	if int(a) < len(ambiguityNames) {
		return ambiguityNames[a]
	}
	return "?"
}

// Token is one token: its kind and its span in the text.
type Token struct {
	// Kind is what the token is.
	Kind Kind
	// Flags qualify it: Unclosed, Malformed, HoldsPlaceholder.
	Flags Flags
	// Why is not None when another engine could read the token's text
	// another way.
	Why Ambiguity
	// Start is the byte offset of the token's first character and End the
	// offset just past its last.
	Start, End int
}

// Ambiguous reports whether another engine could read the token's text
// another way (Why says why).
func (t Token) Ambiguous() bool { return t.Why != None }

// Is reports whether every flag of f is set on t.
func (t Token) Is(f Flags) bool { return t.Flags&f == f }

// Text returns the token's text in src, the text it was read from.
func (t Token) Text(src string) string { return src[t.Start:t.End] }

// Scanner reads the tokens of one text, one at a time. The zero value
// reads nothing; Reset prepares it for a text.
type Scanner struct {
	src string
	lx  engine.Lexical
	// words tells the bytes that continue a word on this engine.
	words *[256]bool
	i     int
	// prev is the kind of the last token, and prevEnd where it ended:
	// ".5" after a name is a dot and a number, "::x" a cast, not a marker.
	prev    Kind
	prevEnd int
}

// Reset makes s read src as an engine with the rules lx does.
func (s *Scanner) Reset(lx engine.Lexical, src string) {
	*s = Scanner{src: src, lx: lx, words: &unicodeWords, prevEnd: -1}
	if lx.ASCIIWords {
		s.words = &asciiWords
	}
}

// Tokens returns every token of src as an engine with the rules lx reads
// it.
func Tokens(lx engine.Lexical, src string) []Token {
	var s Scanner
	s.Reset(lx, src)
	out := make([]Token, 0, len(src)/6+4)
	for {
		t, ok := s.Next()
		if !ok {
			return out
		}
		out = append(out, t)
	}
}

// Next returns the next token, or false at the end of the text.
func (s *Scanner) Next() (Token, bool) {
	src := s.src
	i := s.i
	for i < len(src) && classes[src[i]] == cSpace {
		i++
	}
	if i >= len(src) {
		s.i = i
		return Token{}, false
	}
	// Words and punctuation, the most frequent tokens, are read here; the
	// others in token. Each case returns its token as a literal: building
	// it in a variable first cost a store and reload per token.
	switch c := src[i]; classes[c] {
	case cLetter:
		if (c == 'E' || c == 'e') && s.lx.EscapeStrings {
			break
		}
		j := i + 1
		high := byte(0)
		words := s.words
		for j < len(src) && words[src[j]] {
			high |= src[j]
			j++
		}
		s.i, s.prev, s.prevEnd = j, Word, j
		if high >= 0x80 {
			return Token{Kind: Word, Why: NonASCII, Start: i, End: j}, true
		}
		return Token{Kind: Word, Start: i, End: j}, true
	case cPunct:
		s.i, s.prev, s.prevEnd = i+1, Punct, i+1
		return Token{Kind: Punct, Start: i, End: i + 1}, true
	}
	t := s.token(i)
	s.i, s.prev, s.prevEnd = t.End, t.Kind, t.End
	return t, true
}

// Byte classes of the scanner's dispatch.
const (
	cOther uint8 = iota
	cSpace
	cLetter // A-Z a-z _
	cDigit
	cHigh // a byte of a character outside ASCII
	cDollar
	cSpecial // a byte with a rule of its own: see token
	cPunct   // an operator or punctuation character every engine reads alike
)

var classes = func() (t [256]uint8) {
	for c := range 256 {
		b := byte(c)
		switch {
		case b == ' ' || b >= '\t' && b <= '\r':
			t[c] = cSpace
		case b == '_' || b|0x20 >= 'a' && b|0x20 <= 'z':
			t[c] = cLetter
		case b >= '0' && b <= '9':
			t[c] = cDigit
		case b >= 0x80:
			t[c] = cHigh
		case b == '$':
			t[c] = cDollar
		case strings.IndexByte("'\"`[-/#{}.?:@", b) >= 0:
			t[c] = cSpecial
		case strings.IndexByte("()],;+*%<>=!|&^~", b) >= 0:
			t[c] = cPunct
		}
	}
	return t
}()

// IsWordByte reports whether c can continue an unquoted word on some
// engine: an ASCII letter or digit, '_', '$', or a byte of a character
// outside ASCII. Text set next to a word must not start with one, or the
// engine reads both as one word.
func IsWordByte(c byte) bool {
	switch classes[c] {
	case cLetter, cDigit, cHigh, cDollar:
		return true
	}
	return false
}

// IsSpace reports whether c is white space to every engine: ASCII space,
// tab, newline, vertical tab, form feed or carriage return.
func IsSpace(c byte) bool { return classes[c] == cSpace }

// The bytes that continue a word, where characters outside ASCII are
// letters and where they are not.
var unicodeWords, asciiWords = func() (u, a [256]bool) {
	for c := range 256 {
		switch classes[c] {
		case cLetter, cDigit, cDollar:
			u[c], a[c] = true, true
		case cHigh:
			u[c] = true
		}
	}
	return u, a
}()

// wordByte reports whether c continues a word on this engine.
func (s *Scanner) wordByte(c byte) bool { return s.words[c] }

// token reads the token that starts at src[i], which is not a space.
func (s *Scanner) token(i int) Token {
	src := s.src
	c := src[i]
	switch classes[c] {
	case cLetter:
		if (c == 'E' || c == 'e') && s.lx.EscapeStrings && i+1 < len(src) && src[i+1] == '\'' {
			return s.quoted(i, i+1, String, true)
		}
		return s.word(i)
	case cHigh:
		if s.lx.ASCIIWords {
			return Token{Kind: Punct, Why: NonASCII, Start: i, End: runeEnd(src, i)}
		}
		return s.word(i)
	case cDigit:
		return s.number(i)
	case cDollar:
		return s.dollar(i)
	case cPunct:
		return Token{Kind: Punct, Start: i, End: i + 1}
	case cSpecial:
		return s.special(i)
	}
	return Token{Kind: Punct, Why: Char, Start: i, End: i + 1}
}

// word reads the word at src[i]. A character outside ASCII anywhere in it
// makes it ambiguous: ClickHouse does not read it as part of a word.
func (s *Scanner) word(i int) Token {
	src := s.src
	j := i + 1
	high := src[i]
	words := s.words
	for j < len(src) && words[src[j]] {
		high |= src[j]
		j++
	}
	t := Token{Kind: Word, Start: i, End: j}
	if high >= 0x80 {
		t.Why = NonASCII
	}
	return t
}

// runeEnd returns the end of the UTF-8 sequence that starts at src[i]: a
// lead byte and the continuation bytes after it, an invalid byte alone.
func runeEnd(src string, i int) int {
	j := i + 1
	for j < len(src) && j-i < 4 && src[j]&0xC0 == 0x80 {
		j++
	}
	return j
}

// special reads a token starting with a byte of class cSpecial.
func (s *Scanner) special(i int) Token {
	src := s.src
	c := src[i]
	var next byte
	if i+1 < len(src) {
		next = src[i+1]
	}
	switch c {
	case '\'':
		return s.quoted(i, i, String, s.lx.BackslashEscapes)
	case '"':
		if s.lx.DoubleQuoteStrings {
			return s.quoted(i, i, String, s.lx.BackslashEscapes)
		}
		return s.quoted(i, i, QuotedName, s.lx.NameEscapes)
	case '`':
		if s.lx.BacktickNames {
			return s.quoted(i, i, QuotedName, s.lx.NameEscapes)
		}
		return Token{Kind: Punct, Why: Char, Start: i, End: i + 1}
	case '[':
		return s.bracket(i)
	case '-':
		if next == '-' {
			return s.dashComment(i)
		}
	case '/':
		if next == '*' {
			return s.blockComment(i)
		}
	case '#':
		if s.lx.HashComments {
			t := s.lineComment(i, i+1)
			t.Why = Hash
			return t
		}
		return Token{Kind: Punct, Why: Hash, Start: i, End: i + 1}
	case '{':
		return s.brace(i)
	case '}':
		return Token{Kind: Punct, Why: Brace, Start: i, End: i + 1}
	case '.':
		if classes[next] == cDigit && !s.afterName(i) {
			return s.number(i)
		}
	case '?':
		j := i + 1
		for j < len(src) && classes[src[j]] == cDigit {
			j++
		}
		return Token{Kind: BindMarker, Start: i, End: j}
	case ':':
		// "::" is a cast: its second ':' opens no marker.
		if classes[next] == cLetter && !s.doubled(i) {
			return Token{Kind: BindMarker, Start: i, End: s.nameEnd(i + 1)}
		}
	case '@':
		switch {
		case classes[next] == cLetter && !s.doubled(i):
			return Token{Kind: BindMarker, Why: At, Start: i, End: s.nameEnd(i + 1)}
		case next == '@' || next == '\'' || next == '"' || next == '`' || next == '$':
			return Token{Kind: Punct, Why: At, Start: i, End: i + 1}
		}
	}
	return Token{Kind: Punct, Start: i, End: i + 1}
}

// doubled reports whether the character at src[i] follows the same
// character as a token of its own: the second ':' of a "::" cast or '@'
// of "@@" opens no marker.
func (s *Scanner) doubled(i int) bool {
	return s.prev == Punct && s.prevEnd == i && s.src[i-1] == s.src[i]
}

// nameEnd returns the end of the ASCII name ([A-Za-z0-9_]*) at src[j].
func (s *Scanner) nameEnd(j int) int {
	for j < len(s.src) && (classes[s.src[j]] == cLetter || classes[s.src[j]] == cDigit) {
		j++
	}
	return j
}

// afterName reports whether the token that ended at i can be followed by
// ".name", so that "t.1" is a name, a dot and a number, not "t" and ".1".
func (s *Scanner) afterName(i int) bool {
	if s.prevEnd != i {
		return false
	}
	switch s.prev {
	case Word, QuotedName:
		return true
	case Punct:
		return s.src[i-1] == ')' || s.src[i-1] == ']'
	}
	return false
}

// quoted reads the string literal or quoted name whose quote is at src[q]
// (after a prefix starting at i, as in E'...'), reading a backslash as an
// escape when escapes is true. When a backslash is in it, the other
// reading decides whether it is ambiguous.
func (s *Scanner) quoted(i, q int, kind Kind, escapes bool) Token {
	end, backslash := quotedEnd(s.src, q, escapes)
	t := Token{Kind: kind, Start: i, End: end}
	if backslash {
		if other, _ := quotedEnd(s.src, q, !escapes); other != end {
			t.Why = Backslash
		}
	}
	if end < 0 {
		t.End, t.Flags = len(s.src), Unclosed
	}
	s.notePlaceholder(&t, q+1)
	return t
}

// quotedEnd returns the offset just past the quoted text opened at src[q],
// or -1 when it is never closed, and whether a backslash is inside it. A
// doubled quote stands for itself; with escapes, a backslash escapes the
// next byte.
func quotedEnd(src string, q int, escapes bool) (end int, backslash bool) {
	c := src[q]
	for j := q + 1; j < len(src); j++ {
		switch src[j] {
		case c:
			if j+1 < len(src) && src[j+1] == c {
				j++
				continue
			}
			return j + 1, backslash
		case '\\':
			backslash = true
			if escapes {
				j++
			}
		}
	}
	return -1, backslash
}

// bracket reads '[': a quoted name up to the first ']' on SQLite, one
// character elsewhere. Both readings meet again after the ']' unless the
// text up to it holds a quote or a comment.
func (s *Scanner) bracket(i int) Token {
	src := s.src
	j := strings.IndexByte(src[i:], ']')
	t := Token{Kind: Punct, Start: i, End: i + 1}
	if j < 0 {
		t.Why = Bracket
	} else if inner := src[i+1 : i+j]; strings.ContainsAny(inner, "'\"`") || strings.Contains(inner, "--") || strings.Contains(inner, "/*") {
		t.Why = Bracket
	}
	if s.lx.BracketNames {
		t.Kind = QuotedName
		if j < 0 {
			t.End, t.Flags = len(src), Unclosed
		} else {
			t.End = i + j + 1
		}
		s.notePlaceholder(&t, i+1)
	}
	return t
}

// dashComment reads what starts with "--" at src[i].
func (s *Scanner) dashComment(i int) Token {
	src := s.src
	var after byte = ' '
	if i+2 < len(src) {
		after = src[i+2]
	}
	if s.lx.DashCommentSpace && !(after <= ' ' || after == 0x7f) {
		return Token{Kind: Punct, Why: DashComment, Start: i, End: i + 1}
	}
	t := s.lineComment(i, i+2)
	if !IsSpace(after) {
		t.Why = DashComment
	}
	return t
}

// lineComment reads the comment that starts at src[i] and runs to the end
// of the line from body on, the newline left out.
func (s *Scanner) lineComment(i, body int) Token {
	src := s.src
	end := len(src)
	if j := strings.IndexByte(src[body:], '\n'); j >= 0 {
		end = body + j
	}
	t := Token{Kind: Comment, Start: i, End: end}
	if k := strings.IndexByte(src[body:end], '\r'); k >= 0 {
		// PostgreSQL ends the comment at a carriage return; the others
		// do not, unless a newline follows it.
		if s.lx.ReturnEndsComment {
			t.End = body + k
		}
		for r := body + k; r < end; r++ {
			if src[r] == '\r' && (r+1 < end || end == len(src)) {
				t.Why = CarriageReturn
				break
			}
		}
	}
	s.notePlaceholder(&t, body)
	return t
}

// blockComment reads the comment that starts with "/*" at src[i], nested
// ones included where the engine nests them.
func (s *Scanner) blockComment(i int) Token {
	src := s.src
	t := Token{Kind: Comment, Start: i}
	rest := src[i+2:]
	if strings.HasPrefix(rest, "!") || strings.HasPrefix(rest, "M!") || strings.HasPrefix(rest, "+") {
		t.Why = ExecutableComment
	}
	flat := strings.Index(rest, "*/")
	k := strings.Index(rest, "/*")
	nested := k >= 0 && (flat < 0 || k < flat)
	if nested && t.Why == None {
		t.Why = NestedComment
	}
	if !s.lx.NestedComments || !nested {
		if flat < 0 {
			t.End, t.Flags = len(src), Unclosed
		} else {
			t.End = i + 2 + flat + 2
		}
		s.notePlaceholder(&t, i+2)
		return t
	}
	depth := 1
	for j := i + 2; j+1 < len(src); j++ {
		switch {
		case src[j] == '/' && src[j+1] == '*':
			depth++
			j++
		case src[j] == '*' && src[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				t.End = j + 1
				s.notePlaceholder(&t, i+2)
				return t
			}
		}
	}
	t.End, t.Flags = len(src), Unclosed
	s.notePlaceholder(&t, i+2)
	return t
}

// dollar reads what starts with '$' at src[i]: a dollar-quoted string
// where the engine has them, else a marker ('$' and digits or a word) or
// the character alone. Every reading of '$' differs between engines.
func (s *Scanner) dollar(i int) Token {
	src := s.src
	if s.lx.DollarQuotes {
		if tagEnd, ok := dollarTag(src, i); ok {
			delim := src[i : tagEnd+1]
			t := Token{Kind: String, Why: Dollar, Start: i}
			if k := strings.Index(src[tagEnd+1:], delim); k >= 0 {
				t.End = tagEnd + 1 + k + len(delim)
			} else {
				t.End, t.Flags = len(src), Unclosed
			}
			s.notePlaceholder(&t, tagEnd+1)
			return t
		}
	}
	j := i + 1
	for j < len(src) && s.wordByte(src[j]) {
		j++
	}
	if j == i+1 {
		return Token{Kind: Punct, Why: Dollar, Start: i, End: j}
	}
	return Token{Kind: BindMarker, Why: Dollar, Start: i, End: j}
}

// dollarTag reports whether src[i], a '$', opens a dollar quote, and the
// offset of the '$' that closes its tag.
func dollarTag(src string, i int) (end int, ok bool) {
	j := i + 1
	if j < len(src) && classes[src[j]] == cDigit {
		return 0, false // $1 is a parameter
	}
	for j < len(src) {
		switch classes[src[j]] {
		case cLetter, cDigit, cHigh:
			j++
			continue
		case cDollar:
			return j, true
		}
		return 0, false
	}
	return 0, false
}

// number reads the number at src[i]: digits, a fraction, an exponent. A
// letter, '$' or '.' right after it makes it ambiguous; on an engine whose
// words may start with digits it is then a word.
func (s *Scanner) number(i int) Token {
	src := s.src
	j := digitsEnd(src, i)
	if j < len(src) && src[j] == '.' {
		j = digitsEnd(src, j+1)
	}
	if j < len(src) && src[j]|0x20 == 'e' {
		j = exponentEnd(src, j)
	}
	t := Token{Kind: Number, Start: i, End: j}
	if j < len(src) && (s.wordByte(src[j]) || src[j] == '.' || src[j] >= 0x80) {
		t.Why = NumberRun
		if s.lx.DigitWords && src[i] != '.' && s.wordByte(src[j]) && digitsEnd(src, i) == j {
			t = s.word(i)
			t.Why = NumberRun
		}
	}
	return t
}

// digitsEnd returns the offset after the digits that start at src[j].
func digitsEnd(src string, j int) int {
	for j < len(src) && classes[src[j]] == cDigit {
		j++
	}
	return j
}

// exponentEnd returns the offset after the exponent ("e5", "E-3") that
// starts at src[j], an 'e' or 'E', or j when there is none.
func exponentEnd(src string, j int) int {
	k := j + 1
	if k < len(src) && (src[k] == '+' || src[k] == '-') {
		k++
	}
	if k >= len(src) || classes[src[k]] != cDigit {
		return j
	}
	return digitsEnd(src, k)
}

// brace reads what starts with '{' at src[i]: a placeholder, the start of
// a malformed one, or a brace alone.
func (s *Scanner) brace(i int) Token {
	p := parsePlaceholder(s.src, i)
	switch {
	case !p.started:
		return Token{Kind: Punct, Why: Brace, Start: i, End: i + 1}
	case p.problem != "":
		return Token{Kind: Placeholder, Flags: Malformed, Start: i, End: i + 1}
	}
	return Token{Kind: Placeholder, Start: i, End: p.end}
}

// notePlaceholder sets HoldsPlaceholder on t, a string, quoted name or
// comment whose text starts at body, when a placeholder starts in it.
func (s *Scanner) notePlaceholder(t *Token, body int) {
	text := s.src[:t.End]
	for k := body; k < t.End; k++ {
		j := strings.IndexByte(text[k:], '{')
		if j < 0 {
			return
		}
		k += j
		if parsePlaceholder(text, k).started {
			t.Flags |= HoldsPlaceholder
			return
		}
	}
}
