package tree

import (
	"strings"
	"sync"

	"github.com/endpointkit/endpointkit/sql/sqltoken"
)

// Scope is the tenant scope a Printer prints with: every reference to a
// table that Bind bound to a scoped Table is printed as a derived table
// that reads only the tenant's rows and the table's listed columns.
type Scope struct {
	// Tenant is the code name of the placeholder that holds the tenant:
	// {variables.<Tenant>}. The caller binds it, never a client.
	Tenant string
}

// Printer prints a tree in its engine's dialect: a node the tree read and
// nobody changed prints as it was written, byte for byte; a node a caller
// built or changed (see Rewrite and MarkChanged) prints as generated text.
// With a Scope, a reference to a scoped table prints as the derived table
// that confines it; without one, such a reference is an *Error that
// wraps ErrUnscoped, never unscoped text. Normal is the same walk in the
// normal form, which generates every node's text.
type Printer struct {
	// Scope is the tenant scope, nil to print without one.
	Scope *Scope
}

// Print prints t without a tenant scope.
func Print(t *Tree) (string, error) { return Printer{}.Print(t) }

// Print prints t.
func (pr Printer) Print(t *Tree) (string, error) {
	if t == nil || isNil(t.Stmt) {
		return "", &Error{Line: 1, Column: 1, Detail: "there is no statement to print", Err: ErrSyntax}
	}
	p := &printer{t: t, src: t.Src, scope: pr.Scope}
	p.kids.init()
	p.b.Grow(len(t.Src) + 64)
	if pr.Scope != nil {
		p.keep = keptRefs(t.Stmt, pr.Scope.Tenant)
	}
	// Spaces, comments and semicolons around the statement are kept.
	s := t.Stmt.Span()
	whole := s.End > s.Start && !t.Stmt.base().gen
	if whole {
		p.ws(t.Src[:s.Start])
	}
	p.print(t.Stmt)
	p.kids.release()
	if whole {
		p.ws(t.Src[s.End:])
	}
	if p.err != nil {
		return "", p.err
	}
	return p.b.String(), nil
}

// Text prints one node of t as Print prints it within the statement: its
// text as written when nobody changed it, generated text where a caller
// did (sqlparser.String's counterpart, for messages and analyses).
func Text(t *Tree, n Node) (string, error) { return Printer{}.Text(t, n) }

// Text prints one node of t, with the printer's scope.
func (pr Printer) Text(t *Tree, n Node) (string, error) {
	if t == nil || isNil(n) {
		return "", &Error{Line: 1, Column: 1, Detail: "there is nothing to print", Err: ErrSyntax}
	}
	p := &printer{t: t, src: t.Src, scope: pr.Scope}
	p.kids.init()
	if pr.Scope != nil {
		p.keep = keptRefs(t.Stmt, pr.Scope.Tenant)
	}
	p.print(n)
	p.kids.release()
	if p.err != nil {
		return "", p.err
	}
	return p.b.String(), nil
}

// The printer's levels of a node.
const (
	lvClean    = iota // copied from the source
	lvPatch           // copied from the source around changed children
	lvGenerate        // generated
	lvScope           // a table reference the scope rewrites
)

type printer struct {
	t     *Tree
	src   string
	scope *Scope
	b     strings.Builder
	// memo holds the levels of the nodes that are not clean; a clean
	// node's level is computed again when asked (no allocation).
	memo map[Node]int
	kids collector
	// keep are the scoped references already inside their derived table.
	keep map[*AliasedTableExpr]bool
	// norm, when set, prints every node in the normal form (see Normal);
	// it points at normSet.
	norm    *Normal
	normSet Normal
	err     error
}

func (p *printer) level(n Node) int {
	if p.norm != nil {
		return lvGenerate
	}
	if v, ok := p.memo[n]; ok {
		return v
	}
	b := n.base()
	lv := lvClean
	switch {
	case b.gen || b.span.End <= b.span.Start:
		lv = lvGenerate
	case p.rewrites(n):
		lv = lvScope
	default:
		cursor := b.span.Start
		from, to := p.kids.children(n)
		for i := from; i < to && lv != lvGenerate; i++ {
			c := p.kids.out[i]
			cs := c.Span()
			if p.level(c) != lvClean {
				if cs.End <= cs.Start || cs.Start < cursor || cs.End > b.span.End {
					lv = lvGenerate
				} else {
					lv = lvPatch
				}
			}
			if cs.End > cs.Start {
				cursor = cs.End
			}
		}
		p.kids.drop(from)
	}
	if lv != lvClean {
		if p.memo == nil {
			p.memo = make(map[Node]int)
		}
		p.memo[n] = lv
	}
	return lv
}

// collector gathers the children of nodes on one stack, so that walking
// a tree allocates nothing per node.
type collector struct {
	w   walker
	out []Node
	// buf holds out between walks, in kidsPool.
	buf *[]Node
}

// kidsPool holds collectors' stacks between walks: a Bind or a Print
// grows its stack to the depth and fan-out of its tree, and the next walk
// takes it as it is instead of growing one of its own again.
var kidsPool = sync.Pool{New: func() any { return new([]Node) }}

func (c *collector) init() {
	c.buf = kidsPool.Get().(*[]Node)
	c.out = (*c.buf)[:0]
	c.w.f = func(n Node) Node {
		c.out = append(c.out, n)
		return n
	}
}

// release gives the stack back to kidsPool, holding no node.
func (c *collector) release() {
	clear(c.out[:cap(c.out)])
	*c.buf = c.out[:0]
	kidsPool.Put(c.buf)
	c.buf, c.out = nil, nil
}

// children pushes the children of n and returns where they stand in out.
func (c *collector) children(n Node) (from, to int) {
	from = len(c.out)
	n.each(&c.w)
	return from, len(c.out)
}

// drop pops the children pushed from index from on.
func (c *collector) drop(from int) { c.out = c.out[:from] }

// rewrites reports whether the scope rewrites n: a reference to a bound
// table, wrapped or respelled.
func (p *printer) rewrites(n Node) bool {
	switch v := n.(type) {
	case *AliasedTableExpr:
		return v.Table.Scoped() && !p.keep[v]
	case *TableName:
		return v.table != nil && !v.table.Scoped() && p.spelled(v) != p.src[v.span.Start:v.span.End]
	}
	return false
}

func (p *printer) print(n Node) {
	if p.err != nil {
		return
	}
	if p.norm != nil {
		p.normal(n)
		return
	}
	switch p.level(n) {
	case lvClean:
		s := n.Span()
		p.b.WriteString(p.src[s.Start:s.End])
	case lvPatch:
		s := n.Span()
		cursor := s.Start
		from, to := p.kids.children(n)
		for i := from; i < to; i++ {
			c := p.kids.out[i]
			if p.level(c) != lvClean {
				cs := c.Span()
				p.b.WriteString(p.src[cursor:cs.Start])
				p.child(n, c)
				cursor = cs.End
			}
		}
		p.kids.drop(from)
		p.b.WriteString(p.src[cursor:s.End])
	case lvScope:
		switch v := n.(type) {
		case *AliasedTableExpr:
			p.derived(v)
			if e := v.span.End; p.level(v) == lvScope && v.span.End > v.span.Start && e < len(p.src) && sqltoken.IsWordByte(p.src[e]) {
				// The reference ended with a parenthesis the next word
				// touched; the alias that now ends it would merge with it.
				p.b.WriteByte(' ')
			}
		case *TableName:
			p.b.WriteString(p.spelled(v))
		}
	default:
		p.format(n)
	}
}

// child prints c, a changed child of n copied around: a generated
// operator is parenthesised where the operator around it binds tighter.
func (p *printer) child(n, c Node) {
	if p.level(c) == lvGenerate {
		if ce, ok := c.(Expr); ok {
			if ne, ok := n.(Expr); ok && precOf(ce) <= precOf(ne) && precOf(ne) < precAtom {
				p.b.WriteByte('(')
				p.print(c)
				p.b.WriteByte(')')
				return
			}
		}
	}
	p.print(c)
}

// precAtom is the binding power of a value that is not an operator.
const precAtom = 100

func precOf(e Expr) int {
	switch v := e.(type) {
	case *OrExpr:
		return precOr
	case *XorExpr:
		return precXor
	case *AndExpr:
		return precAnd
	case *NotExpr:
		return precNot
	case *ComparisonExpr, *RangeCond, *IsExpr:
		return precCompare
	case *BinaryExpr:
		switch v.Operator {
		case "+", "-":
			return precAdd
		case "*", "/", "%", "DIV", "MOD":
			return precMul
		case "^":
			return precPow
		case "AT TIME ZONE":
			return precAt
		case "&&":
			return precAnd
		}
		return precOther
	case *UnaryExpr:
		return precUnary
	case *LambdaExpr:
		return 0
	}
	return precAtom
}

func (p *printer) ws(s string) { p.b.WriteString(s) }

// sub prints e where an operand of binding power min stands.
func (p *printer) sub(e Expr, min int) {
	if precOf(e) < min {
		p.ws("(")
		p.print(e)
		p.ws(")")
		return
	}
	p.print(e)
}

func (p *printer) exprs(es []Expr) {
	for i, e := range es {
		if i > 0 {
			p.ws(", ")
		}
		p.print(e)
	}
}

func (p *printer) orders(os []*Order) {
	for i, o := range os {
		if i > 0 {
			p.ws(", ")
		}
		p.print(o)
	}
}

func (p *printer) idents(ids []Ident) {
	p.ws("(")
	for i, id := range ids {
		if i > 0 {
			p.ws(", ")
		}
		p.ident(id)
	}
	p.ws(")")
}

// ident writes a name as written, or quoted for the engine when a caller
// built it and it needs quotes.
func (p *printer) ident(id Ident) {
	if p.norm != nil {
		p.normIdent(id.Name)
		return
	}
	if id.Raw != "" {
		p.ws(id.Raw)
		return
	}
	p.ws(p.quote(id.Name))
}

func (p *printer) quote(name string) string {
	plain := name != "" && !clauseWords[lower(name)]
	for i := 0; i < len(name) && plain; i++ {
		c := name[i]
		plain = c == '_' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9'
	}
	if plain {
		return name
	}
	if p.t.Engine != nil {
		return p.t.Engine.QuoteIdent(name)
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func (p *printer) tableName(tn TableName) {
	for i, part := range tn.Parts {
		if i > 0 {
			p.ws(".")
		}
		p.ident(part)
	}
}

// tail prints the clauses after a query.
func (p *printer) tail(orders []*Order, limitBy *LimitBy, limit *Limit) {
	if len(orders) > 0 {
		p.ws(" ORDER BY ")
		p.orders(orders)
	}
	if limitBy != nil {
		p.ws(" ")
		p.print(limitBy)
	}
	if limit != nil {
		p.ws(" ")
		p.print(limit)
	}
}

func (p *printer) with(w *With) {
	if w != nil {
		p.print(w)
		p.ws(" ")
	}
}

// format writes the generated text of n.
func (p *printer) format(n Node) {
	switch v := n.(type) {
	case *Select:
		p.with(v.With)
		p.ws("SELECT ")
		if v.Distinct != "" {
			p.ws(v.Distinct + " ")
		}
		if v.DistinctOn != nil {
			p.ws("ON (")
			p.exprs(v.DistinctOn)
			p.ws(") ")
		}
		for i, s := range v.SelectExprs {
			if i > 0 {
				p.ws(", ")
			}
			p.print(s)
		}
		if len(v.SelectExprs) == 0 {
			p.ws("FROM ")
		}
		if len(v.From) > 0 {
			if len(v.SelectExprs) > 0 {
				p.ws(" FROM ")
			}
			for i, f := range v.From {
				if i > 0 {
					p.ws(", ")
				}
				p.print(f)
			}
		}
		p.clause(" PREWHERE ", v.PreWhere)
		p.clause(" WHERE ", v.Where)
		if len(v.GroupBy) > 0 {
			p.ws(" GROUP BY ")
			p.exprs(v.GroupBy)
		}
		if v.GroupByModifier != "" {
			p.ws(" " + v.GroupByModifier)
		}
		p.clause(" HAVING ", v.Having)
		for i, w := range v.Window {
			if i == 0 {
				p.ws(" WINDOW ")
			} else {
				p.ws(", ")
			}
			p.print(w)
		}
		p.clause(" QUALIFY ", v.Qualify)
		p.tail(v.OrderBy, v.LimitBy, v.Limit)
	case *Union:
		p.with(v.With)
		p.print(v.Left)
		p.ws(" " + v.Type + " ")
		p.print(v.Right)
		p.tail(v.OrderBy, v.LimitBy, v.Limit)
	case *ParenSelect:
		p.with(v.With)
		p.ws("(")
		p.print(v.Select)
		p.ws(")")
		p.tail(v.OrderBy, v.LimitBy, v.Limit)
	case *Values:
		p.ws("VALUES ")
		for i, r := range v.Rows {
			if i > 0 {
				p.ws(", ")
			}
			p.print(r)
		}
	case *With:
		p.ws("WITH ")
		if v.Recursive {
			p.ws("RECURSIVE ")
		}
		for i, c := range v.CTEs {
			if i > 0 {
				p.ws(", ")
			}
			p.print(c)
		}
	case *CommonTableExpr:
		if v.Subquery == nil {
			p.print(v.Expr)
			p.ws(" AS ")
			p.ident(v.Name)
			return
		}
		p.ident(v.Name)
		if v.Columns != nil {
			p.idents(v.Columns)
		}
		p.ws(" AS ")
		if v.Materialized != "" {
			p.ws(v.Materialized + " ")
		}
		p.print(v.Subquery)
	case *StarExpr:
		if !v.TableName.IsEmpty() {
			p.tableName(v.TableName)
			p.ws(".")
		}
		p.ws("*")
		if v.Except != nil {
			p.ws(" EXCEPT ")
			if v.ExceptStrict {
				p.ws("STRICT ")
			}
			p.ws("(")
			p.exprs(v.Except)
			p.ws(")")
		}
		if v.Replace != nil {
			p.ws(" REPLACE ")
			if v.ReplaceStrict {
				p.ws("STRICT ")
			}
			p.ws("(")
			for i, r := range v.Replace {
				if i > 0 {
					p.ws(", ")
				}
				p.print(r)
			}
			p.ws(")")
		}
	case *AliasedExpr:
		p.print(v.Expr)
		if !v.As.IsEmpty() {
			if v.HasAs || v.As.Raw == "" {
				p.ws(" AS ")
			} else {
				p.ws(" ")
			}
			p.ident(v.As)
		}
	case *TableName:
		if v.table != nil {
			p.ws(p.spelled(v))
			return
		}
		p.tableName(*v)
	case *AliasedTableExpr:
		p.tableExpr(v)
	case *JoinTableExpr:
		p.print(v.LeftExpr)
		p.ws(" " + v.Join + " ")
		p.print(v.RightExpr)
		if v.On != nil {
			p.ws(" ON ")
			p.print(v.On)
		}
		if v.Using != nil {
			p.ws(" USING ")
			p.idents(v.Using)
		}
	case *ArrayJoinExpr:
		for i, e := range v.Exprs {
			if i > 0 {
				p.ws(", ")
			}
			p.print(e)
		}
	case *ParenTableExpr:
		p.ws("(")
		for i, e := range v.Exprs {
			if i > 0 {
				p.ws(", ")
			}
			p.print(e)
		}
		p.ws(")")
	case *Subquery:
		p.ws("(")
		p.print(v.Select)
		p.ws(")")
	case *Order:
		p.print(v.Expr)
		if v.Direction != "" {
			p.ws(" " + v.Direction)
		}
		if v.Nulls != "" {
			p.ws(" " + v.Nulls)
		}
		if v.Fill != "" {
			// Printed from its expressions, never from the text as
			// written: they may hold a reference the scope rewrites.
			p.ws(" WITH FILL")
			for _, f := range []struct {
				kw string
				x  Expr
			}{{" FROM ", v.FillFrom}, {" TO ", v.FillTo}, {" STEP ", v.FillStep}} {
				if f.x != nil {
					p.ws(f.kw)
					p.print(f.x)
				}
			}
		}
	case *Limit:
		switch {
		case v.Form == "LIMIT,":
			p.ws("LIMIT ")
			p.print(v.Offset)
			p.ws(", ")
			p.print(v.Rowcount)
		case v.Form == "FETCH":
			sep := ""
			if v.Offset != nil {
				p.ws("OFFSET ")
				p.print(v.Offset)
				p.ws(" ROWS")
				sep = " "
			}
			if v.Rowcount != nil {
				p.ws(sep + "FETCH FIRST ")
				p.print(v.Rowcount)
				p.ws(" ROWS ONLY")
			}
		default:
			sep := ""
			if v.Rowcount != nil {
				p.ws("LIMIT ")
				p.print(v.Rowcount)
				sep = " "
			}
			if v.Offset != nil {
				p.ws(sep + "OFFSET ")
				p.print(v.Offset)
			}
		}
	case *LimitBy:
		p.ws("LIMIT ")
		if v.Offset != nil {
			p.print(v.Offset)
			p.ws(", ")
		}
		p.print(v.Rowcount)
		p.ws(" BY ")
		p.exprs(v.Exprs)
	case *NamedWindow:
		p.ident(v.Name)
		p.ws(" AS ")
		p.print(v.Spec)
	case *Over:
		p.ws("OVER ")
		if v.Spec != nil {
			p.print(v.Spec)
		} else {
			p.ident(v.Name)
		}
	case *WindowSpec:
		p.ws("(")
		sep := ""
		if !v.Name.IsEmpty() {
			p.ident(v.Name)
			sep = " "
		}
		if v.PartitionBy != nil {
			p.ws(sep + "PARTITION BY ")
			p.exprs(v.PartitionBy)
			sep = " "
		}
		if v.OrderBy != nil {
			p.ws(sep + "ORDER BY ")
			p.orders(v.OrderBy)
			sep = " "
		}
		if v.Frame != nil {
			p.ws(sep)
			p.print(v.Frame)
		}
		p.ws(")")
	case *Frame:
		p.ws(v.Unit + " ")
		if v.End != nil {
			p.ws("BETWEEN ")
			p.print(v.Start)
			p.ws(" AND ")
			p.print(v.End)
		} else {
			p.print(v.Start)
		}
		if v.Exclude != "" {
			p.ws(" " + v.Exclude)
		}
	case *FrameBound:
		if v.Expr != nil {
			p.print(v.Expr)
			p.ws(" ")
		}
		p.ws(v.Type)
	case *Literal:
		p.ws(v.Text)
	case *Placeholder:
		if v.Text != "" {
			p.ws(v.Text)
		} else {
			p.ws("{variables." + v.Name + "}")
		}
	case *BindMarker:
		p.ws(v.Text)
	case *ColName:
		if !v.Qualifier.IsEmpty() {
			p.tableName(v.Qualifier)
			p.ws(".")
		}
		p.ident(v.Name)
	case *ComparisonExpr:
		p.sub(v.Left, precCompare)
		p.ws(" " + v.Operator + " ")
		p.sub(v.Right, precCompare+1)
		if v.Escape != nil {
			p.ws(" ESCAPE ")
			p.sub(v.Escape, precCompare+1)
		}
	case *RangeCond:
		p.sub(v.Left, precCompare)
		p.ws(" " + v.Operator + " ")
		p.sub(v.From, precCompare+1)
		p.ws(" AND ")
		p.sub(v.To, precCompare+1)
	case *IsExpr:
		p.sub(v.Expr, precCompare)
		p.ws(" " + v.Operator)
	case *AndExpr:
		p.sub(v.Left, precAnd)
		p.ws(" AND ")
		p.sub(v.Right, precAnd+1)
	case *OrExpr:
		p.sub(v.Left, precOr)
		op := v.Operator
		if op == "" {
			op = "OR"
		}
		p.ws(" " + op + " ")
		p.sub(v.Right, precOr+1)
	case *XorExpr:
		p.sub(v.Left, precXor)
		p.ws(" XOR ")
		p.sub(v.Right, precXor+1)
	case *NotExpr:
		p.ws("NOT ")
		p.sub(v.Expr, precNot)
	case *ParenExpr:
		p.ws("(")
		p.print(v.Expr)
		p.ws(")")
	case *BinaryExpr:
		pr := precOf(v)
		p.sub(v.Left, pr)
		p.ws(" " + v.Operator + " ")
		p.sub(v.Right, pr+1)
	case *UnaryExpr:
		p.ws(v.Operator)
		if _, ok := v.Expr.(*UnaryExpr); ok || v.Operator == "BINARY" {
			p.ws(" ")
		}
		p.sub(v.Expr, precUnary)
	case *FuncExpr:
		p.funcExpr(v)
	case *ExistsExpr:
		p.ws("EXISTS ")
		p.print(v.Subquery)
	case *AnyExpr:
		p.ws(v.Quantifier)
		if _, ok := v.Expr.(*Subquery); ok {
			p.print(v.Expr)
		} else {
			p.ws("(")
			p.print(v.Expr)
			p.ws(")")
		}
	case *CaseExpr:
		p.ws("CASE")
		if v.Expr != nil {
			p.ws(" ")
			p.print(v.Expr)
		}
		for _, w := range v.Whens {
			p.ws(" ")
			p.print(w)
		}
		if v.Else != nil {
			p.ws(" ELSE ")
			p.print(v.Else)
		}
		p.ws(" END")
	case *When:
		p.ws("WHEN ")
		p.print(v.Cond)
		p.ws(" THEN ")
		p.print(v.Val)
	case *ConvertExpr:
		switch v.Form {
		case "::":
			p.sub(v.Expr, precAtom)
			p.ws("::" + v.Type)
		case "CONVERT":
			p.ws("CONVERT(")
			p.print(v.Expr)
			p.ws(", " + v.Type + ")")
		case "CONVERT USING":
			p.ws("CONVERT(")
			p.print(v.Expr)
			p.ws(" USING " + v.Type + ")")
		case "CAST,":
			p.ws("CAST(")
			p.print(v.Expr)
			p.ws(", " + v.Type + ")")
		default:
			form := v.Form
			if form == "" {
				form = "CAST"
			}
			p.ws(form + "(")
			p.print(v.Expr)
			p.ws(" AS " + v.Type + ")")
		}
	case *IntervalExpr:
		p.ws("INTERVAL ")
		p.sub(v.Expr, precAtom)
		if v.Unit != "" {
			p.ws(" " + v.Unit)
		}
	case *ExtractExpr:
		p.ws("EXTRACT(" + v.Unit + " FROM ")
		p.print(v.Expr)
		p.ws(")")
	case *CollateExpr:
		p.sub(v.Expr, precAtom)
		p.ws(" COLLATE " + v.Collation)
	case *ArrayExpr:
		if v.Keyword {
			p.ws("ARRAY")
		}
		p.ws("[")
		p.exprs(v.Exprs)
		p.ws("]")
	case *IndexExpr:
		p.sub(v.Expr, precAtom)
		if v.Dot {
			p.ws(".")
			p.print(v.Index)
			return
		}
		p.ws("[")
		p.print(v.Index)
		p.ws("]")
	case *ValTuple:
		p.ws("(")
		p.exprs(v.Exprs)
		p.ws(")")
	case *LambdaExpr:
		if len(v.Params) == 1 {
			p.ident(v.Params[0])
		} else {
			p.idents(v.Params)
		}
		p.ws(" -> ")
		p.print(v.Body)
	case *GroupingExpr:
		p.ws(v.Type + " (")
		p.exprs(v.Exprs)
		p.ws(")")
	}
}

func (p *printer) clause(kw string, e Expr) {
	if e != nil {
		p.ws(kw)
		p.print(e)
	}
}

func (p *printer) funcExpr(v *FuncExpr) {
	if !v.Qualifier.IsEmpty() {
		p.ident(v.Qualifier)
		p.ws(".")
	}
	p.ident(v.Name)
	if v.NoParens {
		return
	}
	if v.HasParams {
		p.ws("(")
		p.exprs(v.Params)
		p.ws(")")
	}
	p.ws("(")
	if v.Distinct {
		p.ws("DISTINCT ")
	}
	for i, e := range v.Exprs {
		kw := ""
		if i < len(v.Keywords) {
			kw = v.Keywords[i]
		}
		switch {
		case kw != "" && i > 0:
			p.ws(" " + kw + " ")
		case kw != "":
			p.ws(kw + " ")
		case i > 0:
			p.ws(", ")
		}
		p.print(e)
	}
	if v.OrderBy != nil {
		p.ws(" ORDER BY ")
		p.orders(v.OrderBy)
	}
	if v.Separator != nil {
		p.ws(" SEPARATOR ")
		p.print(v.Separator)
	}
	p.ws(")")
	if v.WithinGroup != nil {
		p.ws(" WITHIN GROUP (ORDER BY ")
		p.orders(v.WithinGroup)
		p.ws(")")
	}
	if v.Filter != nil {
		p.ws(" FILTER (WHERE ")
		p.print(v.Filter)
		p.ws(")")
	}
	if v.Over != nil {
		p.ws(" ")
		p.print(v.Over)
	}
}

// tableExpr writes a FROM item a caller built or changed.
func (p *printer) tableExpr(v *AliasedTableExpr) {
	if v.Table.Scoped() && !p.keep[v] {
		p.derived(v)
		return
	}
	if v.Lateral {
		p.ws("LATERAL ")
	}
	if v.Only {
		p.ws("ONLY ")
	}
	p.print(v.Expr)
	if v.WithOrdinality {
		p.ws(" WITH ORDINALITY")
	}
	aliasFirst := len(v.Suffixes) > 0 && v.AliasAt.End > v.AliasAt.Start && v.AliasAt.Start < v.Suffixes[0].Span.Start
	if !aliasFirst {
		p.suffixes(v)
	}
	p.alias(v)
	if aliasFirst {
		p.suffixes(v)
	}
}

func (p *printer) suffixes(v *AliasedTableExpr) {
	for _, s := range v.Suffixes {
		p.ws(" " + s.Text)
	}
}

func (p *printer) alias(v *AliasedTableExpr) {
	if v.As.IsEmpty() {
		return
	}
	if v.HasAs || v.As.Raw == "" {
		p.ws(" AS ")
	} else {
		p.ws(" ")
	}
	p.ident(v.As)
	if v.Columns != nil {
		p.columns(v)
	}
}

// columns writes the alias's column list, with the types of a column
// definition list.
func (p *printer) columns(v *AliasedTableExpr) {
	if v.ColumnTypes == nil {
		p.idents(v.Columns)
		return
	}
	p.ws("(")
	for i, id := range v.Columns {
		if i > 0 {
			p.ws(", ")
		}
		p.ident(id)
		if i < len(v.ColumnTypes) && v.ColumnTypes[i] != "" {
			p.ws(" " + v.ColumnTypes[i])
		}
	}
	p.ws(")")
}
