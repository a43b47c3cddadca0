package access

import (
	"fmt"
	"slices"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint/engine"
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

// statement reads the whole text: one SELECT (or WITH ... SELECT, or a
// parenthesised query: "(SELECT 1) UNION (SELECT 2)") and nothing after it
// but semicolons, spaces and comments.
func (p *parser) statement() {
	t := p.cur()
	if t.kind == tEOF {
		p.failTok(t, ReasonStatement, "the query is empty")
	}
	if !t.isWord("select") && !t.isWord("with") && !(t.kind == tLParen && p.queryAhead()) {
		p.failTok(t, ReasonStatement, "a query must start with SELECT, WITH or a parenthesised SELECT, found %s", p.desc(t))
	}
	p.query()
	for p.cur().kind == tSemi {
		p.next()
		if k := p.cur().kind; k != tSemi && k != tEOF {
			p.failTok(p.cur(), ReasonStatement, "only one statement is allowed: remove the ';' and what follows it")
		}
	}
	switch t := p.cur(); t.kind {
	case tEOF:
	case tRParen:
		p.failTok(t, ReasonUnsupported, "unbalanced parentheses: this ')' closes nothing")
	default:
		p.failTok(t, ReasonUnsupported, "unexpected %s", p.desc(t))
	}
}

// queryAhead reports whether the tokens at the cursor, after any number of
// '(', start a query.
func (p *parser) queryAhead() bool {
	i := p.pos
	for p.toks[i].kind == tLParen {
		i++
	}
	return startsQuery(&p.toks[i])
}

func isSetOp(t *token) bool {
	return t.kind == tWord && (t.lower == "union" || t.lower == "intersect" || t.lower == "except" || t.lower == "minus")
}

// query reads [WITH ...] core {set-operation core}. The ORDER BY, LIMIT
// and the like that follow are read by the last core's tail.
func (p *parser) query() {
	p.enter()
	defer p.leave()
	frames := len(p.frames)
	if p.cur().isWord("with") {
		p.with()
	}
	for {
		p.core()
		if !isSetOp(p.cur()) {
			break
		}
		p.mark(p.pos)
		p.next()
		if t := p.cur(); t.isWord("all") || t.isWord("distinct") {
			p.mark(p.pos)
			p.next()
		}
	}
	p.frames = p.frames[:frames]
}

// core reads one SELECT, a parenthesised query or a VALUES list, and what
// follows it up to a set operation or the end of the enclosing query.
func (p *parser) core() {
	t := p.cur()
	switch {
	case t.kind == tLParen:
		p.next()
		p.query()
		p.expect(tRParen, "')'")
	case t.isWord("select"):
		p.mark(p.pos)
		p.next()
		p.scan(p.stopSelectList, "")
		if p.cur().isWord("from") {
			p.mark(p.pos)
			p.next()
			p.fromList()
			p.afterFrom()
		}
	case t.isWord("values"):
		p.mark(p.pos)
		p.next()
	case t.isWord("table"):
		p.failTok(t, ReasonStatement, "TABLE <name> is not allowed; write SELECT ... FROM <name>")
	default:
		p.failTok(t, ReasonUnsupported, "expected SELECT, found %s", p.desc(t))
	}
	p.scan(p.stopTail, "")
}

func (p *parser) stopSelectList() bool {
	t := p.cur()
	return t.isWord("from") && !p.distinctFrom() || isSetOp(t) && !p.transformerAhead()
}

func (p *parser) stopTail() bool { return isSetOp(p.cur()) }

// distinctFrom reports whether the FROM at the cursor belongs to IS [NOT]
// DISTINCT FROM.
func (p *parser) distinctFrom() bool {
	i := p.pos
	if i < 2 || !p.toks[i-1].isWord("distinct") {
		return false
	}
	if p.toks[i-2].isWord("is") {
		return true
	}
	return i >= 3 && p.toks[i-2].isWord("not") && p.toks[i-3].isWord("is")
}

// with reads a WITH clause and pushes its names as a scope; query pops it.
func (p *parser) with() {
	p.mark(p.pos)
	p.next()
	recursive := false
	if p.cur().isWord("recursive") {
		p.next()
		recursive = true
	}
	p.frames = append(p.frames, nil)
	fi := len(p.frames) - 1
	for {
		if t := p.cur(); t.isName() && p.cteAhead() {
			p.cteDef(fi, recursive)
		} else {
			p.withAlias()
		}
		if p.cur().kind != tComma {
			break
		}
		p.next()
	}
	if t := p.cur(); !startsQuery(t) && t.kind != tLParen {
		p.failTok(t, ReasonStatement, "expected SELECT after the WITH clause, found %s", p.desc(t))
	}
}

// startsQuery reports whether t is SELECT, WITH or VALUES.
func startsQuery(t *token) bool {
	return t.isWord("select") || t.isWord("with") || t.isWord("values")
}

// cteDef reads name [(columns)] AS [NOT] [MATERIALIZED] (query), which
// cteAhead saw, and defines the name in frame fi: before the query when
// the WITH is recursive, after it otherwise.
func (p *parser) cteDef(fi int, recursive bool) {
	t := p.cur()
	nameAt := p.pos
	p.defineName(t, fi)
	p.next()
	if p.cur().kind == tLParen {
		p.mark(nameAt)
		p.nameList()
	}
	p.expect(tWord, "AS") // cteAhead saw it
	if p.cur().isWord("not") {
		p.next()
	}
	if p.cur().isWord("materialized") {
		p.next()
	}
	p.mark(p.pos - 1) // AS or MATERIALIZED, before '('
	p.next()          // '(' (cteAhead saw it)
	if body := p.cur(); body.kind != tLParen && !startsQuery(body) {
		p.failTok(body, ReasonStatement, "the body of WITH query %q must be a SELECT, found %s: statements that write are not allowed", echo(t.text), p.desc(body))
	}
	c := cte{name: t.text, quoted: t.kind == tQuoted}
	if recursive {
		p.frames[fi] = append(p.frames[fi], c)
	}
	p.query()
	p.expect(tRParen, "')'")
	if !recursive {
		p.frames[fi] = append(p.frames[fi], c)
	}
}

// withAlias reads ClickHouse's WITH <expression> AS <name>. The name
// stands for a value, not a table.
func (p *parser) withAlias() {
	p.scan(p.stopAs, "")
	if !p.cur().isWord("as") {
		p.failTok(p.cur(), ReasonUnsupported, "expected WITH name AS (SELECT ...) or WITH expression AS name, found %s", p.desc(p.cur()))
	}
	p.next()
	name := p.cur()
	if !name.isName() {
		p.failTok(name, ReasonUnsupported, "expected a name after AS, found %s", p.desc(name))
	}
	p.defineName(name, -1)
	p.next()
}

func (p *parser) stopAs() bool { return p.cur().isWord("as") }

// cteAhead reports whether the cursor starts "name [(a, b)] AS [NOT]
// [MATERIALIZED] (": a WITH query rather than ClickHouse's WITH
// expression AS name.
func (p *parser) cteAhead() bool {
	i := p.pos + 1
	if p.toks[i].kind == tLParen {
		i++
		for p.toks[i].isName() || p.toks[i].kind == tComma {
			i++
		}
		if p.toks[i].kind != tRParen {
			return false
		}
		i++
	}
	if !p.toks[i].isWord("as") {
		return false
	}
	i++
	if p.toks[i].isWord("not") {
		i++
	}
	if p.toks[i].isWord("materialized") {
		i++
	}
	return p.toks[i].kind == tLParen
}

// defineName checks a name that WITH defines: it may not be the name of a
// protected table, of a table the rules list, or of a tenant column, since
// which of the two a later mention means would then depend on the engine's
// scoping (ClickHouse copies WITH into every subquery). It also refuses a
// name defined twice in one WITH. fi is the frame of a WITH query's name,
// -1 for ClickHouse's WITH expression AS name.
func (p *parser) defineName(t *token, fi int) {
	name := t.text
	if name == "" {
		p.failTok(t, ReasonUnsupported, "empty name")
	}
	if reason, _ := protectedTable([]string{name}); reason != "" {
		e := errorAt(p.src, t.start, reason, "WITH may not define %q: it is the name of a table that can never be read", echo(name))
		e.Table = echo(name)
		p.failErr(e)
	}
	if p.rules.shadowable[asciiLower(name)] {
		e := errorAt(p.src, t.start, ReasonAmbiguous, "WITH may not define %q: it is the name of a table or tenant column of the rules; rename it", echo(name))
		e.Table = echo(name)
		p.failErr(e)
	}
	if fi >= 0 {
		for _, c := range p.frames[fi] {
			if asciiEqualFold(c.name, name) {
				p.failTok(t, ReasonAmbiguous, "WITH defines %q twice", echo(name))
			}
		}
	}
}

// cteLookup reports whether the one-part name t refers to a WITH query in
// scope. A name that matches one only when case is ignored is refused:
// PostgreSQL folds unquoted names, ClickHouse does not, so it could mean
// the WITH query on one engine and a table on another.
func (p *parser) cteLookup(t *token) bool {
	for fi := len(p.frames) - 1; fi >= 0; fi-- {
		f := p.frames[fi]
		for ci := len(f) - 1; ci >= 0; ci-- {
			c := f[ci]
			if !asciiEqualFold(c.name, t.text) {
				continue
			}
			if c.name == t.text && (c.quoted == (t.kind == tQuoted) || !hasUpper(c.name)) {
				return true
			}
			e := errorAt(p.src, t.start, ReasonAmbiguous, "%q could mean the WITH query %q or a table, depending on the engine's rules for case and quotes; write it exactly as WITH defines it", echo(t.text), echo(c.name))
			e.Table = echo(t.text)
			p.failErr(e)
		}
	}
	return false
}

// nameList reads "(name, name, ...)".
func (p *parser) nameList() {
	p.expect(tLParen, "'('")
	for {
		t := p.cur()
		if !t.isName() {
			p.failTok(t, ReasonUnsupported, "expected a column name, found %s", p.desc(t))
		}
		p.next()
		if p.cur().kind != tComma {
			break
		}
		p.next()
	}
	p.expect(tRParen, "')'")
}

// Keywords that end a FROM list, and so can never be a table's implicit
// alias.
var clauseWords = setOf("where", "group", "having", "window", "qualify", "order", "limit",
	"offset", "fetch", "prewhere", "union", "intersect", "except", "minus",
	"into", "for", "settings", "format", "lock", "returning")

// joinWords may come before JOIN.
var joinWords = setOf("natural", "inner", "cross", "left", "right", "full", "outer",
	"global", "any", "all", "asof", "semi", "anti", "array", "paste")

// reservedAfterTable are words that cannot be an implicit alias.
var reservedAfterTable = func() map[string]bool {
	m := setOf("as", "on", "using", "join", "straight_join", "select", "from", "with",
		"lateral", "final", "sample", "tablesample", "indexed", "not", "use", "force",
		"ignore", "partition", "values", "set", "apply", "only", "left", "right",
		"array", "window", "natural")
	for w := range clauseWords {
		m[w] = true
	}
	for w := range joinWords {
		m[w] = true
	}
	return m
}()

// clauseAhead reports whether the cursor is a keyword that starts a clause
// after the FROM list (and not a function of the same name: format()).
func (p *parser) clauseAhead() bool {
	t := p.cur()
	return t.kind == tWord && clauseWords[t.lower] && p.peek(1).kind != tLParen
}

// joinAhead reports whether the cursor starts a join operator:
// [NATURAL|LEFT|...]* JOIN, or STRAIGHT_JOIN.
func (p *parser) joinAhead() bool {
	i := p.pos
	for p.toks[i].kind == tWord && joinWords[p.toks[i].lower] {
		i++
	}
	return p.toks[i].isWord("join") || p.toks[i].isWord("straight_join")
}

// joinOp reads a join operator and reports whether it is ClickHouse's
// ARRAY JOIN, which joins an expression, not a table.
func (p *parser) joinOp() (arrayJoin bool) {
	for !p.cur().isWord("join") && !p.cur().isWord("straight_join") {
		if p.cur().isWord("array") {
			arrayJoin = true
		}
		p.next()
	}
	p.mark(p.pos)
	p.next()
	return arrayJoin
}

// fromList reads a FROM list: items joined by commas and joins.
func (p *parser) fromList() {
	p.enter()
	defer p.leave()
	p.fromItem()
	for {
		switch {
		case p.cur().kind == tComma:
			p.next()
			p.fromItem()
		case p.joinAhead():
			if p.joinOp() {
				p.scan(p.stopArrayJoin, "")
				continue
			}
			p.fromItem()
			switch t := p.cur(); {
			case t.isWord("on"):
				p.mark(p.pos)
				p.next()
				p.scan(p.stopOn, "")
			case t.isWord("using"):
				p.next()
				if p.cur().kind == tLParen {
					p.mark(p.pos - 1)
					p.nameList()
				} else if p.cur().isName() {
					p.next()
				} else {
					p.failTok(p.cur(), ReasonUnsupported, "expected column names after USING, found %s", p.desc(p.cur()))
				}
			}
		default:
			return
		}
	}
}

func (p *parser) stopOn() bool {
	t := p.cur()
	return t.kind == tComma || p.joinAhead() || p.clauseAhead()
}

func (p *parser) stopArrayJoin() bool {
	return p.joinAhead() || p.clauseAhead()
}

// afterFrom checks what follows a FROM list: a clause, or the end of the
// query. Anything else is syntax the parser does not know, and could be a
// table reference it did not see.
func (p *parser) afterFrom() {
	t := p.cur()
	switch {
	case t.kind == tEOF || t.kind == tRParen || t.kind == tSemi:
	case t.kind == tWord && clauseWords[t.lower]:
	default:
		p.failTok(t, ReasonUnsupported, "unexpected %s after the FROM list", p.desc(t))
	}
}

// fromItem reads one item of a FROM list: a table, a table function, a
// derived table or a parenthesised join, with its alias.
func (p *parser) fromItem() {
	if p.cur().isWord("lateral") {
		p.lateral()
	}
	if p.cur().kind == tLParen {
		p.parenItem()
		p.alias(nil)
		return
	}
	ref := tableRef{only: -1, alias: -1, aliasCols: [2]int{-1, -1}, first: p.pos}
	if t := p.cur(); t.isWord("only") && p.peek(1).isName() && !isReserved(p.peek(1)) {
		ref.only = p.pos
		p.next()
	}
	p.expectTableName()
	// The parts are read here rather than in a function that returns
	// them, so that their slice can stay on the stack.
	var parts []string
	for {
		t := p.cur()
		if !t.isName() {
			p.failTok(t, ReasonUnsupported, "expected a name after '.', found %s", p.desc(t))
		}
		ref.parts = append(ref.parts, p.pos)
		parts = append(parts, t.text)
		p.next()
		if p.cur().kind != tDot {
			break
		}
		p.next()
	}
	dotted := strings.Join(parts, ".")
	if p.cur().kind == tLParen {
		p.tableFunction(ref, dotted)
		return
	}
	p.resolve(&ref, parts, dotted)
	p.tableTail(&ref)
	ref.last = p.pos - 1
	p.refs = append(p.refs, ref)
}

// tableTail reads the suffixes and the alias that may follow a table's
// name, in any order.
func (p *parser) tableTail(ref *tableRef) {
	for {
		if p.suffix(ref) {
			continue
		}
		if ref.alias >= 0 || !p.aliasAhead() {
			return
		}
		p.alias(ref)
	}
}

// isReserved reports whether t is a word that cannot be an implicit alias.
func isReserved(t *token) bool { return t.kind == tWord && reservedAfterTable[t.lower] }

// lateral reads LATERAL, which must be followed by a subquery or a
// function.
func (p *parser) lateral() {
	p.mark(p.pos)
	p.next()
	if t := p.cur(); t.kind != tLParen && !(t.isName() && p.peek(1).kind == tLParen) {
		p.failTok(t, ReasonUnsupported, "expected a subquery or a function after LATERAL, found %s", p.desc(t))
	}
}

// expectTableName refuses what cannot start a table's name.
func (p *parser) expectTableName() {
	t := p.cur()
	if t.isName() && !isReserved(t) {
		return
	}
	if t.kind == tString {
		p.failTable(t, ReasonUnsupported, p.nameAt(p.pos), "expected a table name, found the string %s: SQLite reads it as table %q; write the name unquoted or in double quotes", p.desc(t), echo(p.nameAt(p.pos)))
	}
	p.failTok(t, ReasonUnsupported, "expected a table name, found %s", p.desc(t))
}

// resolve finds the rule of the table a reference names, or the WITH query
// it names, and refuses a name that may not be read.
func (p *parser) resolve(ref *tableRef, parts []string, dotted string) {
	nameTok := &p.toks[ref.parts[0]]
	if len(parts) > 3 {
		p.failTable(nameTok, ReasonUnsupported, dotted, "table name %q has more than three parts", echo(dotted))
	}
	if len(parts) == 1 && p.cteLookup(nameTok) {
		return
	}
	if slices.Contains(parts, "") {
		p.failTable(nameTok, ReasonUnsupported, dotted, "empty name")
	}
	if reason, why := protectedTable(parts); reason != "" {
		p.failTable(nameTok, reason, dotted, "the query reads table %q: %s", echo(dotted), why)
	}
	ref.rule = p.rules.tables[asciiLower(dotted)]
	if ref.rule == nil && !p.rules.anyTable {
		p.failTable(nameTok, ReasonTable, dotted, "the query reads table %q, which endpoints of this project may not read", echo(dotted))
	}
}

func (p *parser) failTable(t *token, reason Reason, table string, format string, args ...any) {
	e := errorAt(p.src, t.start, reason, format, args...)
	e.Table = echo(table)
	p.failErr(e)
}

// nameAt returns the dotted name that starts at token i, as a message
// shows it: parts unquoted (a string's content too, as SQLite would read
// it as a name).
func (p *parser) nameAt(i int) string {
	var parts []string
	for {
		t := &p.toks[i]
		switch t.kind {
		case tString:
			parts = append(parts, strings.ReplaceAll(p.src[t.start+1:t.end-1], "''", "'"))
		case tWord, tQuoted:
			parts = append(parts, t.text)
		default:
			return strings.Join(parts, ".")
		}
		if p.toks[i+1].kind != tDot {
			return strings.Join(parts, ".")
		}
		i += 2
	}
}

// tableFunction reads name(args) [WITH ORDINALITY] [alias] in a FROM list.
func (p *parser) tableFunction(ref tableRef, dotted string) {
	nameTok := &p.toks[ref.parts[0]]
	fail := func(format string, args ...any) {
		e := errorAt(p.src, nameTok.start, ReasonTableFunction, format, args...)
		e.Function = echo(dotted)
		p.failErr(e)
	}
	if len(ref.parts) > 1 {
		fail("the query reads from table function %q: schema-qualified table functions are not allowed", echo(dotted))
	}
	if !p.rules.tableFunctionAllowed(nameTok.text) {
		fail("the query reads from table function %q, which is not allowed", echo(dotted))
	}
	p.mark(ref.parts[0])
	p.args("")
	if p.cur().isWord("with") && p.peek(1).isWord("ordinality") {
		p.next()
		p.next()
	}
	p.alias(nil)
}

// parenItem reads a parenthesised FROM item: a derived table, or a join in
// parentheses. "((SELECT ...) AS a JOIN b ON ...)" starts like a derived
// table; queryParen tells them apart without backtracking (which would take
// time exponential in the nesting).
func (p *parser) parenItem() {
	if p.queryParen(p.pos) {
		p.next()
		p.query()
		p.expect(tRParen, "')'")
		return
	}
	p.next()
	p.fromList()
	p.expect(tRParen, "')'")
}

// queryParen reports whether the '(' at token i holds a query: it starts
// with SELECT, WITH or VALUES, or with a parenthesised query followed by
// what may follow one inside a query (a set operation, ORDER BY, LIMIT,
// OFFSET, FETCH, or the closing parenthesis). Otherwise it holds a join:
// "((SELECT 1) AS a JOIN b ON ...)", "((a JOIN b))".
func (p *parser) queryParen(i int) bool {
	if p.queryParens == nil {
		p.queryParens = make(map[int]bool)
	}
	if v, ok := p.queryParens[i]; ok {
		return v
	}
	// Walk down the run of '(' first, so that a long run costs no deep
	// recursion, then decide from the innermost out.
	run := []int{i}
	for p.toks[run[len(run)-1]+1].kind == tLParen {
		j := run[len(run)-1] + 1
		if _, ok := p.queryParens[j]; ok {
			break
		}
		run = append(run, j)
	}
	for k := len(run) - 1; k >= 0; k-- {
		p.queryParens[run[k]] = p.holdsQuery(run[k])
	}
	return p.queryParens[i]
}

// holdsQuery decides queryParen for the '(' at token at, once queryParen
// knows the answer for the '(' right inside it, if any.
func (p *parser) holdsQuery(at int) bool {
	inner := &p.toks[at+1]
	if startsQuery(inner) {
		return true
	}
	if inner.kind != tLParen || !p.queryParens[at+1] {
		return false
	}
	m := p.match[at+1]
	if m < 0 {
		return true // unbalanced: the parse fails either way
	}
	f := &p.toks[m+1]
	return f.kind == tRParen || isSetOp(f) || f.isWord("order") || f.isWord("limit") || f.isWord("offset") || f.isWord("fetch")
}

// aliasAhead reports whether the cursor starts an alias.
func (p *parser) aliasAhead() bool {
	t := p.cur()
	switch t.kind {
	case tQuoted:
		return true
	case tWord:
		return t.lower == "as" || !reservedAfterTable[t.lower]
	}
	return false
}

// alias reads an optional [AS] name [(columns)]; ref, when not nil,
// records where.
func (p *parser) alias(ref *tableRef) {
	if !p.aliasAhead() {
		return
	}
	if p.cur().isWord("as") {
		p.next()
		if !p.cur().isName() {
			p.failTok(p.cur(), ReasonUnsupported, "expected an alias after AS, found %s", p.desc(p.cur()))
		}
	}
	at := p.pos
	p.next()
	if ref != nil {
		ref.alias = at
	}
	if p.cur().kind == tLParen {
		p.mark(at)
		from := p.pos
		p.nameList()
		if ref != nil {
			ref.aliasCols = [2]int{from, p.pos - 1}
		}
	}
}

// suffix reads one of the clauses that may follow a table name and
// belong to it, and reports whether there was one.
func (p *parser) suffix(ref *tableRef) bool {
	t := p.cur()
	if t.kind != tWord {
		return false
	}
	from := p.pos
	switch t.lower {
	case "final": // ClickHouse
		p.next()
	case "sample": // ClickHouse: SAMPLE k [OFFSET m], k and m numbers or ratios
		p.sample()
	case "indexed": // SQLite: INDEXED BY index
		p.indexedBy()
	case "not": // SQLite: NOT INDEXED
		if !p.peek(1).isWord("indexed") {
			return false
		}
		p.next()
		p.next()
	case "use", "force", "ignore": // MySQL index hints
		if !p.peek(1).isWord("index") && !p.peek(1).isWord("key") {
			return false
		}
		p.indexHint()
	case "partition": // MySQL: PARTITION (p0, p1)
		if p.peek(1).kind != tLParen || ref.alias >= 0 {
			return false
		}
		p.mark(p.pos)
		p.next()
		p.nameList()
	case "tablesample":
		p.failTok(t, ReasonUnsupported, "TABLESAMPLE is not supported")
	default:
		return false
	}
	ref.suffixes = append(ref.suffixes, [2]int{from, p.pos - 1})
	return true
}

// indexedBy reads SQLite's INDEXED BY index.
func (p *parser) indexedBy() {
	if !p.peek(1).isWord("by") || !p.peek(2).isName() {
		p.failTok(p.cur(), ReasonUnsupported, "expected INDEXED BY <index>")
	}
	p.next()
	p.next()
	p.next()
}

// sample reads ClickHouse's SAMPLE k [OFFSET m].
func (p *parser) sample() {
	p.next()
	p.ratio()
	if p.cur().isWord("offset") {
		p.next()
		p.ratio()
	}
}

// indexHint reads MySQL's {USE|FORCE|IGNORE} {INDEX|KEY} [FOR {JOIN|ORDER
// BY|GROUP BY}] (names).
func (p *parser) indexHint() {
	p.next()
	p.next()
	if p.cur().isWord("for") {
		p.next()
		p.indexHintFor()
	}
	p.mark(p.pos - 1)
	if p.cur().kind != tLParen {
		p.failTok(p.cur(), ReasonUnsupported, "expected '(' after the index hint, found %s", p.desc(p.cur()))
	}
	p.next()
	for p.cur().isName() || p.cur().kind == tComma {
		p.next()
	}
	p.expect(tRParen, "')'")
}

// indexHintFor reads what an index hint's FOR applies to.
func (p *parser) indexHintFor() {
	switch t := p.cur(); {
	case t.isWord("join"):
		p.mark(p.pos)
		p.next()
	case t.isWord("order") || t.isWord("group"):
		p.next()
		if !p.cur().isWord("by") {
			p.failTok(p.cur(), ReasonUnsupported, "expected BY, found %s", p.desc(p.cur()))
		}
		p.next()
	default:
		p.failTok(t, ReasonUnsupported, "expected JOIN, ORDER BY or GROUP BY after FOR, found %s", p.desc(t))
	}
}

// ratio reads a number or a ratio of numbers (1/10).
func (p *parser) ratio() {
	if p.cur().kind != tNumber {
		p.failTok(p.cur(), ReasonUnsupported, "expected a number, found %s", p.desc(p.cur()))
	}
	p.next()
	if p.cur().isPunct('/') && p.peek(1).kind == tNumber {
		p.next()
		p.next()
	}
}

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
			p.failTok(t, ReasonUnsupported, "unexpected FROM: the analyzer does not know this syntax")
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
		p.failTok(t, ReasonUnsupported, "unexpected %s: the analyzer does not know this syntax", strings.ToUpper(w))
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

// paramTypes are type names that take parameters: DECIMAL(10, 2),
// VARCHAR(20), Nullable(String), DateTime64(3, 'UTC').
var paramTypes = setOf("decimal", "numeric", "dec", "varchar", "char", "character", "nchar",
	"nvarchar", "varbinary", "binary", "bit", "varbit", "float", "double", "real", "time",
	"timestamp", "datetime", "datetime64", "interval", "nullable", "lowcardinality", "array",
	"tuple", "map", "fixedstring", "decimal32", "decimal64", "decimal128", "decimal256",
	"enum", "enum8", "enum16", "int", "integer", "bigint", "smallint", "tinyint",
	"mediumint", "unsigned", "signed", "varying", "bpchar", "datetime2", "nested",
	"aggregatefunction", "simpleaggregatefunction", "object", "json", "variant", "dynamic")

// typeName reads a type after CAST's AS or PostgreSQL's '::'.
func (p *parser) typeName() {
	t := p.cur()
	if !t.isName() {
		p.failTok(t, ReasonUnsupported, "expected a type name, found %s", p.desc(t))
	}
	p.typeWord()
	if p.cur().kind == tDot && p.peek(1).isName() {
		p.next()
		p.typeWord()
	}
	for p.typeSuffix() {
	}
}

// typeMoreWords may follow a type's first word: DOUBLE PRECISION, INT
// UNSIGNED, UNSIGNED INTEGER, CHARACTER VARYING.
var typeMoreWords = setOf("precision", "unsigned", "signed", "integer", "int", "varying")

// typeSuffix reads one of the words or brackets that may follow a type's
// name and reports whether there was one.
func (p *parser) typeSuffix() bool {
	c := p.cur()
	switch {
	case c.kind == tWord && typeMoreWords[c.lower]:
		p.typeWord()
	case p.timeZoneAhead() || p.charsetAhead():
		p.next()
		p.next()
		p.next()
	case c.kind == tLBracket: // PostgreSQL arrays: int[], int[3]
		p.next()
		if p.cur().kind == tNumber {
			p.next()
		}
		p.expect(tRBracket, "']'")
	default:
		return false
	}
	return true
}

// timeZoneAhead reports whether the cursor starts WITH TIME ZONE or
// WITHOUT TIME ZONE.
func (p *parser) timeZoneAhead() bool {
	c := p.cur()
	return (c.isWord("with") || c.isWord("without")) && p.peek(1).isWord("time") && p.peek(2).isWord("zone")
}

// charsetAhead reports whether the cursor starts CHARACTER SET name or
// CHAR SET name.
func (p *parser) charsetAhead() bool {
	c := p.cur()
	return (c.isWord("character") || c.isWord("char")) && p.peek(1).isWord("set") && p.peek(2).isName()
}

// typeWord reads one word of a type and its parameters.
func (p *parser) typeWord() {
	t := p.cur()
	at := p.pos
	p.next()
	if p.cur().kind != tLParen {
		return
	}
	if t.kind != tWord || !paramTypes[t.lower] {
		p.failTok(t, ReasonUnsupported, "%s is not a type that takes parameters", p.desc(t))
	}
	p.mark(at)
	p.typeParams()
}

// typeParams reads a type's parameters: numbers, strings, names, and
// nested types.
func (p *parser) typeParams() {
	p.enter()
	defer p.leave()
	p.expect(tLParen, "'('")
	for {
		t := p.cur()
		switch {
		case t.kind == tRParen:
			p.next()
			return
		case t.kind == tNumber || t.kind == tString || t.kind == tComma || t.isPunct('=') || t.isPunct('-') || t.isPunct('+'):
			p.next()
		case t.isName():
			p.typeWord()
		default:
			p.failTok(t, ReasonUnsupported, "unexpected %s in a type", p.desc(t))
		}
	}
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
