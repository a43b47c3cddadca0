package sqltoken

import (
	"slices"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// FuzzTokens checks the tokens of any text against each engine's rules:
// they cover every byte but white space, in order; a closed string ends at
// its engine's first unescaped quote (backslashes escape on MySQL and
// ClickHouse, not on SQLite and PostgreSQL, except in E” there); a
// dollar-quoted string ends with its own tag (PostgreSQL, ClickHouse); a
// block comment ends at the "*/" that closes it, nested ones counted
// (PostgreSQL, ClickHouse) or not; words hold characters outside ASCII
// except on ClickHouse. And where no engine finds a token ambiguous, every
// engine ends its strings, quoted names and comments at the same places:
// what the access checker relies on.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{
		`SELECT 'C:\' || 'x' AS p FROM events`, `E'a\'b'`, `"a\"b"`, "`a\\`b`",
		"$$x$$ $t$ {variables.a} $t$", "/* a /* b */ c */", "-- a\rb\nc", "--x\n#y",
		"naïve = 'é' AND 日本 = 1", "x::text @@ @v :n ?1 $2", "{variables.a} { variables . b }",
		"[a'b] x[1]", "1from 1.5e3x .5", "/*! x */", "'a''b' \"c\"\"d\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkQuoting(t, src)
		var ends [][]int
		allPlain := true
		for _, e := range engine.All() {
			lx := e.Lexical()
			toks := Tokens(lx, src)
			checkCover(t, e.Name(), src, toks)
			var end []int
			for _, tok := range toks {
				checkRules(t, e.Name(), lx, src, tok)
				if tok.Ambiguous() {
					allPlain = false
				}
				if k := literalEnd(src, tok); k >= 0 {
					end = append(end, k)
				}
			}
			ends = append(ends, end)
		}
		if !allPlain {
			return
		}
		for i := 1; i < len(ends); i++ {
			if !slices.Equal(ends[0], ends[i]) {
				t.Fatalf("%q: no token ambiguous, but %s ends its literals and comments at %v and %s at %v",
					src, engine.All()[0].Name(), ends[0], engine.All()[i].Name(), ends[i])
			}
		}
	})
}

// checkCover checks that toks are in order, non-empty, and leave out only
// white space.
func checkCover(t *testing.T, name, src string, toks []Token) {
	at := 0
	for _, tok := range toks {
		require.GreaterOrEqual(t, tok.Start, at, "%s %q: token %+v after offset", name, src, tok)
		require.Greater(t, tok.End, tok.Start, "%s %q: token %+v after offset", name, src, tok)
		require.LessOrEqual(t, tok.End, len(src), "%s %q: token %+v after offset", name, src, tok)
		gap := src[at:tok.Start]
		require.Equal(t, "", strings.TrimLeft(gap, " \t\n\v\f\r"), "%s %q: %q between tokens is not white space", name, src, gap)
		at = tok.End
	}
	gap := src[at:]
	require.Equal(t, "", strings.TrimLeft(gap, " \t\n\v\f\r"), "%s %q: %q after the last token is not white space", name, src, gap)
}

// checkRules checks one token against the engine's rules.
func checkRules(t *testing.T, name string, lx engine.Lexical, src string, tok Token) {
	text := tok.Text(src)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s %q: token %q (%s): "+format, append([]any{name, src, text, tok.Kind}, args...)...)
	}
	closed := !tok.Is(Unclosed)
	switch tok.Kind {
	case String, QuotedName:
		switch {
		case text[0] == '$':
			tag := text[:strings.IndexByte(text[1:], '$')+2]
			if !lx.DollarQuotes || closed && (len(text) < 2*len(tag) || !strings.HasSuffix(text, tag) || strings.Contains(text[len(tag):len(text)-len(tag)], tag)) {
				fail("not a dollar quote closed by its tag %q", tag)
			}
		case text[0] == '[':
			if !lx.BracketNames || strings.Contains(text[:len(text)-1], "]") || closed && !strings.HasSuffix(text, "]") {
				fail("not a bracket name")
			}
		default:
			q, escapes := text[0], lx.BackslashEscapes
			if q == 'E' || q == 'e' {
				text, q, escapes = text[1:], '\'', true
			} else if tok.Kind == QuotedName {
				escapes = lx.NameEscapes
			}
			if closed != quoteClosedAtEnd(text, q, escapes) {
				fail("does not end at its first unescaped quote (escapes %v)", escapes)
			}
		}
	case Comment:
		switch {
		case strings.HasPrefix(text, "/*"):
			if closed && !blockClosedAtEnd(text, lx.NestedComments) {
				fail("does not end where the comment closes (nested %v)", lx.NestedComments)
			}
		case strings.HasPrefix(text, "--") || text[0] == '#' && lx.HashComments:
			if strings.ContainsAny(text, "\n") || lx.ReturnEndsComment && strings.Contains(text, "\r") {
				fail("holds its line's end")
			}
			if tok.End < len(src) && src[tok.End] != '\n' && !(lx.ReturnEndsComment && src[tok.End] == '\r') {
				fail("ends before its line does")
			}
		default:
			fail("is no comment")
		}
	case Word:
		for i := 0; i < len(text); i++ {
			if text[i] >= 0x80 && lx.ASCIIWords {
				fail("holds a character outside ASCII")
			}
		}
		if tok.End < len(src) && (classes[src[tok.End]] == cLetter || classes[src[tok.End]] == cDigit || src[tok.End] >= 0x80 && !lx.ASCIIWords) {
			fail("ends inside a word")
		}
	case Placeholder:
		if !tok.Is(Malformed) && PlaceholderName(text) == "" {
			fail("has no code name")
		}
	}
}

// quoteClosedAtEnd reports whether text, opening with quote q, is closed
// by its last byte and by no byte before it.
func quoteClosedAtEnd(text string, q byte, escapes bool) bool {
	for j := 1; j < len(text); j++ {
		switch {
		case escapes && text[j] == '\\':
			j++
		case text[j] == q && j+1 < len(text) && text[j+1] == q:
			j++
		case text[j] == q:
			return j == len(text)-1
		}
	}
	return false
}

// blockClosedAtEnd reports whether text, a block comment, is closed by
// its last two bytes and not before.
func blockClosedAtEnd(text string, nested bool) bool {
	if !nested {
		return strings.Index(text[2:], "*/") == len(text)-4
	}
	depth := 0
	for j := 0; j+1 < len(text); j++ {
		switch text[j : j+2] {
		case "/*":
			depth++
			j++
		case "*/":
			depth--
			j++
			if depth == 0 {
				return j == len(text)-1
			}
		}
	}
	return false
}

// literalEnd returns where tok ends when it is a string, a quoted name
// (other than SQLite's [...]) or a comment, trailing carriage returns of a
// line comment left out, else -1.
func literalEnd(src string, tok Token) int {
	switch tok.Kind {
	case String, QuotedName:
		if src[tok.Start] != '[' {
			return tok.End
		}
	case Comment:
		end := tok.End
		for end > tok.Start && src[end-1] == '\r' {
			end--
		}
		return end
	}
	return -1
}

// checkQuoting checks that each engine's own quoting of s, as a string
// literal and as a name, reads back as one token of that kind. A name
// holding a backslash is left out where backslashes escape in names
// (ClickHouse): QuoteIdent doubles the quote but not the backslash there,
// so that `a\` reads as left open; the engine package owns that fix.
func checkQuoting(t *testing.T, s string) {
	for _, e := range engine.All() {
		lx := e.Lexical()
		quotings := []struct {
			text string
			kind Kind
		}{{string(e.AppendString(nil, s)), String}}
		if !lx.NameEscapes || !strings.Contains(s, "\\") {
			quotings = append(quotings, struct {
				text string
				kind Kind
			}{e.QuoteIdent(s), QuotedName})
		}
		for _, q := range quotings {
			toks := Tokens(lx, q.text)
			require.Len(t, toks, 1, "%s quotes %q as", e.Name(), s)
			require.Equal(t, q.kind, toks[0].Kind, "%s quotes %q as", e.Name(), s)
			require.Equal(t, 0, toks[0].Start, "%s quotes %q as", e.Name(), s)
			require.Len(t, q.text, toks[0].End, "%s quotes %q as", e.Name(), s)
			require.Equal(t, Flags(0), toks[0].Flags&Unclosed, "%s quotes %q as", e.Name(), s)
		}
	}
}
