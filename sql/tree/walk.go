package tree

import (
	"errors"
	"fmt"
)

// ErrStop, returned by a Walk visitor, ends the walk without error.
var ErrStop = errors.New("tree: stop walking")

// Walk calls visit on node and, when visit returns true, on its children,
// depth first, in the order they stand in the text. A visitor's error
// ends the walk and is returned (ErrStop ends it and Walk returns nil).
// Nil nodes are skipped.
func Walk(visit func(Node) (bool, error), nodes ...Node) error {
	var err error
	var w walker
	w.f = func(n Node) Node {
		if err != nil {
			return n
		}
		more, e := visit(n)
		if e != nil {
			err = e
			return n
		}
		if more {
			n.each(&w)
		}
		return n
	}
	for _, n := range nodes {
		if isNil(n) {
			continue
		}
		w.f(n)
		if err != nil {
			break
		}
	}
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// Rewrite replaces nodes under root, depth first: replace is called on
// every node after its children were rewritten, and returns the node to
// stand in its place (itself to keep it). A replacement that a caller
// built (the zero Span) takes the place of the node it replaces in the
// text: the printer generates its text there and copies the rest. Rewrite
// returns the new root, or an error when a replacement cannot stand where
// the node stood (an expression where a table belongs).
func Rewrite(root Node, replace func(Node) Node) (Node, error) {
	var w walker
	w.f = func(n Node) Node {
		n.each(&w)
		r := replace(n)
		if isNil(r) {
			w.fail(n, "a node cannot be replaced by nothing")
			return n
		}
		if r != n {
			b := r.base()
			if b.span == (Span{}) {
				b.span = n.Span()
				b.gen = true
			}
		}
		return r
	}
	if isNil(root) {
		return root, nil
	}
	out := w.f(root)
	if w.err != nil {
		return root, w.err
	}
	return out, nil
}

// MarkChanged tells the printer that a caller changed n's fields in
// place: it generates n's text instead of copying it from the source.
func MarkChanged(n Node) { n.base().gen = true }

// walker carries a walk's function into the nodes' each methods and
// records a replacement of the wrong kind.
type walker struct {
	f   func(Node) Node
	err error
}

func (w *walker) fail(n Node, what string) {
	if w.err == nil {
		w.err = fmt.Errorf("tree: %s (the node read at byte %d)", what, n.Span().Start)
	}
}

func isNil(n Node) bool {
	if n == nil {
		return true
	}
	switch v := n.(type) {
	case *Select:
		return v == nil
	case *Union:
		return v == nil
	case *ParenSelect:
		return v == nil
	case *Values:
		return v == nil
	case *Subquery:
		return v == nil
	case *With:
		return v == nil
	case *Over:
		return v == nil
	case *WindowSpec:
		return v == nil
	case *Frame:
		return v == nil
	case *FrameBound:
		return v == nil
	case *Limit:
		return v == nil
	case *LimitBy:
		return v == nil
	}
	return false
}

func (w *walker) expr(e Expr) Expr {
	if e == nil {
		return nil
	}
	r := w.f(e)
	x, ok := r.(Expr)
	if !ok {
		w.fail(e, fmt.Sprintf("a %T cannot stand where an expression does", r))
		return e
	}
	return x
}

func (w *walker) exprs(es []Expr) {
	for i := range es {
		es[i] = w.expr(es[i])
	}
}

func (w *walker) sel(s SelectStatement) SelectStatement {
	if isNil(s) {
		return s
	}
	r := w.f(s)
	x, ok := r.(SelectStatement)
	if !ok {
		w.fail(s, fmt.Sprintf("a %T cannot stand where a query does", r))
		return s
	}
	return x
}

func (w *walker) table(t TableExpr) TableExpr {
	if t == nil {
		return nil
	}
	r := w.f(t)
	x, ok := r.(TableExpr)
	if !ok {
		w.fail(t, fmt.Sprintf("a %T cannot stand where a FROM item does", r))
		return t
	}
	return x
}

func (w *walker) tables(ts []TableExpr) {
	for i := range ts {
		ts[i] = w.table(ts[i])
	}
}

func (w *walker) subquery(s *Subquery) *Subquery {
	if s == nil {
		return nil
	}
	r := w.f(s)
	x, ok := r.(*Subquery)
	if !ok {
		w.fail(s, fmt.Sprintf("a %T cannot stand where a subquery does", r))
		return s
	}
	return x
}

// same calls f on a node whose place takes only its own kind (an ORDER
// BY item, a WITH clause): a replacement must be of the same type.
func same[T Node](w *walker, n T) T {
	if isNil(n) {
		return n
	}
	r := w.f(n)
	x, ok := r.(T)
	if !ok {
		w.fail(n, fmt.Sprintf("a %T cannot stand where a %T does", r, n))
		return n
	}
	return x
}

func sameAll[T Node](w *walker, ns []T) {
	for i := range ns {
		ns[i] = same(w, ns[i])
	}
}

func (n *Select) each(w *walker) {
	n.With = same(w, n.With)
	w.exprs(n.DistinctOn)
	for i := range n.SelectExprs {
		r := w.f(n.SelectExprs[i])
		x, ok := r.(SelectExpr)
		if !ok {
			w.fail(n.SelectExprs[i], fmt.Sprintf("a %T cannot stand in a SELECT list", r))
			continue
		}
		n.SelectExprs[i] = x
	}
	w.tables(n.From)
	n.PreWhere = w.expr(n.PreWhere)
	n.Where = w.expr(n.Where)
	w.exprs(n.GroupBy)
	n.Having = w.expr(n.Having)
	sameAll(w, n.Window)
	n.Qualify = w.expr(n.Qualify)
	sameAll(w, n.OrderBy)
	n.LimitBy = same(w, n.LimitBy)
	n.Limit = same(w, n.Limit)
}

func (n *Union) each(w *walker) {
	n.With = same(w, n.With)
	n.Left = w.sel(n.Left)
	n.Right = w.sel(n.Right)
	sameAll(w, n.OrderBy)
	n.LimitBy = same(w, n.LimitBy)
	n.Limit = same(w, n.Limit)
}

func (n *ParenSelect) each(w *walker) {
	n.With = same(w, n.With)
	n.Select = w.sel(n.Select)
	sameAll(w, n.OrderBy)
	n.LimitBy = same(w, n.LimitBy)
	n.Limit = same(w, n.Limit)
}

func (n *With) each(w *walker)   { sameAll(w, n.CTEs) }
func (n *Values) each(w *walker) { sameAll(w, n.Rows) }

func (n *CommonTableExpr) each(w *walker) {
	n.Expr = w.expr(n.Expr)
	n.Subquery = w.subquery(n.Subquery)
}

func (n *StarExpr) each(w *walker) {
	w.exprs(n.Except)
	sameAll(w, n.Replace)
}

func (n *AliasedExpr) each(w *walker) { n.Expr = w.expr(n.Expr) }

func (n *TableName) each(*walker) {}

func (n *AliasedTableExpr) each(w *walker) {
	if isNil(n.Expr) {
		return
	}
	r := w.f(n.Expr)
	x, ok := r.(SimpleTableExpr)
	if !ok {
		w.fail(n.Expr, fmt.Sprintf("a %T cannot stand where a table does", r))
		return
	}
	n.Expr = x
}

func (n *JoinTableExpr) each(w *walker) {
	n.LeftExpr = w.table(n.LeftExpr)
	n.RightExpr = w.table(n.RightExpr)
	n.On = w.expr(n.On)
}

func (n *ArrayJoinExpr) each(w *walker)  { sameAll(w, n.Exprs) }
func (n *ParenTableExpr) each(w *walker) { w.tables(n.Exprs) }
func (n *Subquery) each(w *walker)       { n.Select = w.sel(n.Select) }
func (n *Order) each(w *walker) {
	n.Expr = w.expr(n.Expr)
	n.FillFrom = w.expr(n.FillFrom)
	n.FillTo = w.expr(n.FillTo)
	n.FillStep = w.expr(n.FillStep)
}

func (n *Limit) each(w *walker) {
	if n.Form == "LIMIT," || n.Form == "FETCH" {
		n.Offset = w.expr(n.Offset)
		n.Rowcount = w.expr(n.Rowcount)
		return
	}
	if n.Offset != nil && n.Rowcount != nil && n.Offset.Span().Start < n.Rowcount.Span().Start {
		n.Offset = w.expr(n.Offset)
		n.Rowcount = w.expr(n.Rowcount)
		return
	}
	n.Rowcount = w.expr(n.Rowcount)
	n.Offset = w.expr(n.Offset)
}

func (n *LimitBy) each(w *walker) {
	n.Rowcount = w.expr(n.Rowcount)
	n.Offset = w.expr(n.Offset)
	w.exprs(n.Exprs)
}

func (n *NamedWindow) each(w *walker) { n.Spec = same(w, n.Spec) }
func (n *Over) each(w *walker)        { n.Spec = same(w, n.Spec) }

func (n *WindowSpec) each(w *walker) {
	w.exprs(n.PartitionBy)
	sameAll(w, n.OrderBy)
	n.Frame = same(w, n.Frame)
}

func (n *Frame) each(w *walker) {
	n.Start = same(w, n.Start)
	n.End = same(w, n.End)
}

func (n *FrameBound) each(w *walker) { n.Expr = w.expr(n.Expr) }

func (n *Literal) each(*walker)     {}
func (n *Placeholder) each(*walker) {}
func (n *BindMarker) each(*walker)  {}
func (n *ColName) each(*walker)     {}

func (n *ComparisonExpr) each(w *walker) {
	n.Left = w.expr(n.Left)
	n.Right = w.expr(n.Right)
	n.Escape = w.expr(n.Escape)
}

func (n *RangeCond) each(w *walker) {
	n.Left = w.expr(n.Left)
	n.From = w.expr(n.From)
	n.To = w.expr(n.To)
}

func (n *IsExpr) each(w *walker) { n.Expr = w.expr(n.Expr) }

func (n *AndExpr) each(w *walker) {
	n.Left = w.expr(n.Left)
	n.Right = w.expr(n.Right)
}

func (n *OrExpr) each(w *walker) {
	n.Left = w.expr(n.Left)
	n.Right = w.expr(n.Right)
}

func (n *XorExpr) each(w *walker) {
	n.Left = w.expr(n.Left)
	n.Right = w.expr(n.Right)
}

func (n *NotExpr) each(w *walker)   { n.Expr = w.expr(n.Expr) }
func (n *ParenExpr) each(w *walker) { n.Expr = w.expr(n.Expr) }

func (n *BinaryExpr) each(w *walker) {
	n.Left = w.expr(n.Left)
	n.Right = w.expr(n.Right)
}

func (n *UnaryExpr) each(w *walker) { n.Expr = w.expr(n.Expr) }

func (n *FuncExpr) each(w *walker) {
	w.exprs(n.Params)
	w.exprs(n.Exprs)
	sameAll(w, n.OrderBy)
	n.Separator = w.expr(n.Separator)
	sameAll(w, n.WithinGroup)
	n.Filter = w.expr(n.Filter)
	n.Over = same(w, n.Over)
}

func (n *ExistsExpr) each(w *walker) { n.Subquery = w.subquery(n.Subquery) }
func (n *AnyExpr) each(w *walker)    { n.Expr = w.expr(n.Expr) }

func (n *CaseExpr) each(w *walker) {
	n.Expr = w.expr(n.Expr)
	sameAll(w, n.Whens)
	n.Else = w.expr(n.Else)
}

func (n *When) each(w *walker) {
	n.Cond = w.expr(n.Cond)
	n.Val = w.expr(n.Val)
}

func (n *ConvertExpr) each(w *walker)  { n.Expr = w.expr(n.Expr) }
func (n *IntervalExpr) each(w *walker) { n.Expr = w.expr(n.Expr) }
func (n *ExtractExpr) each(w *walker)  { n.Expr = w.expr(n.Expr) }
func (n *CollateExpr) each(w *walker)  { n.Expr = w.expr(n.Expr) }
func (n *ArrayExpr) each(w *walker)    { w.exprs(n.Exprs) }

func (n *IndexExpr) each(w *walker) {
	n.Expr = w.expr(n.Expr)
	n.Index = w.expr(n.Index)
}

func (n *ValTuple) each(w *walker)     { w.exprs(n.Exprs) }
func (n *LambdaExpr) each(w *walker)   { n.Body = w.expr(n.Body) }
func (n *GroupingExpr) each(w *walker) { w.exprs(n.Exprs) }
