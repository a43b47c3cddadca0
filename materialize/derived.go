package materialize

import (
	"strings"

	"github.com/endpointkit/endpointkit/sql/tree"
)

// liftDerived moves the conditions of variables out of the subqueries in
// sel's FROM into sel's WHERE, where the subquery's rows are keyed by the
// compared column: the subquery selects the column as itself (under its
// name or an alias) and, when it aggregates, groups by it. Filtering the
// subquery's rows (its groups) by the column then selects the same rows
// as filtering its source rows: a group's rows all hold its key. A
// condition is moved only when it is AND-ed at the top of the subquery's
// WHERE and the subquery has no LIMIT (which picks rows before the filter
// would). What cannot be moved stays, and classify refuses it.
func liftDerived(sel *tree.Select) {
	for _, te := range sel.From {
		liftFrom(sel, te)
	}
}

func liftFrom(sel *tree.Select, te tree.TableExpr) {
	switch t := te.(type) {
	case *tree.JoinTableExpr:
		// Only inner joins: a LEFT join's right side filtered in WHERE
		// would drop the rows it keeps with NULLs.
		if j := joinWord[t.Join]; j == "JOIN" || t.Join == "STRAIGHT_JOIN" {
			liftFrom(sel, t.LeftExpr)
			liftFrom(sel, t.RightExpr)
		} else if j == "LEFT JOIN" {
			liftFrom(sel, t.LeftExpr)
		}
	case *tree.ParenTableExpr:
		if len(t.Exprs) == 1 {
			liftFrom(sel, t.Exprs[0])
		}
	case *tree.AliasedTableExpr:
		sub, ok := t.Expr.(*tree.Subquery)
		if !ok {
			return
		}
		inner, ok := sub.Select.(*tree.Select)
		if !ok {
			return
		}
		// A derived table of the derived table (a chain of CTEs) lifts
		// its conditions into this one's WHERE first.
		liftDerived(inner)
		if inner.Where == nil || inner.Limit != nil || inner.LimitBy != nil || t.As.IsEmpty() {
			return
		}
		var keep []tree.Expr
		for _, term := range andTerms(inner.Where) {
			if moved := liftTerm(inner, t.As, term); moved != nil {
				addWhere(sel, moved)
				continue
			}
			keep = append(keep, term)
		}
		inner.Where = andOf(keep)
	}
}

// liftTerm returns term written over the subquery's output (alias.name
// op value) when it compares a variable with a column the subquery is
// keyed by, else nil.
func liftTerm(inner *tree.Select, alias tree.Ident, term tree.Expr) tree.Expr {
	binds := findBinds(term)
	if len(binds) == 0 {
		return nil
	}
	c, ok := unparen(term).(*tree.ComparisonExpr)
	if !ok {
		return nil
	}
	if _, ok := rangeOps[c.Operator]; !ok && c.Operator != "IN" {
		return nil
	}
	col, ok := unparen(c.Left).(*tree.ColName)
	if !ok || len(findBinds(c.Right)) != len(binds) {
		return nil
	}
	name, ok := keyedOutput(inner, col)
	if !ok {
		return nil
	}
	return &tree.ComparisonExpr{Operator: c.Operator, Right: c.Right, Escape: c.Escape,
		Left: &tree.ColName{Name: tree.NewIdent(name), Qualifier: tree.TableName{Parts: []tree.Ident{alias}}}}
}

// keyedOutput returns the name under which inner outputs col as itself,
// when inner's rows are keyed by it: it does not aggregate, or it groups
// by col.
func keyedOutput(inner *tree.Select, col *tree.ColName) (string, bool) {
	name := ""
	for _, se := range inner.SelectExprs {
		ae, ok := se.(*tree.AliasedExpr)
		if !ok {
			continue
		}
		if c, ok := ae.Expr.(*tree.ColName); ok && sameColumn(inner, c, col) {
			name = c.Name.Name
			if !ae.As.IsEmpty() {
				name = ae.As.Name
			}
			break
		}
	}
	if name == "" {
		return "", false
	}
	// The output name must name that column alone.
	for _, se := range inner.SelectExprs {
		if ae, ok := se.(*tree.AliasedExpr); ok && !ae.As.IsEmpty() && strings.EqualFold(ae.As.Name, name) {
			if c, ok := ae.Expr.(*tree.ColName); !ok || !sameColumn(inner, c, col) {
				return "", false
			}
		}
	}
	aggregating := len(inner.GroupBy) > 0 || inner.Having != nil || hasAggregate(selectNodes(inner.SelectExprs)...)
	if !aggregating {
		return name, true
	}
	for _, g := range inner.GroupBy {
		if gc, ok := unparen(g).(*tree.ColName); ok && (sameColumn(inner, gc, col) || gc.Qualifier.IsEmpty() && strings.EqualFold(gc.Name.Name, name)) {
			return name, true
		}
	}
	return "", false
}

// sameColumn reports whether c and col, columns read in inner, are the
// same column: the same text, or the same name with one unqualified and
// the other qualified by the name of inner's only FROM item.
func sameColumn(inner *tree.Select, c, col *tree.ColName) bool {
	if canonical(c) == canonical(col) {
		return true
	}
	if !strings.EqualFold(c.Name.Name, col.Name.Name) {
		return false
	}
	only := func(q tree.TableName) bool {
		if len(q.Parts) != 1 || len(inner.From) != 1 {
			return false
		}
		t, ok := inner.From[0].(*tree.AliasedTableExpr)
		if !ok {
			return false
		}
		name := t.As.Name
		if tn, ok := t.Expr.(*tree.TableName); ok && name == "" {
			name = tn.Name().Name
		}
		return name != "" && strings.EqualFold(name, q.Parts[0].Name)
	}
	return c.Qualifier.IsEmpty() && only(col.Qualifier) || col.Qualifier.IsEmpty() && only(c.Qualifier)
}

// addWhere ANDs e to sel's WHERE.
func addWhere(sel *tree.Select, e tree.Expr) {
	if sel.Where == nil {
		sel.Where = e
		return
	}
	sel.Where = &tree.AndExpr{Left: sel.Where, Right: e}
}

// andOf is the AND of terms, nil for none.
func andOf(terms []tree.Expr) tree.Expr {
	var out tree.Expr
	for _, t := range terms {
		if _, ok := t.(*tree.OrExpr); ok {
			t = &tree.ParenExpr{Expr: t}
		}
		if out == nil {
			out = t
			continue
		}
		out = &tree.AndExpr{Left: out, Right: t}
	}
	return out
}
