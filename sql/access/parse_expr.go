package access

import (
	"strings"
)

// Expressions: passed over token by token, but every function call is
// checked against the allowlist, every parenthesised query is read as a
// query, and keywords that have no place in an expression are refused.

// args reads a parenthesised argument list; fn names a function whose
// arguments have keywords of their own (CAST's AS, EXTRACT's FROM).
func (p *parser) args(fn string) {
	p.enter()
	defer p.leave()
	p.expect(tLParen, "'('")
	if t := p.cur(); t.isWord("select") || t.isWord("with") {
		p.query()
	} else {
		p.scan(nil, fn)
	}
	p.expect(tRParen, "')'")
}

// paren reads a parenthesised expression or subquery.
func (p *parser) paren() {
	p.enter()
	defer p.leave()
	if p.queryAhead() {
		p.next()
		p.query()
		p.expect(tRParen, "')'")
		return
	}
	p.next()
	p.scan(nil, "")
	p.expect(tRParen, "')'")
}

// statementWords start statements that are not a SELECT; found anywhere in
// a query they are refused, whatever the engine would make of them.
var statementWords = setOf("insert", "update", "delete", "merge", "upsert", "create", "drop",
	"alter", "attach", "detach", "pragma", "vacuum", "copy", "grant", "revoke", "call",
	"exec", "execute", "truncate", "rename", "kill", "lock", "unlock", "handler", "prepare",
	"deallocate", "listen", "notify", "reindex", "optimize", "returning", "load", "install",
	"uninstall", "shutdown", "set")

// sessionWords are keywords that read the session's identity without
// parentheses (PostgreSQL and the SQL standard).
var sessionWords = setOf("current_user", "session_user", "current_role", "current_catalog",
	"current_schema", "system_user")

// keywordCalls are words that may stand before '(' without being a
// function: the parenthesis belongs to the keyword's syntax.
var keywordCalls = setOf("in", "exists", "any", "all", "some", "array", "row", "values", "as",
	"and", "or", "not", "on", "using", "when", "then", "else", "case", "between", "like",
	"ilike", "rlike", "is", "over", "filter", "group", "distinct", "where", "having", "by",
	"interval", "partition", "rows", "range", "groups", "preceding", "following", "cube",
	"rollup", "sets", "escape", "global", "limit", "offset", "xor", "zone", "both", "leading",
	"trailing", "nulls", "first", "last", "only", "fetch", "next", "qualify", "prewhere",
	"window", "order", "return")

// castFunctions read "expr AS type".
var castFunctions = setOf("cast", "try_cast", "safe_cast")

// keywordArgFunctions read FROM, FOR or IN among their arguments.
var keywordArgFunctions = setOf("extract", "substring", "trim", "overlay", "position")

// scan reads an expression (or a run of them) up to a token that closes
// the enclosing parenthesis, ends the statement, or for which stop returns
// true. fn is the function whose arguments these are, when its arguments
// have keywords of their own.
func (p *parser) scan(stop func() bool, fn string) {
	for !p.exprEnd(stop) {
		switch t := p.cur(); t.kind {
		case tLParen:
			p.paren()
		case tLBracket:
			p.subscript()
		case tWord, tQuoted:
			p.word(fn)
		case tPlaceholder:
			p.next()
			if k := p.cur().kind; k == tLParen || k == tDot {
				p.failTok(p.cur(), ReasonUnsupported, "a placeholder stands for a value: it cannot be followed by %s", p.desc(p.cur()))
			}
		case tDot:
			p.fieldOfValue()
		case tComma:
			p.next()
			if fn == "convert" {
				p.convertType()
			}
		case tPunct:
			p.next()
			if t.text == ":" {
				p.castAfterColon()
			}
		default: // strings, numbers
			p.next()
		}
	}
}

// exprEnd reports whether the cursor closes the enclosing parenthesis or
// bracket, ends the statement, or is where stop says the expression ends.
func (p *parser) exprEnd(stop func() bool) bool {
	switch p.cur().kind {
	case tEOF, tRParen, tSemi, tRBracket:
		return true
	}
	return stop != nil && stop()
}

// fieldOfValue reads ".x" after a parenthesised value: (t).x, (arr)[1].x.
func (p *parser) fieldOfValue() {
	p.next()
	if n := p.field(); n.isName() && p.cur().kind == tLParen {
		p.failFunc(n, n.text, "calls on a value (.%s()) are not allowed", echo(n.text))
	}
}

// convertType reads MySQL's CONVERT(expr, DECIMAL(10, 2)) type, after the
// comma, when the cursor starts a type with parameters.
func (p *parser) convertType() {
	if t := p.cur(); t.kind == tWord && p.peek(1).kind == tLParen && paramTypes[t.lower] {
		p.typeName()
	}
}

// castAfterColon reads the type after PostgreSQL's '::' cast when the ':'
// just read is the first of two.
func (p *parser) castAfterColon() {
	if p.cur().isPunct(':') && p.toks[p.pos-1].end == p.cur().start {
		p.next()
		p.typeName()
	}
}

// subscript reads "[...]" in an expression: an array or a subscript.
func (p *parser) subscript() {
	p.enter()
	p.next()
	p.scan(nil, "")
	p.expect(tRBracket, "']'")
	p.leave()
	if p.cur().kind == tLParen {
		p.failTok(p.cur(), ReasonAmbiguous, "'[...](' is a function call on SQLite ([name] is a quoted identifier there); it is not allowed")
	}
}

func (p *parser) failFunc(t *token, name, format string, args ...any) {
	e := errorAt(p.src, t.start, ReasonFunction, format, args...)
	e.Function = echo(name)
	p.failErr(e)
}

// word reads a name or keyword in an expression.
func (p *parser) word(fn string) {
	t := p.cur()
	if t.kind == tWord && p.keyword(t, fn) {
		return
	}
	switch p.peek(1).kind {
	case tDot:
		p.qualifiedName()
		return
	case tLParen:
		p.call()
		return
	}
	if t.kind == tWord {
		// A bare word: a column's name, unless it is one of these.
		switch w := t.lower; {
		case w == "settings" || w == "format":
			p.failTok(t, ReasonStatement, "%s is not allowed: a query may not change the engine's settings or output", strings.ToUpper(w))
		case sessionWords[w]:
			p.failFunc(t, t.text, "the query reads %q (the session's identity), which is not allowed", t.text)
		case statementWords[w]:
			p.failTok(t, ReasonStatement, "%s is not allowed: a query may only read (quote a column with this name)", strings.ToUpper(w))
		}
	}
	p.next()
}

// keyword reads t, the word at the cursor, when it is a keyword that shapes
// the statement whatever follows it, and reports whether it was one. The
// keywords that have no place in an expression are refused.
func (p *parser) keyword(t *token, fn string) bool {
	switch t.lower {
	case "select", "join", "straight_join", "lateral", "apply", "into", "table",
		"union", "intersect", "minus":
		p.refuseMisplaced(t)
	case "except", "replace":
		if !p.transformerAhead() {
			if t.lower == "replace" {
				return false // the function replace(s, from, to)
			}
			p.refuseMisplaced(t)
		}
		p.transformer()
	case "with":
		if n := p.peek(1); n.kind != tWord || !withModifiers[n.lower] {
			p.failTok(t, ReasonUnsupported, "unexpected WITH")
		}
		p.next()
	case "from":
		if !keywordArgFunctions[fn] && !p.distinctFrom() {
			p.failTok(t, ReasonUnsupported, "unexpected FROM")
		}
		p.mark(p.pos)
		p.next()
	case "for":
		if fn != "substring" && fn != "overlay" {
			p.failTok(t, ReasonStatement, "FOR (FOR UPDATE, FOR SHARE, ...) is not allowed: a query may only read")
		}
		p.next()
	case "in":
		p.in(t, fn)
	case "as":
		if !castFunctions[fn] {
			return false
		}
		p.next()
		p.typeName()
	default:
		return false
	}
	return true
}

// transformerAhead reports whether the cursor starts one of ClickHouse's
// column transformers after '*' or 't.*': EXCEPT [STRICT] (names) or
// REPLACE [STRICT] (expr AS name, ...). An EXCEPT followed by a
// parenthesised query is the set operation, and so is an EXCEPT whose
// parenthesis holds anything but names: SELECT 1 EXCEPT (SELECT 2).
func (p *parser) transformerAhead() bool {
	t := p.cur()
	if t.kind != tWord || (t.lower != "except" && t.lower != "replace") || p.pos == 0 || !p.toks[p.pos-1].isPunct('*') {
		return false
	}
	i := p.pos + 1
	if p.toks[i].isWord("strict") {
		i++
	}
	if p.toks[i].kind != tLParen || p.queryParen(i) {
		return false
	}
	if t.lower == "replace" {
		return true
	}
	for i++; ; i++ {
		if !p.toks[i].isName() {
			return false
		}
		switch p.toks[i+1].kind {
		case tRParen:
			return true
		case tComma:
			i++
		default:
			return false
		}
	}
}

// transformer reads a column transformer transformerAhead found: EXCEPT's
// parenthesis holds column names only; REPLACE's holds expressions, each
// with its alias, read as any expression is (subqueries and calls in them
// are checked).
func (p *parser) transformer() {
	except := p.cur().isWord("except")
	p.mark(p.pos)
	p.next()
	if p.cur().isWord("strict") {
		p.mark(p.pos)
		p.next()
	}
	if except {
		p.nameList()
		return
	}
	p.args("")
}

// withModifiers may follow WITH inside an expression's clauses: GROUP BY
// ... WITH ROLLUP, ORDER BY ... WITH FILL, FETCH ... WITH TIES.
var withModifiers = setOf("rollup", "totals", "cube", "fill", "ties", "time", "ordinality")

// refuseMisplaced refuses t, a keyword that cannot stand in an expression.
func (p *parser) refuseMisplaced(t *token) {
	switch w := t.lower; w {
	case "select":
		p.failTok(t, ReasonUnsupported, "unexpected SELECT: a subquery must be in parentheses")
	case "into":
		p.failTok(t, ReasonStatement, "SELECT ... INTO is not allowed: a query may only read")
	case "table":
		p.failTok(t, ReasonStatement, "TABLE <name> is not allowed; write SELECT ... FROM <name>")
	case "union", "intersect", "except", "minus":
		p.failTok(t, ReasonUnsupported, "unexpected %s: put the queries in parentheses", strings.ToUpper(w))
	default:
		p.failTok(t, ReasonUnsupported, "unexpected %s", strings.ToUpper(w))
	}
}

// in reads the IN at the cursor, t: an operator that must be followed by a
// parenthesised list or subquery (or a placeholder), or POSITION's IN.
func (p *parser) in(t *token, fn string) {
	at := p.pos
	p.mark(at)
	if fn == "position" {
		p.next()
		return
	}
	if !p.operandBefore(at) {
		e := errorAt(p.src, t.start, ReasonUnsupported, "the function form %q(x, t) is not allowed: ClickHouse reads a table named as its second argument; write x IN (...)", t.text)
		e.Function = t.text
		p.failErr(e)
	}
	p.next()
	if name, ok := p.parenthesisedName(); ok {
		p.failTable(p.cur(), ReasonUnsupported, name, "IN (%s) reads table %q on ClickHouse; write IN (SELECT ...) or a list of values", echo(name), echo(name))
	}
	switch n := p.cur(); n.kind {
	case tLParen, tPlaceholder:
	case tWord, tQuoted, tString:
		name := p.nameAt(p.pos)
		p.failTable(n, ReasonUnsupported, name, "IN must be followed by a parenthesised list or subquery: IN %q reads a table on SQLite and ClickHouse", echo(name))
	default:
		p.failTok(n, ReasonUnsupported, "IN must be followed by a parenthesised list or subquery, found %s", p.desc(n))
	}
}

// qualifiedName reads a qualified name in an expression: t.col,
// schema.t.col, t.*. It may not be called.
func (p *parser) qualifiedName() {
	t := p.cur()
	dotted := t.text
	p.next()
	for p.cur().kind == tDot {
		p.next()
		dotted += "." + p.field().text
	}
	if p.cur().kind == tLParen {
		p.failFunc(t, dotted, "the query calls %q: schema-qualified functions are not allowed", echo(dotted))
	}
}

// field reads what follows a '.' in an expression: a name, '*' or a
// number (a tuple's element), and returns it.
func (p *parser) field() *token {
	n := p.cur()
	if !n.isName() && !n.isPunct('*') && n.kind != tNumber {
		p.failTok(n, ReasonUnsupported, "expected a name after '.', found %s", p.desc(n))
	}
	p.next()
	return n
}

// exprStartWords are keywords after which an expression starts, so that
// an IN right after one of them is the function form in(x, t).
var exprStartWords = setOf("select", "where", "and", "or", "not", "on", "having", "when",
	"then", "else", "by", "case", "distinct", "all", "any", "some", "exists", "in",
	"between", "like", "ilike", "is", "prewhere", "qualify", "limit", "offset", "return",
	"as", "with", "from", "using", "over", "partition", "global", "xor", "div", "mod",
	"escape", "interval", "array", "values", "if", "elseif", "set")

// operandBefore reports whether an expression ends just before the IN at
// token at (skipping NOT and GLOBAL): "x IN", "f(x) NOT IN", "'a' GLOBAL
// IN", and not "SELECT in(", "AND in(", ", in(".
func (p *parser) operandBefore(at int) bool {
	i := at - 1
	for i >= 0 && (p.toks[i].isWord("not") || p.toks[i].isWord("global")) {
		i--
	}
	if i < 0 {
		return false
	}
	switch t := &p.toks[i]; t.kind {
	case tNumber, tString, tPlaceholder, tRParen, tRBracket, tQuoted:
		return true
	case tWord:
		return !exprStartWords[t.lower]
	}
	return false
}

// parenthesisedName reports whether the cursor is a name, possibly
// qualified, inside one or more parentheses and nothing else: "(t)",
// "((db.t))". ClickHouse drops such parentheses, so after IN it reads t as
// a table.
func (p *parser) parenthesisedName() (string, bool) {
	i, depth := p.pos, 0
	for p.toks[i].kind == tLParen {
		i++
		depth++
	}
	if depth == 0 || !p.toks[i].isName() {
		return "", false
	}
	start := i
	for {
		i++
		if p.toks[i].kind != tDot || !p.toks[i+1].isName() {
			break
		}
		i++
	}
	for range depth {
		if p.toks[i].kind != tRParen {
			return "", false
		}
		i++
	}
	return p.nameAt(start), true
}

// call reads name(...) in an expression: a keyword's parenthesis, one of
// the functions with keyword arguments, or a function call, checked
// against the allowlist.
func (p *parser) call() {
	t := p.cur()
	at := p.pos
	if t.kind == tWord && keywordCalls[t.lower] {
		p.mark(at)
		p.next()
		return
	}
	name := t.text
	lname := asciiLower(name)
	if t.kind == tWord && (castFunctions[lname] || keywordArgFunctions[lname] || lname == "convert") {
		p.mark(at)
		p.next()
		p.args(lname)
		return
	}
	if !p.rules.functionAllowed(name) {
		p.failFunc(t, name, "the query calls function %q, which is not allowed", echo(name))
	}
	p.mark(at)
	p.next()
	p.args("")
}
