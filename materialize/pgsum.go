package materialize

import (
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// A read adds up the sums stored per bucket: sum("_a0"). On PostgreSQL
// the sum of an integer column is a bigint, and the sum of that bigint
// is a numeric, so an integer division or a remainder of a sum that
// inline divides bigints (sum(x) / 7 is 2) divides numerics in the read
// (2.5714285714285714). Such a query is refused on PostgreSQL: the
// stored table cannot tell the read the type the inline sum had.

// dividedSum returns the offset of the first / or % of nodes with a
// sum() on one side, when d's sum of sums widens (PostgreSQL); deep also counts the sums of
// subqueries (the subquery a nested plan reads is answered by re-summed
// sums too) and any / or %.
func dividedSum(d engine.Engine, deep bool, sumsIn []tree.Node, nodes ...tree.Node) (int, bool) {
	if !d.ResumWidens() {
		return 0, false
	}
	if deep {
		if !containsSum(true, sumsIn...) {
			return 0, false
		}
	}
	at := -1
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		if _, ok := n.(*tree.Subquery); ok && !deep {
			return false, nil
		}
		b, ok := n.(*tree.BinaryExpr)
		if !ok || (b.Operator != "/" && b.Operator != "%") {
			return true, nil
		}
		if deep || containsSum(false, b.Left, b.Right) {
			at = b.Span().Start
			return false, tree.ErrStop
		}
		return true, nil
	}, nodes...)
	return at, at >= 0
}

// containsSum reports whether a sum() aggregate occurs in nodes, outside
// a cast, or anywhere in them and their subqueries when deep.
func containsSum(deep bool, nodes ...tree.Node) bool {
	found := false
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		switch n.(type) {
		case *tree.Subquery, *tree.ConvertExpr:
			if !deep {
				return false, nil // a cast's type is the cast's
			}
		}
		if f, ok := n.(*tree.FuncExpr); ok && isAggregate(f) && strings.EqualFold(f.Name.Name, "sum") {
			found = true
			return false, tree.ErrStop
		}
		return true, nil
	}, nodes...)
	return found
}
