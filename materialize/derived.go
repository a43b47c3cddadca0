package materialize

import (
	"strings"

	"github.com/xwb1989/sqlparser"
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
func liftDerived(sel *sqlparser.Select) {
	for _, te := range sel.From {
		liftFrom(sel, te)
	}
}

func liftFrom(sel *sqlparser.Select, te sqlparser.TableExpr) {
	switch t := te.(type) {
	case *sqlparser.JoinTableExpr:
		// Only inner joins: a LEFT join's right side filtered in WHERE
		// would drop the rows it keeps with NULLs.
		if t.Join == sqlparser.JoinStr || t.Join == sqlparser.StraightJoinStr {
			liftFrom(sel, t.LeftExpr)
			liftFrom(sel, t.RightExpr)
		} else if t.Join == sqlparser.LeftJoinStr {
			liftFrom(sel, t.LeftExpr)
		}
	case *sqlparser.ParenTableExpr:
		if len(t.Exprs) == 1 {
			liftFrom(sel, t.Exprs[0])
		}
	case *sqlparser.AliasedTableExpr:
		sub, ok := t.Expr.(*sqlparser.Subquery)
		if !ok {
			return
		}
		inner, ok := sub.Select.(*sqlparser.Select)
		if !ok || inner.Where == nil || inner.Limit != nil || t.As.IsEmpty() {
			return
		}
		var keep []sqlparser.Expr
		for _, term := range andTerms(inner.Where.Expr) {
			if moved := liftTerm(inner, t.As, term); moved != nil {
				addWhere(sel, moved)
				continue
			}
			keep = append(keep, term)
		}
		inner.Where.Expr = andOf(keep)
		if inner.Where.Expr == nil {
			inner.Where = nil
		}
	}
}

// liftTerm returns term written over the subquery's output (alias.name
// op value) when it compares a variable with a column the subquery is
// keyed by, else nil.
func liftTerm(inner *sqlparser.Select, alias sqlparser.TableIdent, term sqlparser.Expr) sqlparser.Expr {
	binds := findBinds(term)
	if len(binds) == 0 {
		return nil
	}
	c, ok := unparen(term).(*sqlparser.ComparisonExpr)
	if !ok {
		return nil
	}
	if _, ok := rangeOps[c.Operator]; !ok && c.Operator != sqlparser.InStr {
		return nil
	}
	col, ok := unparen(c.Left).(*sqlparser.ColName)
	if !ok || len(findBinds(c.Right)) != len(binds) {
		return nil
	}
	name, ok := keyedOutput(inner, col)
	if !ok {
		return nil
	}
	out := *c
	out.Left = &sqlparser.ColName{Name: sqlparser.NewColIdent(name), Qualifier: sqlparser.TableName{Name: alias}}
	return &out
}

// keyedOutput returns the name under which inner outputs col as itself,
// when inner's rows are keyed by it: it does not aggregate, or it groups
// by col.
func keyedOutput(inner *sqlparser.Select, col *sqlparser.ColName) (string, bool) {
	canon := canonical(col)
	name := ""
	for _, se := range inner.SelectExprs {
		ae, ok := se.(*sqlparser.AliasedExpr)
		if !ok {
			continue
		}
		if c, ok := ae.Expr.(*sqlparser.ColName); ok && canonical(c) == canon {
			name = c.Name.String()
			if !ae.As.IsEmpty() {
				name = ae.As.String()
			}
			break
		}
	}
	if name == "" {
		return "", false
	}
	// The output name must name that column alone.
	for _, se := range inner.SelectExprs {
		if ae, ok := se.(*sqlparser.AliasedExpr); ok && !ae.As.IsEmpty() && strings.EqualFold(ae.As.String(), name) {
			if c, ok := ae.Expr.(*sqlparser.ColName); !ok || canonical(c) != canon {
				return "", false
			}
		}
	}
	aggregating := len(inner.GroupBy) > 0 || inner.Having != nil || hasAggregate(inner.SelectExprs)
	if !aggregating {
		return name, true
	}
	for _, g := range inner.GroupBy {
		if gc, ok := unparen(g).(*sqlparser.ColName); ok && (canonical(gc) == canon || gc.Qualifier.IsEmpty() && strings.EqualFold(gc.Name.String(), name)) {
			return name, true
		}
	}
	return "", false
}

// addWhere ANDs e to sel's WHERE.
func addWhere(sel *sqlparser.Select, e sqlparser.Expr) {
	if sel.Where == nil {
		sel.Where = &sqlparser.Where{Type: sqlparser.WhereStr, Expr: e}
		return
	}
	sel.Where.Expr = &sqlparser.AndExpr{Left: sel.Where.Expr, Right: e}
}

// andOf is the AND of terms, nil for none.
func andOf(terms []sqlparser.Expr) sqlparser.Expr {
	var out sqlparser.Expr
	for _, t := range terms {
		if _, ok := t.(*sqlparser.OrExpr); ok {
			t = &sqlparser.ParenExpr{Expr: t}
		}
		if out == nil {
			out = t
			continue
		}
		out = &sqlparser.AndExpr{Left: out, Right: t}
	}
	return out
}
