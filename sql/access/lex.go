package access

import (
	"strings"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
)

// The tokens are package sql/sqltoken's, the library's one reading of
// SQL text, and the checker refuses every token that some engine could read
// another way (sqltoken.Token.Why): a check is only as good as the
// agreement between the text it reads and the text the engine runs. So:
//
//   - A quoted string or identifier ('...', "...", `...`) must end at the
//     same quote whether a backslash escapes the next character (MySQL,
//     ClickHouse, PostgreSQL's E'') or not (SQLite, standard PostgreSQL).
//     Only where the engine is known and no setting changes its reading
//     of a string literal (engine.Lexical.FixedEscapes: SQLite, ClickHouse)
//     is a string literal read as that engine reads it: on SQLite,
//     'C:\' is a whole literal.
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
	// brackets are the offsets of the first ']' after each '[' whose
	// text up to it holds a quote or a comment, on an engine that may read
	// '[' as a name quote (SQLite) or a subscript: the '[' is accepted when
	// that ']' is where the subscript reading closes it too (see
	// bracketsMeet).
	brackets []int
	// bracketMode says how a '[' holding a quote or a comment is read.
	bracketMode bracketMode
	// keep: the tokens are kept in toks (lexFor); lexCheck only checks.
	keep bool
}

// bracketMode is how the lexer takes a '[' whose text up to the first ']'
// holds a quote or a comment.
type bracketMode int

const (
	// bracketsMeetAt: the engine is SQLite, which reads [...] as a quoted
	// name, or is not known: accepted where SQLite's name and the
	// subscript end at the same ']' (see bracketsMeet). On SQLite the
	// subscript is then a name (a['k'] is a AS "'k'"), never a table.
	bracketsMeetAt bracketMode = iota
	// bracketsSubscript: '[' is never a name quote on the engine
	// (PostgreSQL, MySQL, ClickHouse), so a subscript may hold any token.
	bracketsSubscript
)

func (l *lexer) fail(off int, reason Reason, format string, args ...any) *Error {
	return errorAt(l.src, off, reason, format, args...)
}

func isWordStart(c byte) bool { return c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z' }

func isWordByte(c byte) bool { return isWordStart(c) || c >= '0' && c <= '9' }

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

// anyEngine is how the checker reads a query when the engine is not known:
// "..." and `...` quote names, '[' is a subscript, and nothing else that
// engines read differently is accepted.
var anyEngine = engine.Lexical{BacktickNames: true}

// lex returns the tokens of src, ending with a tEOF token, read for any
// engine.
func lex(src string) ([]token, *Error) { return lexFor(nil, src) }

// lexFor returns the tokens of src read for the engine whose rules lx
// points to, or for any engine when lx is nil. Only two things differ:
// string literals are read as the engine reads them where no setting
// changes that (see engine.Lexical.FixedEscapes), and backticks are
// refused where they quote nothing.
func lexFor(lx *engine.Lexical, src string) ([]token, *Error) {
	l := &lexer{src: src, toks: make([]token, 0, len(src)/8+8), keep: true}
	if err := l.run(lx); err != nil {
		return nil, err
	}
	l.toks = append(l.toks, token{kind: tEOF, start: len(src), end: len(src)})
	return l.toks, nil
}

// lexCheck refuses src as lexFor does, without keeping its tokens: what
// some engine would tokenize differently is refused before the tree reads
// the text.
func lexCheck(lx *engine.Lexical, src string) *Error {
	l := lexer{src: src}
	return l.run(lx)
}

// run reads src and refuses what lexFor refuses.
func (l *lexer) run(lx *engine.Lexical) *Error {
	src := l.src
	if err := checkText(src); err != nil {
		return err
	}
	reading, escapesKnown := readingFor(lx)
	l.bracketMode = bracketsMeetAt
	if lx != nil && !lx.BracketNames {
		l.bracketMode = bracketsSubscript
	}
	var sc sqltoken.Scanner
	sc.Reset(reading, src)
	for {
		t, ok := sc.Next()
		if !ok {
			break
		}
		if err := l.bracketsMeet(t); err != nil {
			return err
		}
		if err := l.add(t, escapesKnown && t.Kind == sqltoken.String); err != nil {
			return err
		}
	}
	if len(l.brackets) > 0 {
		return l.fail(len(src), ReasonAmbiguous, "SQLite reads [...] as a quoted identifier up to the first ']'")
	}
	return nil
}

// readingFor returns the lexical rules the checker reads a query with for
// the engine whose rules lx points to (nil: any engine), and whether
// string literals are read as that engine reads them.
func readingFor(lx *engine.Lexical) (reading engine.Lexical, escapesKnown bool) {
	reading = anyEngine
	if lx != nil {
		// An engine without backtick names (PostgreSQL) would read code
		// inside them: they are refused there.
		reading.BacktickNames = lx.BacktickNames
		if lx.FixedEscapes {
			reading.BackslashEscapes, escapesKnown = lx.BackslashEscapes, true
		}
	}
	return reading, escapesKnown
}

// bracketsMeet checks the token t, read after a '[' recorded in
// l.brackets, against the first ']' after that '[': SQLite's quoted name
// ends there, so the subscript reading must close there too. A comment
// before it, or a token (a string, a quoted name) that runs over it, makes
// the two readings part: "a['x] FROM t --']" is a subscript holding a
// string on PostgreSQL and a name followed by FROM t on SQLite.
func (l *lexer) bracketsMeet(t sqltoken.Token) *Error {
	kept := l.brackets[:0]
	for _, end := range l.brackets {
		switch {
		case t.Start >= end:
			// t is the ']' (or follows it): both readings met.
		case t.Kind == sqltoken.Comment || t.End > end:
			return l.fail(t.Start, ReasonAmbiguous, "SQLite reads [...] as a quoted identifier up to the first ']': inside a subscript, a ']' in a string and a comment are not allowed")
		default:
			kept = append(kept, end)
		}
	}
	l.brackets = kept
	return nil
}

// add appends the tokens of t, or refuses it. A string literal whose end
// depends on backslashes is accepted when escapesKnown.
func (l *lexer) add(t sqltoken.Token, escapesKnown bool) *Error {
	src := l.src
	text := t.Text(src)
	switch t.Kind {
	case sqltoken.Comment:
		if t.Is(sqltoken.Unclosed) {
			return l.fail(t.Start, ReasonUnsupported, "block comment /* is never closed")
		}
	case sqltoken.Punct:
		if text == "[" && strings.IndexByte(src[t.Start:], ']') < 0 {
			return l.fail(t.Start, ReasonUnsupported, "'[' is never closed")
		}
	}
	if t.Why == sqltoken.Bracket && text == "[" {
		switch j := strings.IndexByte(src[t.Start:], ']'); {
		case l.bracketMode == bracketsSubscript:
			t.Why = sqltoken.None
		case l.bracketMode == bracketsMeetAt && j > 0:
			l.brackets = append(l.brackets, t.Start+j)
			t.Why = sqltoken.None
		}
	}
	if t.Why != sqltoken.None && !(escapesKnown && t.Why == sqltoken.Backslash) {
		return l.ambiguous(t)
	}
	switch t.Kind {
	case sqltoken.Word:
		if l.keep {
			l.toks = append(l.toks, token{kind: tWord, start: t.Start, end: t.End, text: text, lower: asciiLower(text)})
		}
	case sqltoken.String, sqltoken.QuotedName:
		q := text[0]
		what := "string literal"
		if t.Kind == sqltoken.QuotedName {
			what = "quoted identifier"
		}
		if t.Is(sqltoken.Unclosed) {
			return l.fail(t.Start, ReasonUnsupported, "%s starting with %c is never closed", what, q)
		}
		if t.Kind == sqltoken.String {
			if l.keep {
				l.toks = append(l.toks, token{kind: tString, start: t.Start, end: t.End})
			}
			break
		}
		if !l.keep {
			break
		}
		content := text[1 : len(text)-1]
		if strings.IndexByte(content, q) >= 0 {
			content = strings.ReplaceAll(content, string([]byte{q, q}), string(q))
		}
		if l.keep {
			l.toks = append(l.toks, token{kind: tQuoted, start: t.Start, end: t.End, text: content, quote: q})
		}
	case sqltoken.Number:
		if l.keep {
			l.toks = append(l.toks, token{kind: tNumber, start: t.Start, end: t.End, text: text})
		}
	case sqltoken.Placeholder:
		if t.Is(sqltoken.Malformed) {
			return l.fail(t.Start, ReasonUnsupported, "malformed placeholder: expected {variables.<code_name>}")
		}
		if l.keep {
			l.toks = append(l.toks, token{kind: tPlaceholder, start: t.Start, end: t.End, text: sqltoken.PlaceholderName(text)})
		}
	case sqltoken.BindMarker:
		// '?' and digits, or ':' and a name ('@' and '$' are ambiguous):
		// the parser reads the sigil as an operator and the rest as a
		// number or a word, as before these were markers.
		if l.keep {
			l.toks = append(l.toks, token{kind: tPunct, start: t.Start, end: t.Start + 1, text: text[:1]})
		}
		if rest := text[1:]; rest != "" {
			if text[0] == '?' {
				if t.End < len(src) && (isWordByte(src[t.End]) || src[t.End] == '.' || src[t.End] == '$' || src[t.End] >= 0x80) {
					return l.fail(t.Start+1, ReasonAmbiguous, "number %q runs into the next character: engines read it differently (a number and a word, or one identifier); add a space", echo(src[t.Start+1:min(len(src), t.End+1)]))
				}
				if l.keep {
					l.toks = append(l.toks, token{kind: tNumber, start: t.Start + 1, end: t.End, text: rest})
				}
			} else {
				if l.keep {
					l.toks = append(l.toks, token{kind: tWord, start: t.Start + 1, end: t.End, text: rest, lower: asciiLower(rest)})
				}
			}
		}
	case sqltoken.Punct:
		c := text[0]
		kind := tLBracket
		if c != '[' {
			if len(text) != 1 || c >= 0x80 || punctKinds[c] == tEOF {
				return l.refuseChar(t.Start)
			}
			kind = punctKinds[c]
		}
		if l.keep {
			l.toks = append(l.toks, token{kind: kind, start: t.Start, end: t.End, text: text})
		}
	}
	return nil
}

// ambiguous says why the token t, which some engine could read another
// way, is refused.
func (l *lexer) ambiguous(t sqltoken.Token) *Error {
	src, i := l.src, t.Start
	switch t.Why {
	case sqltoken.Backslash:
		what := "string literal"
		if t.Kind == sqltoken.QuotedName {
			what = "quoted identifier"
		}
		return l.fail(i, ReasonAmbiguous, "%s starting with %c ends at a different place depending on whether the engine reads backslashes as escapes; avoid a backslash before a quote", what, src[i])
	case sqltoken.DashComment:
		return l.fail(i, ReasonAmbiguous, "'--' must be followed by a space: MySQL reads %q as minus signs, the other engines as a comment", echo(src[i:min(len(src), i+3)]))
	case sqltoken.CarriageReturn:
		// The comment runs to the first newline, so a carriage return
		// followed by one ends it: the first is the one refused.
		k := i + strings.IndexByte(src[i:], '\r')
		return l.fail(k, ReasonAmbiguous, "a carriage return inside a '--' comment ends the comment on PostgreSQL only; end the line with a newline")
	case sqltoken.ExecutableComment:
		return l.fail(i, ReasonAmbiguous, "comments starting with /*! /*M! or /*+ are code on MySQL (version comments, optimizer hints); they are not allowed")
	case sqltoken.NestedComment:
		return l.fail(i+2+strings.Index(src[i+2:], "/*"), ReasonAmbiguous, "a '/*' inside a block comment nests on PostgreSQL and ClickHouse but not on MySQL and SQLite; remove it")
	case sqltoken.Bracket:
		return l.fail(i, ReasonAmbiguous, "SQLite reads [...] as a quoted identifier: the text up to the first ']' may hold no quote and no comment")
	case sqltoken.NumberRun:
		return l.fail(i, ReasonAmbiguous, "number %q runs into the next character: engines read it differently (a number and a word, or one identifier); add a space", echo(src[i:min(len(src), t.End+1)]))
	case sqltoken.At:
		return l.fail(i, ReasonAmbiguous, "'@' before a name is a variable on MySQL and SQLite; it is not allowed")
	case sqltoken.Brace:
		if src[i] == '{' {
			return l.fail(i, ReasonAmbiguous, "'{' outside a {variables.name} placeholder is not allowed (ClickHouse reads {name:Type} as a query parameter)")
		}
	case sqltoken.NonASCII:
		for k := i; k < t.End; k++ {
			if src[k] >= 0x80 {
				return l.refuseChar(k)
			}
		}
	}
	return l.refuseChar(i)
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
	case '`':
		return l.fail(i, ReasonAmbiguous, "a backtick does not quote names on this engine; quote them with \"")
	default:
		if c >= 0x80 {
			r, _ := utf8.DecodeRuneInString(l.src[i:])
			return l.fail(i, ReasonAmbiguous, "character %U outside quotes is not allowed: engines differ on which characters are spaces, quotes or letters; quote identifiers that need it", r)
		}
		return l.fail(i, ReasonAmbiguous, "control character %#02x outside quotes is not allowed", c)
	}
}
