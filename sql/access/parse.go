package access

import (
	"fmt"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// The parser walks the statement just far enough to know every place a
// table can be named and every function called: FROM and JOIN lists, the
// bodies of WITH, derived tables, and every parenthesised SELECT wherever it
// stands (IN, EXISTS, scalar subqueries, set operations, LATERAL). The rest
// of an expression is passed over token by token, but not blindly: a word
// followed by '(' is a function call and is checked, a keyword that could
// start a table reference (FROM, JOIN) where none can stand is refused, and
// so is anything that writes or leaves the statement (INTO, FOR UPDATE,
// SETTINGS, a second statement). When the parser meets what it does not
// know, it refuses: a query is allowed only when every table reference in
// it was seen.
//
// As a last guard, audit checks after the walk that every FROM, JOIN and
// SELECT keyword and every name followed by '(' was taken in a role the
// parser decided (table list, function, type, keyword): a path that skipped
// one by mistake refuses the query instead of letting it through.

// tableRef is one reference to a table in a FROM or JOIN list.
type tableRef struct {
	rule *tableRule // nil for a reference to a WITH query
	// parts are the tokens of the name's parts (without the dots).
	parts []int
	// first and last are the token indexes of the whole reference: from
	// the name (or PostgreSQL's ONLY before it) to its last alias or
	// suffix token.
	first, last int
	only        int // the ONLY token, or -1
	alias       int // the alias token, or -1
	// aliasCols is the token range [from, to] of the alias's column list
	// "(a, b)", or from = -1.
	aliasCols [2]int
	// suffixes are token ranges [from, to] that belong to the table and
	// move with it into a derived table: FINAL, SAMPLE, INDEXED BY,
	// index hints, PARTITION.
	suffixes [][2]int
}

// cte is one name defined by WITH.
type cte struct {
	name   string
	quoted bool
}

// parseError carries an *Error up the parser's stack.
type parseError struct{ err *Error }

// maxDepth bounds the nesting of parentheses and subqueries the parser
// follows, so a hostile query cannot exhaust the stack.
const maxDepth = 200

type parser struct {
	src    string
	toks   []token
	pos    int
	rules  *ruleset
	frames [][]cte // WITH scopes, innermost last
	refs   []tableRef
	depth  int
	// match[i] is the index of the ')' that closes the '(' at token i, or
	// -1; queryParens memoizes queryParen.
	match       []int
	queryParens map[int]bool
}

// analyze parses query and returns its table references, or the *Error
// that refuses it. It reads query for the engine whose rules lx points to,
// or for any engine when lx is nil (see lexFor).
func analyze(query string, rs *ruleset, lx *engine.Lexical) (p *parser, err *Error) {
	toks, lerr := lexFor(lx, query)
	if lerr != nil {
		return nil, lerr
	}
	p = &parser{src: query, toks: toks, rules: rs, match: matchParens(toks)}
	if err := p.try(p.statement); err != nil {
		return nil, err
	}
	if err := p.audit(); err != nil {
		return nil, err
	}
	return p, nil
}

// matchParens pairs each '(' with its ')'.
func matchParens(toks []token) []int {
	match := make([]int, len(toks))
	var open []int
	for i := range toks {
		match[i] = -1
		switch toks[i].kind {
		case tLParen:
			open = append(open, i)
		case tRParen:
			if n := len(open); n > 0 {
				match[open[n-1]] = i
				open = open[:n-1]
			}
		}
	}
	return match
}

// try runs f and returns the *Error it stopped with, if any.
func (p *parser) try(f func()) (err *Error) {
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(parseError)
			if !ok {
				panic(r)
			}
			err = pe.err
		}
	}()
	f()
	return nil
}

func (p *parser) cur() *token { return &p.toks[p.pos] }

func (p *parser) peek(k int) *token {
	i := min(p.pos+k, len(p.toks)-1)
	return &p.toks[i]
}

func (p *parser) next() *token {
	t := &p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

// mark records that the parser decided the role of token i.
func (p *parser) mark(i int) {
	p.toks[i].seen = true
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.failTok(p.cur(), ReasonUnsupported, "the query is nested too deeply (more than %d levels)", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) failTok(t *token, reason Reason, format string, args ...any) {
	panic(parseError{errorAt(p.src, t.start, reason, format, args...)})
}

func (p *parser) failErr(e *Error) { panic(parseError{e}) }

// desc describes a token for a message.
func (p *parser) desc(t *token) string {
	if t.kind == tEOF {
		return "the end of the query"
	}
	return fmt.Sprintf("%q", echo(p.src[t.start:t.end]))
}

func (p *parser) expect(kind tokKind, what string) {
	t := p.cur()
	if t.kind != kind {
		if kind == tRParen {
			p.failTok(t, ReasonUnsupported, "unbalanced parentheses: expected ')', found %s", p.desc(t))
		}
		p.failTok(t, ReasonUnsupported, "expected %s, found %s", what, p.desc(t))
	}
	p.next()
}

// audit refuses the query when a token that matters was passed over
// without the parser deciding its role (see the comment at the top).
func (p *parser) audit() *Error {
	for i := range p.toks {
		t := &p.toks[i]
		if t.seen {
			continue
		}
		key := t.kind == tWord && (t.lower == "from" || t.lower == "join" || t.lower == "select")
		call := t.isName() && p.toks[i+1].kind == tLParen
		if key || call {
			return errorAt(p.src, t.start, ReasonUnsupported, "the analyzer could not place %s; the query is refused", p.desc(t))
		}
	}
	return nil
}
