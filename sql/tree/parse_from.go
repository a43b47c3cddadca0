package tree

import "github.com/endpointkit/endpointkit/sql/sqltoken"

// joinWords may come before JOIN.
var joinWords = setOf("natural", "inner", "cross", "left", "right", "full", "outer",
	"global", "any", "all", "asof", "semi", "anti", "array", "paste")

// fromEnd are the words that end a FROM list.
var fromEnd = setOf("where", "group", "having", "window", "qualify", "order", "limit",
	"offset", "fetch", "prewhere", "union", "intersect", "except", "minus", "into", "for",
	"settings", "format", "lock", "returning")

// tableAliasReserved are the words that cannot be a table's implicit
// alias.
var tableAliasReserved = func() map[string]bool {
	m := setOf("as", "on", "using", "join", "straight_join", "select", "from", "with",
		"lateral", "final", "sample", "tablesample", "indexed", "not", "use", "force",
		"ignore", "partition", "values", "set", "apply", "only", "left", "right",
		"array", "window", "natural")
	for w := range fromEnd {
		m[w] = true
	}
	for w := range joinWords {
		m[w] = true
	}
	return m
}()

// joinAhead reports whether the cursor starts a join operator.
func (p *parser) joinAhead() bool {
	i := p.pos
	for p.toks[i].kind == sqltoken.Word && joinWords[p.toks[i].lower] {
		i++
	}
	return p.toks[i].isWord("join") || p.toks[i].isWord("straight_join")
}

// fromList reads a FROM list: items separated by commas, each with its
// joins.
func (p *parser) fromList() []TableExpr {
	p.enter()
	defer p.leave()
	var out []TableExpr
	for {
		var item TableExpr = p.fromItem()
		for p.joinAhead() {
			item = p.join(item)
		}
		out = append(out, item)
		if !p.cur().isOp(",") {
			return out
		}
		p.next()
	}
}

// join reads a join operator and what it joins to left.
func (p *parser) join(left TableExpr) *JoinTableExpr {
	j := &JoinTableExpr{LeftExpr: left}
	op := ""
	array := false
	for {
		t := p.next()
		if op != "" {
			op += " "
		}
		op += upper(t.text)
		if t.lower == "array" {
			array = true
		}
		if t.lower == "join" || t.lower == "straight_join" {
			break
		}
	}
	j.Join = op
	if array {
		a := &ArrayJoinExpr{}
		start := p.cur().start
		for {
			e := &AliasedExpr{}
			es := p.cur().start
			e.Expr = p.expr(0)
			p.alias(&e.As, &e.HasAs)
			e.set(es, p.end())
			a.Exprs = append(a.Exprs, e)
			if !p.cur().isOp(",") {
				break
			}
			p.next()
		}
		a.set(start, p.end())
		j.RightExpr = a
		j.set(left.Span().Start, p.end())
		return j
	}
	j.RightExpr = p.fromItem()
	switch t := p.cur(); {
	case t.isWord("on"):
		p.next()
		j.On = p.expr(0)
	case t.isWord("using"):
		p.next()
		if p.cur().isOp("(") {
			j.Using = p.nameList()
		} else {
			j.Using = []Ident{p.ident()}
		}
	}
	j.set(left.Span().Start, p.end())
	return j
}

// fromItem reads a table, a table function, a derived table or a
// parenthesised join, with its alias and suffixes.
func (p *parser) fromItem() TableExpr {
	start := p.cur().start
	a := &AliasedTableExpr{}
	if p.cur().isWord("lateral") {
		p.next()
		a.Lateral = true
	}
	t := p.cur()
	if t.isOp("(") {
		if p.queryAt(p.pos) {
			a.Expr = p.subquery()
		} else if !a.Lateral {
			open := p.open()
			pt := &ParenTableExpr{Exprs: p.fromList()}
			p.close(open)
			pt.set(t.start, p.end())
			if !p.tableAliasAhead() {
				return pt
			}
			// (a JOIN b) AS x is read as a derived table by some engines
			// and refused by others.
			p.fail(p.cur(), "an alias after a parenthesised join is not supported")
		} else {
			p.fail(p.peek(1), "expected a query after LATERAL (, found %s", p.desc(p.peek(1)))
		}
		p.tableAlias(a)
		a.set(start, p.end())
		return a
	}
	if t.isWord("only") && p.peek(1).isName() && !tableAliasReserved[p.peek(1).lower] {
		p.next()
		a.Only = true
	}
	if t := p.cur(); !t.isName() || t.kind == sqltoken.Word && tableAliasReserved[t.lower] {
		p.fail(t, "expected a table name, found %s", p.desc(t))
	}
	nameStart := p.cur().start
	tn := &TableName{}
	for {
		tn.Parts = append(tn.Parts, p.ident())
		if !p.cur().isOp(".") {
			break
		}
		p.next()
	}
	tn.set(nameStart, p.end())
	if p.cur().isOp("(") {
		f := p.call(Ident{}, tn.Parts[len(tn.Parts)-1], nameStart)
		if len(tn.Parts) > 1 {
			f.Qualifier = tn.Parts[len(tn.Parts)-2]
		}
		a.Expr = f
		if p.cur().isWord("with") && p.peek(1).isWord("ordinality") {
			p.next()
			p.next()
			a.WithOrdinality = true
		}
		p.tableAlias(a)
		a.set(start, p.end())
		return a
	}
	if a.Lateral {
		p.fail(p.cur(), "expected a query or a function after LATERAL")
	}
	a.Expr = tn
	for {
		if p.suffix(a) {
			continue
		}
		if !a.As.IsEmpty() || !p.tableAliasAhead() {
			break
		}
		p.tableAlias(a)
	}
	a.set(start, p.end())
	return a
}

// tableAliasAhead reports whether the cursor starts a table's alias.
func (p *parser) tableAliasAhead() bool {
	t := p.cur()
	switch t.kind {
	case sqltoken.QuotedName:
		return true
	case sqltoken.Word:
		return t.lower == "as" || !tableAliasReserved[t.lower]
	}
	return false
}

// tableAlias reads an optional [AS] name [(columns)].
func (p *parser) tableAlias(a *AliasedTableExpr) {
	if !p.tableAliasAhead() {
		return
	}
	start := p.cur().start
	if p.cur().isWord("as") {
		p.next()
		a.HasAs = true
	}
	a.As = p.ident()
	if p.cur().isOp("(") {
		cs := p.cur().start
		if _, fn := a.Expr.(*FuncExpr); fn {
			a.Columns, a.ColumnTypes = p.columnDefs()
		} else {
			a.Columns = p.nameList()
		}
		a.ColumnsAt = Span{cs, p.end()}
	}
	a.AliasAt = Span{start, p.end()}
}

// columnDefs reads the column list of a table function's alias, where
// PostgreSQL lets a column have a type: AS t(a int, b text[]). types is nil
// when no column has one.
func (p *parser) columnDefs() (names []Ident, types []string) {
	open := p.open()
	for i := 0; ; i++ {
		names = append(names, p.ident())
		if !p.cur().isOp(",") && !p.cur().isOp(")") {
			for len(types) < i {
				types = append(types, "")
			}
			types = append(types, p.typeName())
		}
		if !p.cur().isOp(",") {
			break
		}
		p.next()
	}
	p.close(open)
	if types != nil {
		for len(types) < len(names) {
			types = append(types, "")
		}
	}
	return names, types
}

// suffix reads one clause that may follow a table's name, and reports
// whether there was one.
func (p *parser) suffix(a *AliasedTableExpr) bool {
	t := p.cur()
	if t.kind != sqltoken.Word {
		return false
	}
	switch t.lower {
	case "final": // ClickHouse
		p.next()
	case "sample": // ClickHouse: SAMPLE k [OFFSET m]
		p.next()
		p.ratio()
		if p.cur().isWord("offset") {
			p.next()
			p.ratio()
		}
	case "indexed": // SQLite: INDEXED BY index
		p.next()
		p.expectWord("by")
		p.ident()
	case "not": // SQLite: NOT INDEXED
		if !p.peek(1).isWord("indexed") {
			return false
		}
		p.next()
		p.next()
	case "use", "force", "ignore": // MySQL's index hints
		if !p.peek(1).isWord("index") && !p.peek(1).isWord("key") {
			return false
		}
		p.next()
		p.next()
		if p.cur().isWord("for") {
			p.next()
			switch w := p.cur(); {
			case w.isWord("join"):
				p.next()
			case w.isWord("order") || w.isWord("group"):
				p.next()
				p.expectWord("by")
			default:
				p.fail(w, "expected JOIN, ORDER BY or GROUP BY after FOR, found %s", p.desc(w))
			}
		}
		open := p.open()
		for p.cur().isName() || p.cur().isOp(",") {
			p.next()
		}
		p.close(open)
	case "partition": // MySQL: PARTITION (p0, p1)
		if !p.peek(1).isOp("(") || !a.As.IsEmpty() {
			return false
		}
		p.next()
		p.nameList()
	case "tablesample":
		p.fail(t, "TABLESAMPLE is not supported")
	default:
		return false
	}
	a.Suffixes = append(a.Suffixes, Suffix{Span: Span{t.start, p.end()}, Text: p.src[t.start:p.end()]})
	return true
}

// ratio reads a number or a ratio of numbers (1/10).
func (p *parser) ratio() {
	if p.cur().kind != sqltoken.Number {
		p.fail(p.cur(), "expected a number, found %s", p.desc(p.cur()))
	}
	p.next()
	if p.cur().isOp("/") && p.peek(1).kind == sqltoken.Number {
		p.next()
		p.next()
	}
}
