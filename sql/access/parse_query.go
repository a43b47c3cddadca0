package access

// The statement and its queries: one SELECT (or a parenthesised query),
// the set operations between queries, and WITH, whose names are tables of
// the statement within their scope.

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
