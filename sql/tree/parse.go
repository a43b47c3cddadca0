package tree

import (
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
)

// Tree is one parsed SELECT statement and the text it was read from.
type Tree struct {
	// Src is the query as written.
	Src string
	// Lexical is how the query was read.
	Lexical engine.Lexical
	// Engine is the engine the query was read for, nil when only its
	// lexical rules were given (ParseLexical).
	Engine engine.Engine
	// Stmt is the statement.
	Stmt SelectStatement
}

// Parse reads src, one SELECT statement (a trailing ';' allowed), as the
// engine e reads it. A query it cannot read is an *Error that wraps
// ErrSyntax or ErrTooDeep.
func Parse(e engine.Engine, src string) (*Tree, error) {
	t, err := ParseLexical(e.Lexical(), src)
	if err != nil {
		return nil, err
	}
	t.Engine = e
	return t, nil
}

// ParseLexical is Parse for an engine known only by its lexical rules;
// the printer then quotes new names with double quotes.
func ParseLexical(lx engine.Lexical, src string) (*Tree, error) {
	toks, lerr := lexQuery(lx, src)
	if lerr != nil {
		return nil, lerr
	}
	p := &parser{src: src, toks: toks, lx: lx, lambdas: isClickHouse(lx)}
	p.match = matchParens(toks)
	var stmt SelectStatement
	if err := p.try(func() { stmt = p.statement() }); err != nil {
		return nil, err
	}
	return &Tree{Src: src, Lexical: lx, Stmt: stmt}, nil
}

// isClickHouse reports whether lx are ClickHouse's rules, the one engine
// where x -> expr is a lambda rather than a JSON operator.
func isClickHouse(lx engine.Lexical) bool {
	return lx.ASCIIWords && lx.NestedComments && lx.BackslashEscapes
}

type parser struct {
	src     string
	toks    []token
	pos     int
	depth   int
	lx      engine.Lexical
	lambdas bool
	// match[i] is the index of the ')' or ']' that closes the '(' or '['
	// at token i, or -1.
	match []int
	arenas
}

// parseError carries an *Error up the parser's stack.
type parseError struct{ err *Error }

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

func matchParens(toks []token) []int {
	match := make([]int, len(toks))
	var open []int
	for i := range toks {
		match[i] = -1
		if toks[i].kind != sqltoken.Punct {
			continue
		}
		switch toks[i].text {
		case "(", "[":
			open = append(open, i)
		case ")", "]":
			if n := len(open); n > 0 {
				match[open[n-1]] = i
				open = open[:n-1]
			}
		}
	}
	return match
}

func (p *parser) cur() *token { return &p.toks[p.pos] }

func (p *parser) peek(k int) *token {
	return &p.toks[min(p.pos+k, len(p.toks)-1)]
}

func (p *parser) next() *token {
	t := &p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

// end is the offset just past the last token read.
func (p *parser) end() int {
	if p.pos == 0 {
		return 0
	}
	return p.toks[p.pos-1].end
}

func (t *token) isWord(kw string) bool { return t.kind == sqltoken.Word && t.lower == kw }
func (t *token) isOp(op string) bool   { return t.kind == sqltoken.Punct && t.text == op }
func (t *token) isName() bool {
	return t.kind == sqltoken.Word || t.kind == sqltoken.QuotedName
}

func (p *parser) enter() {
	p.depth++
	if p.depth > MaxDepth {
		panic(parseError{errorAt(p.src, p.cur().start, ErrTooDeep, "the query is nested too deeply (more than %d levels)", MaxDepth)})
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) fail(t *token, format string, args ...any) {
	panic(parseError{errorAt(p.src, t.start, ErrSyntax, format, args...)})
}

// desc describes a token for a message.
func (p *parser) desc(t *token) string {
	if t.kind == tEOF {
		return "the end of the query"
	}
	s := t.text
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// expectOp reads the operator op or fails.
func (p *parser) expectOp(op string) {
	if !p.cur().isOp(op) {
		p.fail(p.cur(), "expected %s, found %s", op, p.desc(p.cur()))
	}
	p.next()
}

// expectWord reads the keyword kw or fails.
func (p *parser) expectWord(kw string) {
	if !p.cur().isWord(kw) {
		p.fail(p.cur(), "expected %s, found %s", upper(kw), p.desc(p.cur()))
	}
	p.next()
}

// close reads the ')' or ']' that closes the one at token open.
func (p *parser) close(open int) {
	o := &p.toks[open]
	want := ")"
	if o.text == "[" {
		want = "]"
	}
	if !p.cur().isOp(want) {
		p.fail(p.cur(), "expected %s to close the %s at %s, found %s", want, o.text, where(p.src, o.start), p.desc(p.cur()))
	}
	p.next()
}

// open reads '(' and returns its index.
func (p *parser) open() int {
	at := p.pos
	p.expectOp("(")
	return at
}

// ident reads a name.
func (p *parser) ident() Ident {
	t := p.cur()
	if !t.isName() {
		p.fail(t, "expected a name, found %s", p.desc(t))
	}
	p.next()
	return identOf(t)
}

func identOf(t *token) Ident {
	if t.kind != sqltoken.QuotedName {
		return Ident{Name: t.text, Raw: t.text, At: t.start}
	}
	q := t.text[0]
	closeQ := q
	if q == '[' {
		closeQ = ']'
	}
	content := t.text[1 : len(t.text)-1]
	if q != '[' {
		content = strings.ReplaceAll(content, string([]byte{closeQ, closeQ}), string(closeQ))
	}
	return Ident{Name: content, Raw: t.text, Quote: q, At: t.start}
}

// statement reads the whole text: one query and nothing after it but
// semicolons.
func (p *parser) statement() SelectStatement {
	t := p.cur()
	if t.kind == tEOF {
		p.fail(t, "the query is empty")
	}
	if !t.isWord("select") && !t.isWord("with") && !(t.isOp("(") && p.queryAt(p.pos)) {
		p.fail(t, "a query must start with SELECT, WITH or a parenthesised SELECT, found %s", p.desc(t))
	}
	s := p.query()
	for p.cur().isOp(";") {
		p.next()
		if k := p.cur(); k.kind != tEOF && !k.isOp(";") {
			p.fail(k, "only one statement is allowed: remove the ';' and what follows it")
		}
	}
	if t := p.cur(); t.kind != tEOF {
		if t.isOp(")") {
			p.fail(t, "this ) closes no (")
		}
		p.fail(t, "unexpected %s", p.desc(t))
	}
	return s
}

func isSetOp(t *token) bool {
	return t.kind == sqltoken.Word && (t.lower == "union" || t.lower == "intersect" || t.lower == "except" || t.lower == "minus")
}

func startsQuery(t *token) bool { return t.isWord("select") || t.isWord("with") || t.isWord("values") }

// queryAt reports whether the '(' at token i holds a query: SELECT or
// WITH after it, or a parenthesised query followed by what may follow one
// inside a query.
func (p *parser) queryAt(i int) bool {
	run := 0
	j := i + 1
	for p.toks[j].isOp("(") {
		j++
		run++
		if run > MaxDepth {
			panic(parseError{errorAt(p.src, p.toks[j].start, ErrTooDeep, "the query is nested too deeply (more than %d levels)", MaxDepth)})
		}
	}
	if !startsQuery(&p.toks[j]) {
		return false
	}
	// From the innermost '(' that holds the query out, each must be
	// followed by what may follow a query inside a query.
	for k := j - 1; k > i; k-- {
		m := p.match[k]
		if m < 0 {
			return true
		}
		f := &p.toks[m+1]
		if !(f.isOp(")") || isSetOp(f) || f.isWord("order") || f.isWord("limit") || f.isWord("offset") || f.isWord("fetch")) {
			return false
		}
	}
	return true
}

// query reads [WITH ...] core {set operation core} [ORDER BY] [LIMIT]...
func (p *parser) query() SelectStatement {
	p.enter()
	defer p.leave()
	start := p.cur().start
	var with *With
	if p.cur().isWord("with") {
		with = p.with()
	}
	s := p.core()
	for isSetOp(p.cur()) {
		op := upper(p.next().text)
		if t := p.cur(); t.isWord("all") || t.isWord("distinct") {
			op += " " + upper(p.next().text)
		}
		right := p.core()
		u := &Union{Type: op, Left: s, Right: right}
		u.set(s.Span().Start, right.Span().End)
		s = u
	}
	orders, limitBy, limit := p.tail()
	switch v := s.(type) {
	case *Select:
		v.With, v.OrderBy, v.LimitBy, v.Limit = with, orders, limitBy, limit
	case *Union:
		v.With, v.OrderBy, v.LimitBy, v.Limit = with, orders, limitBy, limit
	case *Values:
		if with != nil || orders != nil || limitBy != nil || limit != nil {
			p.fail(&p.toks[p.pos-1], "VALUES with WITH, ORDER BY or LIMIT is not supported")
		}
	case *ParenSelect:
		if with != nil || orders != nil || limitBy != nil || limit != nil {
			// The clauses stand around the parentheses: a ParenSelect of
			// its own holds them.
			if v.With != nil || v.OrderBy != nil || v.LimitBy != nil || v.Limit != nil {
				v = &ParenSelect{Select: v}
				s = v
			}
			v.With, v.OrderBy, v.LimitBy, v.Limit = with, orders, limitBy, limit
		}
	}
	s.base().set(start, p.end())
	return s
}

// core reads one SELECT or a parenthesised query.
func (p *parser) core() SelectStatement {
	t := p.cur()
	switch {
	case t.isOp("("):
		if !p.queryAt(p.pos) {
			p.fail(t, "expected a query in parentheses, found %s", p.desc(p.peek(1)))
		}
		open := p.open()
		inner := p.query()
		p.close(open)
		ps := &ParenSelect{Select: inner}
		ps.set(t.start, p.end())
		return ps
	case t.isWord("select"):
		return p.selectCore()
	case t.isWord("values"):
		p.next()
		v := &Values{}
		for {
			rs := p.cur().start
			if !p.cur().isOp("(") {
				p.fail(p.cur(), "expected ( to start a row of VALUES, found %s", p.desc(p.cur()))
			}
			open := p.open()
			row := &ValTuple{Exprs: p.exprList()}
			p.close(open)
			row.set(rs, p.end())
			v.Rows = append(v.Rows, row)
			if !p.cur().isOp(",") {
				break
			}
			p.next()
		}
		v.set(t.start, p.end())
		return v
	}
	p.fail(t, "expected SELECT, found %s", p.desc(t))
	return nil
}

// with reads WITH [RECURSIVE] cte, ...
func (p *parser) with() *With {
	w := &With{}
	start := p.next().start
	if p.cur().isWord("recursive") {
		p.next()
		w.Recursive = true
	}
	for {
		w.CTEs = append(w.CTEs, p.cte())
		if !p.cur().isOp(",") {
			break
		}
		p.next()
	}
	w.set(start, p.end())
	return w
}

// cte reads name [(columns)] AS [[NOT] MATERIALIZED] (query), or
// ClickHouse's expression AS name.
func (p *parser) cte() *CommonTableExpr {
	c := &CommonTableExpr{}
	start := p.cur().start
	if !p.cteAhead() {
		c.Expr = p.expr(0)
		p.expectWord("as")
		c.Name = p.ident()
		c.set(start, p.end())
		return c
	}
	c.Name = p.ident()
	if p.cur().isOp("(") {
		c.Columns = p.nameList()
	}
	p.expectWord("as")
	if p.cur().isWord("not") {
		p.next()
		p.expectWord("materialized")
		c.Materialized = "NOT MATERIALIZED"
	} else if p.cur().isWord("materialized") {
		p.next()
		c.Materialized = "MATERIALIZED"
	}
	c.Subquery = p.subquery()
	c.set(start, p.end())
	return c
}

// cteAhead reports whether the cursor starts "name [(a, b)] AS [NOT]
// [MATERIALIZED] (".
func (p *parser) cteAhead() bool {
	if !p.cur().isName() {
		return false
	}
	i := p.pos + 1
	if p.toks[i].isOp("(") {
		i++
		for p.toks[i].isName() || p.toks[i].isOp(",") {
			i++
		}
		if !p.toks[i].isOp(")") {
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
	return p.toks[i].isOp("(")
}

// subquery reads (query).
func (p *parser) subquery() *Subquery {
	start := p.cur().start
	if !p.cur().isOp("(") || !p.queryAt(p.pos) {
		p.fail(p.cur(), "expected a query in parentheses, found %s", p.desc(p.cur()))
	}
	open := p.open()
	s := &Subquery{Select: p.query()}
	p.close(open)
	s.set(start, p.end())
	return s
}

// nameList reads (name, name, ...).
func (p *parser) nameList() []Ident {
	open := p.open()
	var names []Ident
	for {
		names = append(names, p.ident())
		if !p.cur().isOp(",") {
			break
		}
		p.next()
	}
	p.close(open)
	return names
}

// clauseWords end a SELECT list's item, a FROM list or an expression's
// implicit alias.
var clauseWords = setOf("from", "where", "group", "having", "window", "qualify", "order", "limit",
	"offset", "fetch", "prewhere", "union", "intersect", "except", "minus", "into", "for",
	"settings", "format", "lock", "returning", "on", "using", "join", "straight_join", "select",
	"with", "as", "and", "or", "not", "when", "then", "else", "end", "natural", "inner",
	"cross", "left", "right", "full", "outer", "global", "array", "lateral", "final",
	"sample", "indexed", "use", "force", "ignore", "partition", "values", "by", "asc", "desc",
	"is", "in", "like", "ilike", "between", "collate", "over", "filter", "escape", "nulls",
	"rows", "range", "groups", "preceding", "following", "any", "all", "asof", "semi", "anti",
	"paste", "only", "apply", "set", "tablesample", "div", "mod", "xor", "regexp", "rlike",
	"glob", "match", "similar", "isnull", "notnull", "separator", "within", "distinct", "case",
	"exists", "interval", "null", "true", "false", "unique", "except", "replace")

// selectCore reads SELECT ... up to what ends it (ORDER BY and LIMIT are
// read by query).
func (p *parser) selectCore() *Select {
	s := &Select{}
	start := p.next().start
	switch t := p.cur(); {
	case t.isWord("distinct"):
		p.next()
		s.Distinct = "DISTINCT"
		if p.cur().isWord("on") {
			p.next()
			open := p.open()
			s.DistinctOn = p.exprList()
			p.close(open)
		}
	case t.isWord("all"):
		p.next()
		s.Distinct = "ALL"
	}
	// PostgreSQL reads SELECT FROM t: rows without columns.
	for !p.cur().isWord("from") || len(s.SelectExprs) > 0 {
		s.SelectExprs = append(s.SelectExprs, p.selectExpr())
		if !p.cur().isOp(",") {
			break
		}
		p.next()
	}
	if p.cur().isWord("from") {
		p.next()
		s.From = p.fromList()
	}
	if p.cur().isWord("prewhere") {
		p.next()
		s.PreWhere = p.expr(0)
	}
	if p.cur().isWord("where") {
		p.next()
		s.Where = p.expr(0)
	}
	if p.cur().isWord("group") {
		p.next()
		p.expectWord("by")
		s.GroupBy = p.groupBy()
		if p.cur().isWord("with") {
			if w := p.peek(1); w.isWord("rollup") || w.isWord("cube") || w.isWord("totals") {
				p.next()
				s.GroupByModifier = "WITH " + upper(p.next().text)
			}
		}
	}
	if p.cur().isWord("having") {
		p.next()
		s.Having = p.expr(0)
	}
	if p.cur().isWord("window") {
		p.next()
		for {
			w := &NamedWindow{}
			ws := p.cur().start
			w.Name = p.ident()
			p.expectWord("as")
			w.Spec = p.windowSpec()
			w.set(ws, p.end())
			s.Window = append(s.Window, w)
			if !p.cur().isOp(",") {
				break
			}
			p.next()
		}
	}
	if p.cur().isWord("qualify") {
		p.next()
		s.Qualify = p.expr(0)
	}
	s.set(start, p.end())
	return s
}

// groupBy reads GROUP BY's items: expressions, ROLLUP, CUBE and GROUPING
// SETS.
func (p *parser) groupBy() []Expr {
	var out []Expr
	for {
		t := p.cur()
		var kind string
		switch {
		case (t.isWord("rollup") || t.isWord("cube")) && p.peek(1).isOp("("):
			kind = upper(t.text)
			p.next()
		case t.isWord("grouping") && p.peek(1).isWord("sets") && p.peek(2).isOp("("):
			kind = "GROUPING SETS"
			p.next()
			p.next()
		}
		if kind != "" {
			g := &GroupingExpr{Type: kind}
			open := p.open()
			if !p.cur().isOp(")") {
				g.Exprs = p.exprList()
			}
			p.close(open)
			g.set(t.start, p.end())
			out = append(out, g)
		} else {
			out = append(out, p.expr(0))
		}
		if !p.cur().isOp(",") {
			return out
		}
		p.next()
	}
}

// selectExpr reads one item of a SELECT list.
func (p *parser) selectExpr() SelectExpr {
	t := p.cur()
	if t.isOp("*") || t.isName() && p.starAhead() {
		return p.star()
	}
	x := p.expr(0)
	a := p.items.alloc()
	a.Expr = x
	p.alias(&a.As, &a.HasAs)
	a.set(t.start, p.end())
	return a
}

// alias reads an optional [AS] name after an expression.
func (p *parser) alias(as *Ident, hasAs *bool) {
	t := p.cur()
	switch {
	case t.isWord("as"):
		p.next()
		*hasAs = true
		n := p.cur()
		if n.kind == sqltoken.String {
			p.next()
			*as = Ident{Name: n.text[1 : len(n.text)-1], Raw: n.text, Quote: n.text[0], At: n.start}
			return
		}
		*as = p.ident()
	case t.kind == sqltoken.QuotedName:
		*as = p.ident()
	case t.kind == sqltoken.Word && !clauseWords[t.lower]:
		*as = p.ident()
	}
}

// starAhead reports whether the cursor starts name.name.*.
func (p *parser) starAhead() bool {
	i := p.pos
	for p.toks[i].isName() && p.toks[i+1].isOp(".") {
		i += 2
		if p.toks[i].isOp("*") {
			return true
		}
	}
	return false
}

// star reads * or t.*, with ClickHouse's EXCEPT and REPLACE.
func (p *parser) star() *StarExpr {
	s := &StarExpr{}
	start := p.cur().start
	if p.cur().isName() {
		s.TableName = p.tableName()
	}
	p.expectOp("*")
	for {
		switch t := p.cur(); {
		case t.isWord("except") && !p.peek(1).isWord("select") && !p.peek(1).isWord("all") && !p.peek(1).isWord("distinct") && !(p.peek(1).isOp("(") && p.queryAt(p.pos+1)):
			p.next()
			if p.cur().isWord("strict") {
				p.next()
				s.ExceptStrict = true
			}
			if p.cur().isOp("(") {
				open := p.open()
				s.Except = p.exprList()
				p.close(open)
			} else {
				s.Except = []Expr{p.expr(6)}
			}
			continue
		case t.isWord("replace") && (p.peek(1).isOp("(") || p.peek(1).isWord("strict") && p.peek(2).isOp("(")):
			p.next()
			if p.cur().isWord("strict") {
				p.next()
				s.ReplaceStrict = true
			}
			open := p.open()
			for {
				a := &AliasedExpr{}
				as := p.cur().start
				a.Expr = p.expr(0)
				p.expectWord("as")
				a.HasAs = true
				a.As = p.ident()
				a.set(as, p.end())
				s.Replace = append(s.Replace, a)
				if !p.cur().isOp(",") {
					break
				}
				p.next()
			}
			p.close(open)
			continue
		}
		break
	}
	s.set(start, p.end())
	return s
}

// tableName reads name.name... up to a '.' before '*' or the end of the
// name.
func (p *parser) tableName() TableName {
	var tn TableName
	start := p.cur().start
	for {
		tn.Parts = append(tn.Parts, p.ident())
		if !p.cur().isOp(".") || !p.peek(1).isName() {
			break
		}
		p.next()
	}
	if p.cur().isOp(".") && p.peek(1).isOp("*") {
		p.next()
	}
	tn.set(start, tn.Parts[len(tn.Parts)-1].At+len(tn.Parts[len(tn.Parts)-1].Raw))
	return tn
}

// tail reads ORDER BY, LIMIT [BY], OFFSET and FETCH after a query.
func (p *parser) tail() (orders []*Order, limitBy *LimitBy, limit *Limit) {
	if p.cur().isWord("order") && p.peek(1).isWord("by") {
		p.next()
		p.next()
		orders = p.orderList()
	}
	if t := p.cur(); t.isWord("limit") {
		p.next()
		first := p.expr(0)
		var second Expr
		comma := false
		if p.cur().isOp(",") {
			p.next()
			comma = true
			second = p.expr(0)
		}
		if p.cur().isWord("by") {
			p.next()
			limitBy = &LimitBy{Rowcount: first}
			if comma {
				limitBy.Offset, limitBy.Rowcount = first, second
			}
			limitBy.Exprs = p.exprList()
			limitBy.set(t.start, p.end())
			if !p.cur().isWord("limit") {
				return orders, limitBy, p.offsetFetch(nil)
			}
			lt := p.next()
			first, second, comma = p.expr(0), nil, false
			if p.cur().isOp(",") {
				p.next()
				comma = true
				second = p.expr(0)
			}
			t = lt
		}
		limit = &Limit{Rowcount: first, Form: "LIMIT"}
		if comma {
			limit.Offset, limit.Rowcount, limit.Form = first, second, "LIMIT,"
		}
		limit.set(t.start, p.end())
		if !comma && p.cur().isWord("offset") {
			p.next()
			limit.Offset = p.expr(0)
			limit.set(t.start, p.end())
		}
		return orders, limitBy, limit
	}
	return orders, nil, p.offsetFetch(nil)
}

// offsetFetch reads OFFSET n [ROW|ROWS] [FETCH {FIRST|NEXT} n {ROW|ROWS}
// ONLY] and [OFFSET n] LIMIT n.
func (p *parser) offsetFetch(limit *Limit) *Limit {
	t := p.cur()
	if !t.isWord("offset") && !t.isWord("fetch") {
		return limit
	}
	l := &Limit{Form: "LIMIT"}
	if t.isWord("offset") {
		p.next()
		l.Offset = p.expr(0)
		if w := p.cur(); w.isWord("row") || w.isWord("rows") {
			p.next()
			l.Form = "FETCH"
		}
	}
	if p.cur().isWord("fetch") {
		p.next()
		if w := p.cur(); w.isWord("first") || w.isWord("next") {
			p.next()
		} else {
			p.fail(w, "expected FIRST or NEXT after FETCH, found %s", p.desc(w))
		}
		l.Form = "FETCH"
		if w := p.cur(); !w.isWord("row") && !w.isWord("rows") {
			l.Rowcount = p.expr(0)
		}
		if w := p.cur(); w.isWord("row") || w.isWord("rows") {
			p.next()
		} else {
			p.fail(w, "expected ROWS, found %s", p.desc(w))
		}
		if p.cur().isWord("with") && p.peek(1).isWord("ties") {
			p.fail(p.cur(), "FETCH ... WITH TIES is not supported")
		}
		p.expectWord("only")
	} else if l.Form == "LIMIT" && p.cur().isWord("limit") {
		// OFFSET m LIMIT n (PostgreSQL takes either order).
		p.next()
		l.Rowcount = p.expr(0)
	}
	l.set(t.start, p.end())
	return l
}

// orderList reads ORDER BY items.
func (p *parser) orderList() []*Order {
	var out []*Order
	for {
		o := &Order{}
		start := p.cur().start
		o.Expr = p.expr(0)
		if t := p.cur(); t.isWord("asc") || t.isWord("desc") {
			o.Direction = upper(p.next().text)
		}
		if p.cur().isWord("nulls") {
			p.next()
			if t := p.cur(); t.isWord("first") || t.isWord("last") {
				o.Nulls = "NULLS " + upper(p.next().text)
			} else {
				p.fail(t, "expected FIRST or LAST after NULLS, found %s", p.desc(t))
			}
		}
		if p.cur().isWord("with") && p.peek(1).isWord("fill") {
			// ClickHouse's WITH FILL [FROM x] [TO y] [STEP z], kept as
			// written.
			fs := p.next().start
			p.next()
			for _, f := range []struct {
				kw string
				x  *Expr
			}{{"from", &o.FillFrom}, {"to", &o.FillTo}, {"step", &o.FillStep}} {
				if p.cur().isWord(f.kw) {
					p.next()
					*f.x = p.expr(precCompare + 1)
				}
			}
			o.Fill = p.src[fs:p.end()]
		}
		o.set(start, p.end())
		out = append(out, o)
		if !p.cur().isOp(",") {
			return out
		}
		p.next()
	}
}

// exprList reads expressions separated by commas.
func (p *parser) exprList() []Expr {
	base := len(p.stack)
	for {
		x := p.expr(0)
		p.stack = append(p.stack, x)
		if !p.cur().isOp(",") {
			return p.list(base)
		}
		p.next()
	}
}
