package access

import (
	"slices"
	"strings"
)

// FROM and JOIN lists: every place a table can be named, with what may
// follow a table's name (aliases, FINAL, SAMPLE, INDEXED BY, index hints,
// PARTITION), derived tables, parenthesised joins and table functions.

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
