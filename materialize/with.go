package materialize

import (
	"fmt"
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

// windowsRefusal says why the window functions of sel, a query whose
// windows are all in its SELECT list (see outerWindowsOnly), cannot be
// computed when the stored table is built, "" when they can: sel does not
// aggregate, there is no live tail, and every variable is compared with =
// or IN to a column or row expression that every window's PARTITION BY
// holds. A read then keeps or drops each partition whole, and the value of
// a window over a partition is the same in the stored table as inline.
func windowsRefusal(sel *tree.Select, vars []Variable, uses [][]use, opts Options) string {
	const rule = "; a window function (OVER) materializes only when every variable is compared with = or IN to a key its PARTITION BY holds"
	if opts.TailColumn != "" {
		return "a window function (OVER) cannot be materialized with a live tail: newer rows would change the windows over stored rows; materialize it without materialization_tail_column"
	}
	if len(sel.GroupBy) > 0 || sel.Having != nil || sel.Distinct != "" ||
		hasAggregate(selectNodes(sel.SelectExprs)...) || hasAggregate(orderNodes(sel.OrderBy)...) {
		return "a window function (OVER) in a query that aggregates (GROUP BY, HAVING, DISTINCT or an aggregate) cannot be materialized: the stored table keeps parts of aggregates, not the rows a window reads"
	}
	var keys []string
	for i, v := range vars {
		if len(uses[i]) == 0 {
			return fmt.Sprintf("variable '%s' is not compared in the outer WHERE%s", v.Name, rule)
		}
		if v.ranged() {
			return fmt.Sprintf("variable '%s' is a range, and a window's value over the rows in a range depends on the rows outside it%s", v.Name, rule)
		}
		for _, u := range uses[i] {
			if u.group > 0 || u.shift != nil {
				return fmt.Sprintf("variable '%s' is under OR or moved by an interval%s", v.Name, rule)
			}
		}
		keys = append(keys, uses[i][0].canon)
	}
	why := ""
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		f, isCall := n.(*tree.FuncExpr)
		if !isCall || f.Over == nil {
			return why == "", nil
		}
		if f.Over.Spec == nil || f.Over.Spec.Frame != nil && f.Over.Spec.Frame.Unit == "GROUPS" {
			why = "a window function (OVER) over a named window or a GROUPS frame cannot be materialized; write its PARTITION BY in the OVER clause"
			return false, nil
		}
		held := map[string]bool{}
		for _, e := range f.Over.Spec.PartitionBy {
			held[canonical(unparen(e))] = true
		}
		for i, k := range keys {
			if !held[k] {
				why = fmt.Sprintf("variable '%s' is compared to %s, which the window's PARTITION BY does not hold%s", vars[i].Name, k, rule)
				return false, nil
			}
		}
		return true, nil
	}, selectNodes(sel.SelectExprs)...)
	return why
}
