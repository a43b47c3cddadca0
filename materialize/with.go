package materialize

import (
	"strings"

	"github.com/endpointkit/endpointkit/sql/tree"
)

// inlineWith puts each query of sel's WITH clause where it is read, as a
// derived table under the name it is read by, and drops the clause: a
// non-recursive CTE read once is that derived table. The conditions of
// variables in a CTE's WHERE are then carried out to the outer WHERE as
// a derived table's are (see liftDerived), level by level through a
// chain of CTEs, and only where the CTE's rows are keyed by the compared
// column, which keeps reads exact. It reports false, and changes nothing,
// when a CTE cannot stand as a derived table: WITH RECURSIVE, a column
// list, [NOT] MATERIALIZED, ClickHouse's WITH expression AS name, or a
// CTE read other than exactly once.
func inlineWith(stmt tree.SelectStatement) bool {
	sel, ok := stmt.(*tree.Select)
	if !ok || sel.With == nil {
		return false
	}
	w := sel.With
	if w.Recursive {
		return false
	}
	ctes := map[string]*tree.CommonTableExpr{}
	for _, c := range w.CTEs {
		name := strings.ToLower(c.Name.Name)
		if c.Subquery == nil || c.Columns != nil || c.Materialized != "" || ctes[name] != nil {
			return false
		}
		ctes[name] = c
	}
	refs := map[string][]*tree.AliasedTableExpr{}
	nested := false
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		switch x := n.(type) {
		case *tree.With:
			nested = nested || x != w
		case *tree.AliasedTableExpr:
			if tn, ok := x.Expr.(*tree.TableName); ok && len(tn.Parts) == 1 {
				name := strings.ToLower(tn.Parts[0].Name)
				if ctes[name] != nil {
					refs[name] = append(refs[name], x)
				}
			}
		}
		return true, nil
	}, sel)
	if nested {
		return false // a WITH inside could hide a name of this one
	}
	for name := range ctes {
		if len(refs[name]) != 1 {
			return false
		}
	}
	for name, c := range ctes {
		ref := refs[name][0]
		ref.Expr = c.Subquery
		if ref.As.IsEmpty() {
			ref.As = tree.NewIdent(c.Name.Name)
		}
	}
	sel.With = nil
	return true
}

// windowsOK reports whether the window functions of sel, a query whose
// windows are all in its SELECT list (see outerWindowsOnly), can be
// computed when the stored table is built: sel does not aggregate, there
// is no live tail, and every variable is compared with = or IN to a
// column or row expression that every window's PARTITION BY holds. A
// read then keeps or drops each partition whole, and the value of a
// window over a partition is the same in the stored table as inline.
func windowsOK(sel *tree.Select, vars []Variable, uses [][]use, opts Options) bool {
	if opts.TailColumn != "" || len(sel.GroupBy) > 0 || sel.Having != nil || sel.Distinct != "" ||
		hasAggregate(selectNodes(sel.SelectExprs)...) || hasAggregate(orderNodes(sel.OrderBy)...) {
		return false
	}
	var keys []string
	for i, v := range vars {
		if v.ranged() || len(uses[i]) == 0 {
			return false
		}
		for _, u := range uses[i] {
			if u.group > 0 || u.shift != nil {
				return false
			}
		}
		keys = append(keys, uses[i][0].canon)
	}
	ok := true
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		f, isCall := n.(*tree.FuncExpr)
		if !isCall || f.Over == nil {
			return ok, nil
		}
		if f.Over.Spec == nil || f.Over.Spec.Frame != nil && f.Over.Spec.Frame.Unit == "GROUPS" {
			ok = false
			return false, nil
		}
		held := map[string]bool{}
		for _, e := range f.Over.Spec.PartitionBy {
			held[canonical(unparen(e))] = true
		}
		for _, k := range keys {
			ok = ok && held[k]
		}
		return ok, nil
	}, selectNodes(sel.SelectExprs)...)
	return ok
}
