package access

import (
	"strings"
	"unicode/utf8"
)

// The tokenizer reads the query the way every one of the four engines
// would, and refuses whatever some engine could read another way: a check
// is only as good as the agreement between the text it reads and the text
// the engine runs. So:
//
//   - A quoted string or identifier ('...', "...", `...`) must end at the
//     same quote whether a backslash escapes the next character (MySQL,
//     ClickHouse, PostgreSQL's E'') or not (SQLite, standard PostgreSQL).
//   - "--" must be followed by whitespace: MySQL reads "--x" as two minus
//     signs. A carriage return inside a "--" comment must be followed by a
//     newline: PostgreSQL ends the comment there, the others do not.
//   - Block comments may not hold "/*" (PostgreSQL and ClickHouse nest
//     them, MySQL and SQLite do not), nor start with '!' or '+' (MySQL's
//     version comments and optimizer hints are code).
//   - '#' (a comment on MySQL, an operator on PostgreSQL), '$' (dollar
//     quotes, parameters, heredocs), a backslash, '@' before a name
//     (MySQL's variables), braces other than a placeholder's, control
//     characters and any character outside ASCII outside quotes are
//     refused: ClickHouse reads Unicode spaces and quotation marks as its
//     own.
//   - '[' is an identifier quote on SQLite and a subscript elsewhere: the
//     text up to the first ']' may hold no quote and no comment, so both
//     readings meet again after it.
//   - A number may not run into letters ("1from" is a number and a keyword
//     on PostgreSQL, an identifier on MySQL).
//
// Placeholders are read exactly as package placeholder reads them: '{',
// optional spaces, "variables", optional spaces, '.', optional spaces, a
// code name, optional spaces, '}'.

type tokKind uint8

const (
	tEOF tokKind = iota
	tWord
	tQuoted // a quoted identifier: "..." or `...`
	tString
	tNumber
	tPlaceholder
	tPunct // one operator character
	tLParen
	tRParen
	tLBracket
	tRBracket
	tComma
	tDot
	tSemi
)

// token is one token of the query.
type token struct {
	kind       tokKind
	start, end int // byte offsets in the query
	// text is a word as written, a quoted identifier's content (doubled
	// quotes made single), a placeholder's code name, or the operator
	// character.
	text string
	// lower is text with ASCII letters lowered, for words: keywords are
	// compared against it.
	lower string
	quote byte // the quote of a tQuoted
	// seen is set by the parser on every token whose role it decided, and
	// checked at the end on the tokens that matter (see parser.audit).
	seen bool
}

// isWord reports whether t is the unquoted word kw (lower case).
func (t *token) isWord(kw string) bool { return t.kind == tWord && t.lower == kw }

// isName reports whether t can name something: a word or a quoted
// identifier.
func (t *token) isName() bool { return t.kind == tWord || t.kind == tQuoted }

// isPunct reports whether t is the operator character c.
func (t *token) isPunct(c byte) bool { return t.kind == tPunct && t.text[0] == c }

// lexer holds the query being read.
type lexer struct {
	src  string
	toks []token
}

func (l *lexer) fail(off int, reason Reason, format string, args ...any) *Error {
	return errorAt(l.src, off, reason, format, args...)
}

func isSpaceByte(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

func isWordStart(c byte) bool { return c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z' }

func isWordByte(c byte) bool { return isWordStart(c) || c >= '0' && c <= '9' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// lex returns the tokens of src, ending with a tEOF token.
func lex(src string) ([]token, *Error) {
	if err := checkText(src); err != nil {
		return nil, err
	}
	l := &lexer{src: src, toks: make([]token, 0, len(src)/8+8)}
	for i := 0; i < len(src); {
		// Spaces and words, the most frequent, are read here; the rest
		// in token.
		switch c := src[i]; {
		case isSpaceByte(c):
			i++
		case isWordStart(c):
			j := i + 1
			for j < len(src) && isWordByte(src[j]) {
				j++
			}
			w := src[i:j]
			l.toks = append(l.toks, token{kind: tWord, start: i, end: j, text: w, lower: asciiLower(w)})
			i = j
		default:
			var err *Error
			if i, err = l.token(i); err != nil {
				return nil, err
			}
		}
	}
	l.toks = append(l.toks, token{kind: tEOF, start: len(src), end: len(src)})
	return l.toks, nil
}

// checkText refuses a query that is not valid UTF-8 or holds a NUL.
func checkText(src string) *Error {
	if !utf8.ValidString(src) {
		off := 0
		for off < len(src) {
			r, size := utf8.DecodeRuneInString(src[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return errorAt(src, off, ReasonAmbiguous, "the query is not valid UTF-8")
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		// SQLite stops reading at a NUL; other engines refuse it.
		return errorAt(src, i, ReasonAmbiguous, "the query holds a NUL character")
	}
	return nil
}

// token reads the comment or token that starts at src[i], which is
// neither a space nor a word (lex reads those), and returns the offset
// after it.
func (l *lexer) token(i int) (int, *Error) {
	src := l.src
	switch src[i] {
	case '-':
		if strings.HasPrefix(src[i:], "--") {
			return l.lineComment(i)
		}
	case '/':
		if strings.HasPrefix(src[i:], "/*") {
			return l.blockComment(i)
		}
	case '\'', '"', '`':
		return l.quoted(i)
	case '[':
		return l.bracket(i)
	case '{':
		return l.placeholder(i)
	case '.':
		if i+1 < len(src) && isDigit(src[i+1]) && !l.afterName() {
			return l.number(i)
		}
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return l.number(i)
	}
	return l.punct(i)
}

// afterName reports whether the last token can be followed by ".name"
// (so that "t.1" is a name, a dot and a number, not "t" and ".1").
func (l *lexer) afterName() bool {
	if len(l.toks) == 0 {
		return false
	}
	switch l.toks[len(l.toks)-1].kind {
	case tWord, tQuoted, tRParen, tRBracket:
		return true
	}
	return false
}

func (l *lexer) lineComment(i int) (int, *Error) {
	src := l.src
	if i+2 < len(src) && !isSpaceByte(src[i+2]) {
		return 0, l.fail(i, ReasonAmbiguous, "'--' must be followed by a space: MySQL reads %q as minus signs, the other engines as a comment", echo(src[i:min(len(src), i+3)]))
	}
	end := len(src)
	if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
		end = i + j + 1
	}
	body := src[i:end]
	for k := strings.IndexByte(body, '\r'); k >= 0; {
		if k+1 >= len(body) || body[k+1] != '\n' {
			return 0, l.fail(i+k, ReasonAmbiguous, "a carriage return inside a '--' comment ends the comment on PostgreSQL only; end the line with a newline")
		}
		next := strings.IndexByte(body[k+1:], '\r')
		if next < 0 {
			break
		}
		k += 1 + next
	}
	return end, nil
}

func (l *lexer) blockComment(i int) (int, *Error) {
	src := l.src
	j := strings.Index(src[i+2:], "*/")
	if j < 0 {
		return 0, l.fail(i, ReasonUnsupported, "block comment /* is never closed")
	}
	body := src[i+2 : i+2+j]
	if strings.HasPrefix(body, "!") || strings.HasPrefix(body, "M!") || strings.HasPrefix(body, "+") {
		return 0, l.fail(i, ReasonAmbiguous, "comments starting with /*! /*M! or /*+ are code on MySQL (version comments, optimizer hints); they are not allowed")
	}
	if k := strings.Index(body, "/*"); k >= 0 {
		return 0, l.fail(i+2+k, ReasonAmbiguous, "a '/*' inside a block comment nests on PostgreSQL and ClickHouse but not on MySQL and SQLite; remove it")
	}
	return i + 2 + j + 2, nil
}

// quotedEnd returns the offset just past the quoted text opened at src[i],
// reading a doubled quote as one and, when backslash is true, a backslash
// as escaping the next byte; -1 when it is never closed.
func quotedEnd(src string, i int, backslash bool) int {
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
			if backslash {
				j++
			}
		}
	}
	return -1
}

func (l *lexer) quoted(i int) (int, *Error) {
	src := l.src
	q := src[i]
	plain, escaped := quotedEnd(src, i, false), quotedEnd(src, i, true)
	what := "string literal"
	if q != '\'' {
		what = "quoted identifier"
	}
	if plain != escaped {
		return 0, l.fail(i, ReasonAmbiguous, "%s starting with %c ends at a different place depending on whether the engine reads backslashes as escapes; avoid a backslash before a quote", what, q)
	}
	if plain < 0 {
		return 0, l.fail(i, ReasonUnsupported, "%s starting with %c is never closed", what, q)
	}
	if q == '\'' {
		l.toks = append(l.toks, token{kind: tString, start: i, end: plain})
		return plain, nil
	}
	content := src[i+1 : plain-1]
	if strings.IndexByte(content, q) >= 0 {
		content = strings.ReplaceAll(content, string([]byte{q, q}), string(q))
	}
	l.toks = append(l.toks, token{kind: tQuoted, start: i, end: plain, text: content, quote: q})
	return plain, nil
}

func (l *lexer) bracket(i int) (int, *Error) {
	src := l.src
	j := strings.IndexByte(src[i:], ']')
	if j < 0 {
		return 0, l.fail(i, ReasonUnsupported, "'[' is never closed")
	}
	inner := src[i+1 : i+j]
	if strings.ContainsAny(inner, "'\"`") || strings.Contains(inner, "--") || strings.Contains(inner, "/*") {
		return 0, l.fail(i, ReasonAmbiguous, "SQLite reads [...] as a quoted identifier: the text up to the first ']' may hold no quote and no comment")
	}
	l.toks = append(l.toks, token{kind: tLBracket, start: i, end: i + 1, text: "["})
	return i + 1, nil
}

func (l *lexer) number(i int) (int, *Error) {
	src := l.src
	j := digitsEnd(src, i)
	if j < len(src) && src[j] == '.' {
		j = digitsEnd(src, j+1)
	}
	if j < len(src) && src[j]|0x20 == 'e' {
		j = exponentEnd(src, j)
	}
	if j < len(src) && (isWordByte(src[j]) || src[j] == '.' || src[j] == '$') {
		return 0, l.fail(i, ReasonAmbiguous, "number %q runs into the next character: engines read it differently (a number and a word, or one identifier); add a space", echo(src[i:min(len(src), j+1)]))
	}
	l.toks = append(l.toks, token{kind: tNumber, start: i, end: j, text: src[i:j]})
	return j, nil
}

// digitsEnd returns the offset after the digits that start at src[j].
func digitsEnd(src string, j int) int {
	for j < len(src) && isDigit(src[j]) {
		j++
	}
	return j
}

// exponentEnd returns the offset after the exponent ("e5", "E-3") that
// starts at src[j], an 'e' or 'E', or j when there is none: an 'e' without
// digits is not part of the number, and number then refuses it as running
// into a word.
func exponentEnd(src string, j int) int {
	k := j + 1
	if k < len(src) && (src[k] == '+' || src[k] == '-') {
		k++
	}
	if k >= len(src) || !isDigit(src[k]) {
		return j
	}
	return digitsEnd(src, k)
}

func skipSpaces(src string, i int) int {
	for i < len(src) && isSpaceByte(src[i]) {
		i++
	}
	return i
}

// placeholder reads {variables.<code_name>} as package placeholder does.
func (l *lexer) placeholder(i int) (int, *Error) {
	src := l.src
	n := len(src)
	j := skipSpaces(src, i+1)
	const word = "variables"
	isPlaceholder := strings.HasPrefix(src[j:], word)
	if isPlaceholder {
		j += len(word)
		// Package placeholder counts '$' and bytes of multi-byte
		// characters as continuing the word.
		if j < n && (isWordByte(src[j]) || src[j] == '$' || src[j] >= 0x80) {
			isPlaceholder = false
		}
	}
	if isPlaceholder {
		j = skipSpaces(src, j)
		isPlaceholder = j < n && src[j] == '.'
	}
	if !isPlaceholder {
		return 0, l.fail(i, ReasonAmbiguous, "'{' outside a {variables.name} placeholder is not allowed (ClickHouse reads {name:Type} as a query parameter)")
	}
	start := skipSpaces(src, j+1)
	end := codeNameEnd(src, start)
	j = skipSpaces(src, end)
	if end == start || j >= n || src[j] != '}' {
		return 0, l.fail(i, ReasonUnsupported, "malformed placeholder: expected {variables.<code_name>}")
	}
	l.toks = append(l.toks, token{kind: tPlaceholder, start: i, end: j + 1, text: src[start:end]})
	return j + 1, nil
}

// codeNameEnd returns the offset after the code name ([A-Za-z_][A-Za-z0-9_]*)
// that starts at src[j], or j when there is none.
func codeNameEnd(src string, j int) int {
	if j < len(src) && isWordStart(src[j]) {
		for j < len(src) && isWordByte(src[j]) {
			j++
		}
	}
	return j
}

// punctKinds gives the kind of each ASCII character that stands as a token
// of its own; tEOF marks the characters refused outside quotes.
var punctKinds = func() (k [128]tokKind) {
	k['('], k[')'], k[']'], k[','], k['.'], k[';'] = tLParen, tRParen, tRBracket, tComma, tDot, tSemi
	for _, c := range []byte("+-*/%<>=!|&^~?:@") {
		k[c] = tPunct
	}
	return k
}()

func (l *lexer) punct(i int) (int, *Error) {
	src := l.src
	c := src[i]
	if c >= 0x80 || punctKinds[c] == tEOF {
		return 0, l.refuseChar(i)
	}
	if c == '@' && i+1 < len(src) {
		if d := src[i+1]; isWordByte(d) || strings.IndexByte("@'\"`$", d) >= 0 {
			return 0, l.fail(i, ReasonAmbiguous, "'@' before a name is a variable on MySQL and SQLite; it is not allowed")
		}
	}
	l.toks = append(l.toks, token{kind: punctKinds[c], start: i, end: i + 1, text: src[i : i+1]})
	return i + 1, nil
}

// refuseChar says why the character at src[i] may not stand outside quotes.
func (l *lexer) refuseChar(i int) *Error {
	switch c := l.src[i]; c {
	case '#':
		return l.fail(i, ReasonAmbiguous, "'#' starts a comment on MySQL and is an operator elsewhere; it is not allowed (use -- comments)")
	case '$':
		return l.fail(i, ReasonAmbiguous, "'$' outside quotes (dollar-quoted strings, parameters, heredocs) is not allowed")
	case '\\':
		return l.fail(i, ReasonAmbiguous, "a backslash outside quotes is not allowed")
	case '}':
		return l.fail(i, ReasonAmbiguous, "'}' outside a placeholder is not allowed")
	default:
		if c >= 0x80 {
			r, _ := utf8.DecodeRuneInString(l.src[i:])
			return l.fail(i, ReasonAmbiguous, "character %U outside quotes is not allowed: engines differ on which characters are spaces, quotes or letters; quote identifiers that need it", r)
		}
		return l.fail(i, ReasonAmbiguous, "control character %#02x outside quotes is not allowed", c)
	}
}
