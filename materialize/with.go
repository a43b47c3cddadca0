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
	ok, _ := inlineWithWhy(stmt)
	return ok
}

// withRule is what every refusal of a WITH clause ends with.
const withRule = "; a WITH query materializes when it is read exactly once, as a derived table would be"

// inlineWithWhy is inlineWith with the reason it reports false for a
// query that has a WITH clause, in words a user can act on.
func inlineWithWhy(stmt tree.SelectStatement) (bool, string) {
	sel, ok := stmt.(*tree.Select)
	if !ok || sel.With == nil {
		return false, ""
	}
	w := sel.With
	if w.Recursive {
		return false, "WITH RECURSIVE cannot be materialized" + withRule
	}
	ctes := map[string]*tree.CommonTableExpr{}
	for _, c := range w.CTEs {
		name := strings.ToLower(c.Name.Name)
		switch {
		case c.Subquery == nil:
			return false, "a WITH expression AS name cannot be materialized; write the expression where it is used" + withRule
		case c.Columns != nil:
			return false, fmt.Sprintf("the WITH query %s has a column list, which cannot be materialized; name the columns in its SELECT list (expr AS name)", c.Name.Name) + withRule
		case c.Materialized != "":
			return false, fmt.Sprintf("the WITH query %s is marked %s, which cannot be materialized; drop the marker", c.Name.Name, c.Materialized) + withRule
		case ctes[name] != nil:
			return false, fmt.Sprintf("two WITH queries are named %s", c.Name.Name) + withRule
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
		// A WITH inside could hide a name of this one.
		return false, "a WITH clause inside the query cannot be materialized; put its queries in the outer WITH" + withRule
	}
	for _, c := range w.CTEs {
		if n := len(refs[strings.ToLower(c.Name.Name)]); n != 1 {
			if n == 0 {
				return false, fmt.Sprintf("the WITH query %s is never read, which cannot be materialized; drop it", c.Name.Name) + withRule
			}
			return false, fmt.Sprintf("the WITH query %s is read %d times, which cannot be materialized; repeat it as a subquery in FROM at each place that reads it", c.Name.Name, n) + withRule
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
	return true, ""
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
		return "a window function (OVER) in a query that aggregates materializes when it reads the query's groups: name every SELECT item that is not a column (expr AS name), read only group keys and aggregates in the SELECT list and ORDER BY, and refer to no output alias in HAVING"
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
