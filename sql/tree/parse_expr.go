package tree

import (
	"strings"

	"github.com/endpointkit/endpointkit/sql/sqltoken"
)

// Binding powers of the operators, loosest first.
const (
	precOr      = 1
	precXor     = 2
	precAnd     = 3
	precNot     = 4
	precCompare = 5
	precOther   = 6 // || -> ->> & | << >> and PostgreSQL's other operators
	precAdd     = 7
	precMul     = 8
	precPow     = 9
	precAt      = 10
	precUnary   = 12
)

// otherOps are the binary operators between comparison and addition.
var otherOps = setOf("||", "->", "->>", "&", "|", "<<", ">>", "#>", "#>>", "@>", "<@", "~", "~*", "!~", "!~*", "?|", "?&", "@@", "&&")

var compareOps = setOf("=", "==", "<", ">", "<=", ">=", "<>", "!=", "<=>")

// likeWords are the pattern-matching operators.
var likeWords = setOf("like", "ilike", "glob", "regexp", "rlike", "match")

// expr reads an expression whose operators bind at least as tightly as
// minPrec (0: any expression).
func (p *parser) expr(minPrec int) Expr {
	p.enter()
	defer p.leave()
	start := p.cur().start
	var left Expr
	if t := p.cur(); t.isWord("not") && minPrec <= precNot {
		p.next()
		n := &NotExpr{Expr: p.expr(precNot)}
		n.set(start, p.end())
		left = n
	} else if t.isOp("!") && !p.peek(1).isOp("=") {
		p.next()
		n := &NotExpr{Expr: p.expr(precUnary)}
		n.set(start, p.end())
		left = n
	} else {
		left = p.unary()
	}
	for {
		next, ok := p.infix(left, start, minPrec)
		if !ok {
			return left
		}
		left = next
	}
}

// infix reads one operator after left and its right side, when the
// operator binds at least as tightly as minPrec.
func (p *parser) infix(left Expr, start, minPrec int) (Expr, bool) {
	t := p.cur()
	switch t.kind {
	case sqltoken.Word:
		switch w := t.lower; {
		case w == "or" && minPrec <= precOr:
			p.next()
			return p.fin(&OrExpr{Left: left, Right: p.expr(precOr + 1), Operator: "OR"}, start), true
		case w == "xor" && minPrec <= precXor:
			p.next()
			return p.fin(&XorExpr{Left: left, Right: p.expr(precXor + 1)}, start), true
		case w == "and" && minPrec <= precAnd:
			p.next()
			a := p.ands.alloc()
			a.Left, a.Right = left, p.expr(precAnd+1)
			return p.fin(a, start), true
		case minPrec > precCompare:
		case w == "is":
			return p.is(left, start), true
		case w == "isnull" || w == "notnull":
			p.next()
			return p.fin(&IsExpr{Operator: upper(w), Expr: left}, start), true
		case w == "not" || w == "between" || w == "in" || w == "global" || likeWords[w] || w == "similar":
			return p.predicate(left, start)
		case w == "div" || w == "mod":
			if minPrec > precMul {
				return nil, false
			}
			p.next()
			return p.fin(&BinaryExpr{Operator: upper(w), Left: left, Right: p.expr(precMul + 1)}, start), true
		case w == "at" && p.peek(1).isWord("time") && p.peek(2).isWord("zone"):
			if minPrec > precAt {
				return nil, false
			}
			p.next()
			p.next()
			p.next()
			return p.fin(&BinaryExpr{Operator: "AT TIME ZONE", Left: left, Right: p.expr(precAt + 1)}, start), true
		}
		if w := t.lower; (w == "div" || w == "mod") && minPrec <= precMul {
			p.next()
			return p.fin(&BinaryExpr{Operator: upper(w), Left: left, Right: p.expr(precMul + 1)}, start), true
		}
		return nil, false
	case sqltoken.Punct:
	default:
		return nil, false
	}
	op := t.text
	var prec int
	switch {
	case op == "||" && p.lx.PipesOr:
		if minPrec > precOr {
			return nil, false
		}
		p.next()
		return p.fin(&OrExpr{Left: left, Right: p.expr(precOr + 1), Operator: "||"}, start), true
	case op == "&&" && p.lx.PipesOr:
		if minPrec > precAnd {
			return nil, false
		}
		p.next()
		return p.fin(&BinaryExpr{Operator: "&&", Left: left, Right: p.expr(precAnd + 1)}, start), true
	case compareOps[op]:
		if minPrec > precCompare {
			return nil, false
		}
		p.next()
		c := p.cmps.alloc()
		c.Operator, c.Left = op, left
		if q := p.cur(); (q.isWord("any") || q.isWord("all") || q.isWord("some")) && p.peek(1).isOp("(") {
			c.Right = p.quantified()
		} else {
			c.Right = p.expr(precCompare + 1)
		}
		return p.fin(c, start), true
	case op == "->" && p.lambdas:
		return nil, false
	case otherOps[op]:
		prec = precOther
	case op == "+" || op == "-":
		prec = precAdd
	case op == "*" || op == "/" || op == "%":
		prec = precMul
	case op == "^":
		prec = precPow
	default:
		return nil, false
	}
	if minPrec > prec {
		return nil, false
	}
	p.next()
	b := p.bins.alloc()
	b.Operator, b.Left, b.Right = op, left, p.expr(prec+1)
	return p.fin(b, start), true
}

// fin sets the span of n from start to the last token read.
func (p *parser) fin(n Expr, start int) Expr {
	n.base().set(start, p.end())
	return n
}

// quantified reads ANY|ALL|SOME (query or array).
func (p *parser) quantified() Expr {
	t := p.next()
	a := &AnyExpr{Quantifier: upper(t.text)}
	if p.queryAt(p.pos) {
		a.Expr = p.subquery()
	} else {
		open := p.open()
		a.Expr = p.expr(0)
		p.close(open)
	}
	return p.fin(a, t.start)
}

// is reads IS [NOT] NULL|TRUE|FALSE|UNKNOWN|DISTINCT FROM x, or SQLite's
// IS [NOT] x.
func (p *parser) is(left Expr, start int) Expr {
	p.next()
	not := ""
	if p.cur().isWord("not") {
		p.next()
		not = "NOT "
	}
	switch t := p.cur(); {
	case t.isWord("null") || t.isWord("true") || t.isWord("false") || t.isWord("unknown"):
		p.next()
		return p.fin(&IsExpr{Operator: "IS " + not + upper(t.text), Expr: left}, start)
	case t.isWord("distinct") && p.peek(1).isWord("from"):
		p.next()
		p.next()
		return p.fin(&ComparisonExpr{Operator: "IS " + not + "DISTINCT FROM", Left: left, Right: p.expr(precCompare + 1)}, start)
	}
	return p.fin(&ComparisonExpr{Operator: strings.TrimSpace("IS " + not), Left: left, Right: p.expr(precCompare + 1)}, start)
}

// predicate reads [NOT] BETWEEN, [GLOBAL] [NOT] IN, [NOT] LIKE and the
// like, and SQLite's NOT NULL.
func (p *parser) predicate(left Expr, start int) (Expr, bool) {
	save := p.pos
	prefix := ""
	if p.cur().isWord("global") {
		if !p.peek(1).isWord("in") && !(p.peek(1).isWord("not") && p.peek(2).isWord("in")) {
			return nil, false
		}
		p.next()
		prefix = "GLOBAL "
	}
	if p.cur().isWord("not") {
		if p.peek(1).isWord("null") {
			p.next()
			p.next()
			return p.fin(&IsExpr{Operator: "NOT NULL", Expr: left}, start), true
		}
		p.next()
		prefix += "NOT "
	}
	t := p.cur()
	switch w := t.lower; {
	case t.kind != sqltoken.Word:
	case w == "between":
		p.next()
		op := prefix + "BETWEEN"
		if p.cur().isWord("symmetric") {
			p.next()
			op += " SYMMETRIC"
		}
		r := &RangeCond{Operator: op, Left: left}
		r.From = p.expr(precCompare + 1)
		p.expectWord("and")
		r.To = p.expr(precCompare + 1)
		return p.fin(r, start), true
	case w == "in":
		p.next()
		c := &ComparisonExpr{Operator: prefix + "IN", Left: left}
		c.Right = p.inList()
		return p.fin(c, start), true
	case likeWords[w] || w == "similar":
		p.next()
		op := prefix + upper(w)
		if w == "similar" {
			p.expectWord("to")
			op += " TO"
		}
		c := &ComparisonExpr{Operator: op, Left: left, Right: p.expr(precCompare + 1)}
		if p.cur().isWord("escape") {
			p.next()
			c.Escape = p.expr(precCompare + 1)
		}
		return p.fin(c, start), true
	}
	p.pos = save
	return nil, false
}

// inList reads what IN takes: (values), (query), a placeholder, or a
// value (ClickHouse's IN table, an array).
func (p *parser) inList() Expr {
	t := p.cur()
	if t.isOp("(") {
		if p.queryAt(p.pos) {
			return p.subquery()
		}
		open := p.open()
		v := &ValTuple{}
		if !p.cur().isOp(")") {
			v.Exprs = p.exprList()
		}
		p.close(open)
		return p.fin(v, t.start)
	}
	return p.expr(precCompare + 1)
}

// unary reads a prefix operator and its operand, or a primary with its
// postfix operators.
func (p *parser) unary() Expr {
	t := p.cur()
	if t.kind == sqltoken.Punct && (t.text == "-" || t.text == "+" || t.text == "~") {
		p.next()
		u := &UnaryExpr{Operator: t.text, Expr: p.expr(precUnary)}
		return p.fin(u, t.start)
	}
	if t.isWord("binary") && (p.peek(1).isName() || p.peek(1).kind == sqltoken.String) && !p.peek(1).isOp("(") && p.lx.PipesOr {
		p.next()
		u := &UnaryExpr{Operator: "BINARY", Expr: p.expr(precUnary)}
		return p.fin(u, t.start)
	}
	e := p.primary()
	return p.postfix(e, t.start)
}

// postfix reads ::type, [subscript] and COLLATE after a value.
func (p *parser) postfix(e Expr, start int) Expr {
	for {
		t := p.cur()
		switch {
		case t.isOp("::"):
			p.next()
			typ := p.typeName()
			e = p.fin(&ConvertExpr{Expr: e, Type: typ, Form: "::"}, start)
		case t.isOp("[") && t.start == p.end():
			open := p.pos
			p.next()
			ix := &IndexExpr{Expr: e, Index: p.expr(0)}
			p.close(open)
			e = p.fin(ix, start)
		case t.isOp(".") && p.peek(1).kind == sqltoken.Number && t.start == p.end() && p.peek(1).start == t.end:
			// ClickHouse's tuple element: t.1.
			p.next()
			n := p.next()
			ix := &IndexExpr{Expr: e, Index: p.fin(&Literal{Kind: NumVal, Text: n.text}, n.start), Dot: true}
			e = p.fin(ix, start)
		case t.isWord("collate"):
			p.next()
			c := p.cur()
			if !c.isName() && c.kind != sqltoken.String {
				p.fail(c, "expected a collation after COLLATE, found %s", p.desc(c))
			}
			p.next()
			e = p.fin(&CollateExpr{Expr: e, Collation: c.text}, start)
		default:
			return e
		}
	}
}

// typeName reads a type after :: and returns it as written.
func (p *parser) typeName() string {
	start := p.cur().start
	t := p.cur()
	if !t.isName() {
		p.fail(t, "expected a type name, found %s", p.desc(t))
	}
	p.next()
	for p.cur().isOp(".") && p.peek(1).isName() {
		p.next()
		p.next()
	}
	switch t.lower {
	case "double":
		if p.cur().isWord("precision") {
			p.next()
		}
	case "character", "char", "bit":
		if p.cur().isWord("varying") {
			p.next()
		}
	}
	if p.cur().isOp("(") {
		p.typeParams(p.pos - 1)
	}
	if (t.lower == "timestamp" || t.lower == "time") && (p.cur().isWord("with") || p.cur().isWord("without")) && p.peek(1).isWord("time") && p.peek(2).isWord("zone") {
		p.next()
		p.next()
		p.next()
	}
	for p.cur().isOp("[") && p.peek(1).isOp("]") {
		p.next()
		p.next()
	}
	return p.src[start:p.end()]
}

// stringPrefixes are the letters that may stand right before a string's
// quote: PostgreSQL's E” escape strings, N” national strings, X” and
// B” hexadecimal and bit strings.
var stringPrefixes = setOf("e", "n", "x", "b")

// niladic are the functions written without parentheses.
var niladic = setOf("current_date", "current_time", "current_timestamp", "localtime", "localtimestamp")

// typedLiterals are the type words that may stand before a string:
// DATE '2024-01-01'.
var typedLiterals = setOf("date", "time", "timestamp", "timestamptz", "datetime")

// notAValue are keywords that cannot start an expression.
var notAValue = setOf("select", "from", "where", "group", "having", "order", "limit", "offset",
	"union", "intersect", "except", "minus", "join", "on", "using", "as", "and", "or", "when",
	"then", "else", "end", "window", "qualify", "prewhere", "fetch", "into", "by", "asc", "desc",
	"inner", "cross", "natural", "lateral", "with", "is", "in", "between", "like", "ilike")

// primary reads a value: a literal, a placeholder, a name, a call, a
// parenthesised expression or query, and the keyword forms.
func (p *parser) primary() Expr {
	t := p.cur()
	start := t.start
	switch t.kind {
	case sqltoken.Number, sqltoken.String:
		p.next()
		l := p.lits.alloc()
		l.Kind, l.Text = NumVal, t.text
		if t.kind == sqltoken.String {
			l.Kind = StrVal
		}
		return p.fin(l, start)
	case sqltoken.Placeholder:
		p.next()
		return p.fin(&Placeholder{Name: sqltoken.PlaceholderName(t.text), Text: t.text}, start)
	case sqltoken.BindMarker:
		p.next()
		return p.fin(&BindMarker{Text: t.text}, start)
	case sqltoken.QuotedName:
		return p.nameExpr()
	case sqltoken.Punct:
		switch t.text {
		case "(":
			return p.parenExpr()
		case "[":
			open := p.pos
			p.next()
			a := &ArrayExpr{}
			if !p.cur().isOp("]") {
				a.Exprs = p.exprList()
			}
			p.close(open)
			return p.fin(a, start)
		case "*":
			p.next()
			return p.fin(&StarExpr{}, start)
		}
		p.fail(t, "expected a value, found %s", p.desc(t))
	case sqltoken.Word:
	default:
		p.fail(t, "expected a value, found %s", p.desc(t))
	}
	next := p.peek(1)
	switch w := t.lower; {
	case w == "null":
		p.next()
		return p.fin(&Literal{Kind: NullVal, Text: t.text}, start)
	case w == "true" || w == "false":
		p.next()
		return p.fin(&Literal{Kind: BoolVal, Text: t.text}, start)
	case w == "case":
		return p.caseExpr()
	case w == "exists" && next.isOp("("):
		p.next()
		return p.fin(&ExistsExpr{Subquery: p.subquery()}, start)
	case w == "interval" && !next.isOp("(") && !next.isOp(",") && !next.isOp(")"):
		return p.interval()
	case (w == "cast" || w == "try_cast" || w == "safe_cast") && next.isOp("("):
		p.next()
		open := p.open()
		c := &ConvertExpr{Form: upper(w), Expr: p.expr(0)}
		if p.cur().isOp(",") && p.peek(1).kind == sqltoken.String {
			// ClickHouse's CAST(x, 'Type').
			p.next()
			c.Form = "CAST,"
		} else {
			if t := p.cur(); t.isWord("as") {
				c.As = p.src[t.start:t.end]
			}
			p.expectWord("as")
		}
		c.Type = p.typeUntil(open)
		p.close(open)
		return p.fin(c, start)
	case w == "convert" && next.isOp("(") && (p.lx.PipesOr || p.convertUsingAt(p.pos+1)):
		// MySQL's CONVERT(x, type) and CONVERT(x USING charset); elsewhere
		// convert(a, b) is a function of values.
		p.next()
		open := p.open()
		c := &ConvertExpr{Form: "CONVERT", Expr: p.expr(0)}
		if p.cur().isWord("using") {
			p.next()
			c.Form = "CONVERT USING"
		} else {
			p.expectOp(",")
		}
		c.Type = p.typeUntil(open)
		p.close(open)
		return p.fin(c, start)
	case w == "extract" && next.isOp("(") && p.peek(3).isWord("from"):
		p.next()
		open := p.open()
		u := p.cur()
		if !u.isName() && u.kind != sqltoken.String {
			p.fail(u, "expected a unit after EXTRACT(, found %s", p.desc(u))
		}
		p.next()
		p.expectWord("from")
		x := &ExtractExpr{Unit: u.text, Expr: p.expr(0)}
		p.close(open)
		return p.fin(x, start)
	case w == "array" && next.isOp("["):
		p.next()
		open := p.pos
		p.next()
		a := &ArrayExpr{Keyword: true}
		if !p.cur().isOp("]") {
			a.Exprs = p.exprList()
		}
		p.close(open)
		return p.fin(a, start)
	case stringPrefixes[w] && next.kind == sqltoken.String && next.start == t.end:
		// E'x', N'x', X'ff', B'01': a string with its prefix.
		p.next()
		p.next()
		return p.fin(&Literal{Kind: StrVal, Text: p.src[start:p.end()]}, start)
	case typedLiterals[w] && next.kind == sqltoken.String:
		p.next()
		p.next()
		return p.fin(&Literal{Kind: TypedStrVal, Text: p.src[start:p.end()], Type: t.text}, start)
	case niladic[w] && !next.isOp("(") && !next.isOp("."):
		p.next()
		return p.fin(&FuncExpr{Name: identOf(t), NoParens: true}, start)
	case notAValue[w] && !next.isOp("("):
		p.fail(t, "expected a value, found %s", p.desc(t))
	}
	if p.lambdas && next.isOp("->") {
		return p.lambda()
	}
	return p.nameExpr()
}

// convertUsingAt reports whether the '(' at token i holds x USING name.
func (p *parser) convertUsingAt(i int) bool {
	m := p.match[i]
	return m > 3 && p.toks[m-2].isWord("using") && p.toks[m-1].isName()
}

// nameExpr reads a column (name, t.name, s.t.name) or a call (f(...),
// s.f(...)).
func (p *parser) nameExpr() Expr {
	start := p.cur().start
	if n := p.peek(1); !n.isOp(".") && !n.isOp("(") {
		// A bare column, the most frequent name.
		c := p.cols.alloc()
		c.Name = p.ident()
		return p.fin(c, start)
	}
	var buf [4]Ident
	parts := buf[:0]
	for {
		parts = append(parts, p.ident())
		if !p.cur().isOp(".") || !p.peek(1).isName() {
			break
		}
		p.next()
	}
	if p.cur().isOp("(") {
		var q Ident
		if len(parts) == 2 {
			q = parts[0]
		} else if len(parts) > 2 {
			p.fail(p.cur(), "a function name has at most two parts")
		}
		return p.call(q, parts[len(parts)-1], start)
	}
	c := p.cols.alloc()
	c.Name = parts[len(parts)-1]
	if len(parts) > 1 {
		q := p.idents(parts[:len(parts)-1])
		c.Qualifier = TableName{Parts: q}
		c.Qualifier.set(start, q[len(q)-1].At+len(q[len(q)-1].Raw))
	}
	return p.fin(c, start)
}

// keywordArgs are the functions whose arguments may be separated by
// keywords, and the keywords.
var keywordArgs = map[string]map[string]bool{
	"substring": setOf("from", "for", "similar", "escape"),
	"substr":    setOf("from", "for"),
	"trim":      setOf("both", "leading", "trailing", "from"),
	"overlay":   setOf("placing", "from", "for"),
	"position":  setOf("in"),
}

// keywordArgsOf returns keywordArgs of the function name, in any case,
// without allocating.
func keywordArgsOf(name string) map[string]bool {
	if len(name) > 9 {
		return nil
	}
	var buf [9]byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return keywordArgs[string(buf[:len(name)])]
}

// call reads a function's arguments and what may follow them: the
// parameters of a ClickHouse parametric aggregate, WITHIN GROUP, FILTER,
// OVER.
func (p *parser) call(qualifier, name Ident, start int) *FuncExpr {
	p.enter()
	defer p.leave()
	f := p.funcs.alloc()
	f.Qualifier, f.Name = qualifier, name
	p.args(f)
	if p.cur().isOp("(") && p.cur().start == p.end() {
		// quantile(0.9)(x): the first list held the parameters.
		f.Params, f.HasParams = f.Exprs, true
		if f.Distinct || f.Keywords != nil || f.OrderBy != nil || f.Separator != nil {
			p.fail(p.cur(), "a parametric function's parameters cannot hold DISTINCT, ORDER BY or keywords")
		}
		f.Exprs, f.Keywords = nil, nil
		p.args(f)
	}
	if p.cur().isWord("within") && p.peek(1).isWord("group") {
		p.next()
		p.next()
		open := p.open()
		p.expectWord("order")
		p.expectWord("by")
		f.WithinGroup = p.orderList()
		p.close(open)
	}
	if p.cur().isWord("filter") && p.peek(1).isOp("(") {
		p.next()
		open := p.open()
		p.expectWord("where")
		f.Filter = p.expr(0)
		p.close(open)
	}
	if p.cur().isWord("over") {
		os := p.next().start
		o := &Over{}
		if p.cur().isOp("(") {
			o.Spec = p.windowSpec()
		} else {
			o.Name = p.ident()
		}
		o.set(os, p.end())
		f.Over = o
	}
	f.set(start, p.end())
	return f
}

// args reads (args) into f.Exprs.
func (p *parser) args(f *FuncExpr) {
	open := p.open()
	if p.cur().isOp(")") {
		p.close(open)
		return
	}
	if p.cur().isWord("distinct") {
		p.next()
		f.Distinct = true
	} else if p.cur().isWord("all") && !p.peek(1).isOp("(") && !p.peek(1).isOp(")") && !p.peek(1).isOp(",") {
		p.next()
	}
	kws := keywordArgsOf(f.Name.Name)
	base := len(p.stack)
	for i := 0; ; i++ {
		kw := ""
		for kws != nil && p.cur().kind == sqltoken.Word && kws[p.cur().lower] {
			if kw != "" {
				kw += " "
			}
			kw += upper(p.next().text)
		}
		if kw != "" || f.Keywords != nil {
			for len(f.Keywords) < i {
				f.Keywords = append(f.Keywords, "")
			}
			f.Keywords = append(f.Keywords, kw)
		}
		if kw != "" && p.cur().isOp(")") {
			// TRIM(BOTH FROM s) reads its keywords before the value.
			p.fail(p.cur(), "expected a value after %s, found %s", kw, p.desc(p.cur()))
		}
		prec := 0
		if kws != nil {
			prec = precCompare + 1
		}
		x := p.arg(prec)
		p.stack = append(p.stack, x)
		if p.cur().isOp(",") {
			p.next()
			continue
		}
		if kws != nil && p.cur().kind == sqltoken.Word && kws[p.cur().lower] {
			continue
		}
		break
	}
	f.Exprs = p.list(base)
	if p.cur().isWord("order") && p.peek(1).isWord("by") {
		p.next()
		p.next()
		f.OrderBy = p.orderList()
	}
	if p.cur().isWord("separator") {
		p.next()
		f.Separator = p.expr(0)
	}
	p.close(open)
}

// arg reads one argument: an expression, a query (ARRAY(SELECT ...)),
// a lambda on ClickHouse.
func (p *parser) arg(prec int) Expr {
	t := p.cur()
	if startsQuery(t) {
		s := &Subquery{Select: p.query()}
		return p.fin(s, t.start)
	}
	if p.lambdas && t.isOp("(") && p.lambdaParamsAt(p.pos) {
		return p.lambda()
	}
	return p.expr(prec)
}

// lambdaParamsAt reports whether "(a, b) ->" starts at token i.
func (p *parser) lambdaParamsAt(i int) bool {
	m := p.match[i]
	if m < 0 || !p.toks[m+1].isOp("->") {
		return false
	}
	for k := i + 1; k < m; k++ {
		if (k-i)%2 == 1 && !p.toks[k].isName() || (k-i)%2 == 0 && !p.toks[k].isOp(",") {
			return false
		}
	}
	return true
}

// lambda reads ClickHouse's x -> expr or (x, y) -> expr.
func (p *parser) lambda() Expr {
	start := p.cur().start
	l := &LambdaExpr{}
	if p.cur().isOp("(") {
		l.Params = p.nameList()
	} else {
		l.Params = []Ident{p.ident()}
	}
	p.expectOp("->")
	l.Body = p.expr(0)
	return p.fin(l, start)
}

// typeUntil returns the type written up to the ')' that closes the '('
// at token open.
func (p *parser) typeUntil(open int) string {
	m := p.match[open]
	if m < 0 {
		p.close(open)
	}
	if m == p.pos {
		p.fail(p.cur(), "expected a type, found %s", p.desc(p.cur()))
	}
	start := p.cur().start
	for p.pos < m {
		switch t := p.cur(); {
		case t.isOp("("):
			p.typeParams(p.pos - 1)
		case t.isName() || t.isOp(".") || t.isOp("[") || t.isOp("]") || t.kind == sqltoken.Number || t.kind == sqltoken.String:
			p.next()
		default:
			p.fail(t, "unexpected %s in a type", p.desc(t))
		}
	}
	return p.src[start:p.toks[m-1].end]
}

// typeParams reads the parameters of the type word at token w, at the
// cursor: numbers, strings, names and nested types, so that a call
// (pg_read_file(...)) never stands as a type.
func (p *parser) typeParams(w int) {
	p.enter()
	defer p.leave()
	if t := &p.toks[w]; t.kind != sqltoken.Word || !paramTypes[t.lower] {
		p.fail(t, "%s is not a type that takes parameters", p.desc(t))
	}
	open := p.open()
	for !p.cur().isOp(")") {
		switch t := p.cur(); {
		case t.isName() && p.peek(1).isOp("("):
			p.next()
			p.typeParams(p.pos - 1)
		case t.isName() || t.kind == sqltoken.Number || t.kind == sqltoken.String || t.isOp(",") || t.isOp("=") || t.isOp("-") || t.isOp("+"):
			p.next()
		default:
			p.fail(t, "unexpected %s in a type", p.desc(t))
		}
	}
	p.close(open)
}

// paramTypes are the type names that take parameters: DECIMAL(10, 2),
// VARCHAR(20), Nullable(String), DateTime64(3, 'UTC').
var paramTypes = setOf("decimal", "numeric", "dec", "varchar", "char", "character", "nchar",
	"nvarchar", "varbinary", "binary", "bit", "varbit", "float", "double", "real", "time",
	"timestamp", "datetime", "datetime64", "interval", "nullable", "lowcardinality", "array",
	"tuple", "map", "fixedstring", "decimal32", "decimal64", "decimal128", "decimal256",
	"enum", "enum8", "enum16", "int", "integer", "bigint", "smallint", "tinyint",
	"mediumint", "unsigned", "signed", "varying", "bpchar", "datetime2", "nested",
	"aggregatefunction", "simpleaggregatefunction", "object", "json", "variant", "dynamic",
	"precision")

// parenExpr reads (query), (expr) or (a, b).
func (p *parser) parenExpr() Expr {
	t := p.cur()
	if p.queryAt(p.pos) {
		return p.subquery()
	}
	if p.lambdas && p.lambdaParamsAt(p.pos) {
		return p.lambda()
	}
	open := p.open()
	if p.cur().isOp(")") {
		// () : the empty grouping set, or an empty tuple.
		p.close(open)
		return p.fin(&ValTuple{}, t.start)
	}
	e := p.expr(0)
	if p.cur().isOp(",") {
		v := &ValTuple{Exprs: []Expr{e}}
		p.next()
		v.Exprs = append(v.Exprs, p.exprList()...)
		p.close(open)
		return p.fin(v, t.start)
	}
	p.close(open)
	return p.fin(&ParenExpr{Expr: e}, t.start)
}

// caseExpr reads CASE [x] WHEN ... THEN ... [ELSE ...] END.
func (p *parser) caseExpr() Expr {
	start := p.next().start
	c := &CaseExpr{}
	if !p.cur().isWord("when") {
		c.Expr = p.expr(0)
	}
	for p.cur().isWord("when") {
		ws := p.next().start
		w := &When{Cond: p.expr(0)}
		p.expectWord("then")
		w.Val = p.expr(0)
		w.set(ws, p.end())
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		p.fail(p.cur(), "expected WHEN, found %s", p.desc(p.cur()))
	}
	if p.cur().isWord("else") {
		p.next()
		c.Else = p.expr(0)
	}
	if !p.cur().isWord("end") {
		p.fail(p.cur(), "expected END to close the CASE at %s, found %s", where(p.src, start), p.desc(p.cur()))
	}
	p.next()
	return p.fin(c, start)
}

// intervalUnits are the units that may follow an interval's value.
var intervalUnits = setOf("microsecond", "millisecond", "nanosecond", "second", "minute", "hour",
	"day", "week", "month", "quarter", "year", "decade", "century", "millennium",
	"second_microsecond", "minute_microsecond", "minute_second", "hour_microsecond",
	"hour_second", "hour_minute", "day_microsecond", "day_second", "day_minute", "day_hour",
	"year_month")

// isUnit reports whether t is an interval unit (or its plural).
func isUnit(t *token) bool {
	if t.kind != sqltoken.Word {
		return false
	}
	return intervalUnits[t.lower] || strings.HasSuffix(t.lower, "s") && intervalUnits[t.lower[:len(t.lower)-1]]
}

// interval reads INTERVAL value [unit [TO unit]].
func (p *parser) interval() Expr {
	start := p.next().start
	iv := &IntervalExpr{Expr: p.expr(precUnary)}
	if u := p.cur(); isUnit(u) {
		p.next()
		if p.cur().isWord("to") && isUnit(p.peek(1)) {
			p.next()
			p.next()
		}
		iv.Unit = p.src[u.start:p.end()]
	}
	return p.fin(iv, start)
}

// windowSpec reads ([name] [PARTITION BY ...] [ORDER BY ...] [frame]).
func (p *parser) windowSpec() *WindowSpec {
	start := p.cur().start
	open := p.open()
	w := &WindowSpec{}
	if t := p.cur(); t.isName() && !t.isWord("partition") && !t.isWord("order") && !t.isWord("rows") && !t.isWord("range") && !t.isWord("groups") {
		w.Name = p.ident()
	}
	if p.cur().isWord("partition") {
		p.next()
		p.expectWord("by")
		w.PartitionBy = p.exprList()
	}
	if p.cur().isWord("order") {
		p.next()
		p.expectWord("by")
		w.OrderBy = p.orderList()
	}
	if t := p.cur(); t.isWord("rows") || t.isWord("range") || t.isWord("groups") {
		f := &Frame{Unit: upper(p.next().text)}
		if p.cur().isWord("between") {
			p.next()
			f.Start = p.frameBound()
			p.expectWord("and")
			f.End = p.frameBound()
		} else {
			f.Start = p.frameBound()
		}
		if p.cur().isWord("exclude") {
			es := p.next().start
			for p.cur().kind == sqltoken.Word {
				p.next()
			}
			f.Exclude = p.src[es:p.end()]
		}
		f.set(t.start, p.end())
		w.Frame = f
	}
	p.close(open)
	w.set(start, p.end())
	return w
}

// frameBound reads UNBOUNDED PRECEDING|FOLLOWING, CURRENT ROW or x
// PRECEDING|FOLLOWING.
func (p *parser) frameBound() *FrameBound {
	t := p.cur()
	b := &FrameBound{}
	switch {
	case t.isWord("unbounded"):
		p.next()
		d := p.cur()
		if !d.isWord("preceding") && !d.isWord("following") {
			p.fail(d, "expected PRECEDING or FOLLOWING, found %s", p.desc(d))
		}
		p.next()
		b.Type = "UNBOUNDED " + upper(d.text)
	case t.isWord("current"):
		p.next()
		p.expectWord("row")
		b.Type = "CURRENT ROW"
	default:
		b.Expr = p.expr(precCompare + 1)
		d := p.cur()
		if !d.isWord("preceding") && !d.isWord("following") {
			p.fail(d, "expected PRECEDING or FOLLOWING, found %s", p.desc(d))
		}
		p.next()
		b.Type = upper(d.text)
	}
	b.set(t.start, p.end())
	return b
}
