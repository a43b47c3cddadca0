package materialize

import (
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/sql/tree"
)

// A window function over the groups of an aggregating query (a rolling
// sum of daily counts: sum(count(*)) OVER (ORDER BY day ROWS 6
// PRECEDING)) reads the query's groups, which a read answers exactly. The
// query is materialized as the query of those groups, its aggregates and
// group keys under generated names, and each read computes the windows,
// the SELECT list, ORDER BY and LIMIT over its answer (as nested.go does
// for a subquery), whatever the variables are compared with.

// windowPrefix starts the names of the groups query's columns.
const windowPrefix = "_w"

// windowsOverGroups splits sel, an aggregating query whose windows are
// all in its SELECT list, into the query of its groups (inner: its FROM,
// WHERE, GROUP BY and HAVING, selecting each aggregate and group key the
// SELECT list and ORDER BY read) and the query that computes sel over it
// (outer); false when sel is of another shape, or its SELECT list or
// ORDER BY reads a column that is not a group key.
//
// rows, when set, splits sel, a query that does not aggregate and has
// windows in its SELECT list, alike (see windowsOverRows): its rows are
// the inner query, which selects each column the SELECT list and ORDER
// BY read.
func windowsOverGroups(sel *tree.Select, rows ...bool) (outer, inner *tree.Select, ok bool) {
	overRows := len(rows) > 0 && rows[0]
	switch {
	case overRows:
		if len(sel.GroupBy) > 0 || sel.Having != nil || hasAggregate(selectNodes(sel.SelectExprs)...) || hasAggregate(orderNodes(sel.OrderBy)...) ||
			!hasNode(&tree.Select{SelectExprs: sel.SelectExprs}, isWindowCall) {
			return nil, nil, false
		}
	case len(sel.GroupBy) == 0 && !hasAggregate(selectNodes(sel.SelectExprs)...) || sel.Having != nil && readsAlias(sel, sel.Having):
		return nil, nil, false
	}
	if sel.Window != nil || sel.LimitBy != nil || sel.With != nil {
		return nil, nil, false
	}
	if hasPlaceholder(&tree.Select{SelectExprs: sel.SelectExprs, OrderBy: sel.OrderBy}) {
		// The outer query is computed over the read, where no variable
		// is bound; the variable is judged where it is (see atReadUse).
		return nil, nil, false
	}
	// A name of the query, a column's or a variable's, that could be read
	// as a generated one (ClickHouse reads aliases in WHERE).
	clash := false
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		switch x := n.(type) {
		case *tree.ColName:
			clash = clash || strings.HasPrefix(strings.ToLower(x.Name.Name), windowPrefix)
		case *tree.Placeholder:
			clash = clash || strings.HasPrefix(strings.ToLower(x.Name), windowPrefix)
		}
		return !clash, nil
	}, sel)
	if clash {
		return nil, nil, false
	}
	items := make([]*tree.AliasedExpr, len(sel.SelectExprs))
	for i, se := range sel.SelectExprs {
		ae, ok := se.(*tree.AliasedExpr)
		if !ok {
			return nil, nil, false
		}
		items[i] = ae
	}
	// The group keys, as expressions: a position or an output alias in
	// GROUP BY names the item's expression.
	var keys []tree.Expr
	for _, g := range sel.GroupBy {
		g = unparen(g)
		if v, ok := intLiteral(g); ok {
			n, _ := strconv.Atoi(v)
			if n < 1 || n > len(items) || hasWindow(items[n-1].Expr) {
				return nil, nil, false
			}
			g = items[n-1].Expr
		} else if c, ok := g.(*tree.ColName); ok && c.Qualifier.IsEmpty() {
			for _, it := range items {
				if !it.As.IsEmpty() && strings.EqualFold(it.As.Name, c.Name.Name) && !hasWindow(it.Expr) {
					g = it.Expr
					break
				}
			}
		}
		keys = append(keys, g)
	}
	keyIndex := map[string]int{}
	for i, k := range keys {
		keyIndex[canonical(unparen(k))] = i
	}
	in := &tree.Select{From: sel.From, Where: sel.Where, GroupBy: keys, Having: sel.Having}
	if overRows {
		// Every column read is a "key": the inner query selects the rows'
		// columns, and the windows are computed over them at read.
		for _, n := range append(selectNodes(sel.SelectExprs), orderNodes(sel.OrderBy)...) {
			if hasNode(n, func(n tree.Node) bool { _, ok := n.(*tree.Subquery); return ok }) {
				return nil, nil, false
			}
			for _, c := range columnsOf(n) {
				if _, seen := keyIndex[canonical(c)]; !seen {
					keyIndex[canonical(c)] = len(keyIndex)
				}
			}
		}
		in.GroupBy = nil
	}
	names := map[string]string{} // canonical text -> inner column
	replace := map[tree.Node]string{}
	mark := func(roots ...tree.Node) {
		_ = tree.Walk(func(n tree.Node) (bool, error) {
			e, isExpr := n.(tree.Expr)
			if !isExpr {
				return true, nil
			}
			if _, ok := n.(*tree.Subquery); ok {
				return false, nil
			}
			_, key := keyIndex[canonical(unparen(e))]
			if !isAggregate(e) && !key {
				return true, nil
			}
			canon := canonical(e)
			name, seen := names[canon]
			if !seen {
				name = windowPrefix + strconv.Itoa(len(in.SelectExprs))
				names[canon] = name
				in.SelectExprs = append(in.SelectExprs, &tree.AliasedExpr{Expr: e, As: tree.NewIdent(name)})
			}
			replace[n] = name
			return false, nil
		}, roots...)
	}
	mark(selectNodes(sel.SelectExprs)...)
	var order []*tree.Order
	for _, o := range sel.OrderBy {
		// A position or an output alias reads the outer query's item.
		if _, ok := intLiteral(o.Expr); ok {
			order = append(order, o)
			continue
		}
		if c, ok := o.Expr.(*tree.ColName); ok && c.Qualifier.IsEmpty() && aliased(items, c.Name.Name) {
			order = append(order, o)
			continue
		}
		mark(o)
		order = append(order, o)
	}
	if len(in.SelectExprs) == 0 {
		return nil, nil, false
	}
	// Every column the outer query reads is one of the groups query's:
	// checked before the rewrite, which changes sel's nodes in place.
	bare := false
	directOrder := func(c *tree.ColName) bool {
		for _, o := range order {
			if o.Expr == tree.Expr(c) {
				return true
			}
		}
		return false
	}
	roots := selectNodes(sel.SelectExprs)
	for _, o := range order {
		roots = append(roots, o)
	}
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		if _, ok := replace[n]; ok {
			return false, nil
		}
		switch x := n.(type) {
		case *tree.ColName:
			if !(x.Qualifier.IsEmpty() && aliased(items, x.Name.Name) && directOrder(x)) {
				bare = true
			}
		case *tree.Subquery:
			return false, nil
		}
		return !bare, nil
	}, roots...)
	if bare {
		return nil, nil, false
	}
	rewrite := func(e tree.Expr) (tree.Expr, bool) {
		out, err := tree.Rewrite(e, func(n tree.Node) tree.Node {
			if name, ok := replace[n]; ok {
				return &tree.ColName{Name: tree.NewIdent(name)}
			}
			return n
		})
		if err != nil {
			return nil, false
		}
		return out.(tree.Expr), true
	}
	out := &tree.Select{Distinct: sel.Distinct, Limit: sel.Limit,
		From: []tree.TableExpr{&tree.AliasedTableExpr{Expr: &tree.Subquery{Select: in}, As: tree.NewIdent(windowPrefix)}}}
	for _, it := range items {
		as := it.As
		if as.IsEmpty() {
			// The item's name is its text, which the outer query's
			// would not keep; a column keeps its name as an alias.
			c, ok := it.Expr.(*tree.ColName)
			if !ok {
				return nil, nil, false
			}
			as = tree.NewIdent(c.Name.Name)
		}
		e, ok := rewrite(it.Expr)
		if !ok {
			return nil, nil, false
		}
		out.SelectExprs = append(out.SelectExprs, &tree.AliasedExpr{Expr: e, As: as})
	}
	for _, o := range order {
		e, ok := rewrite(o.Expr)
		if !ok {
			return nil, nil, false
		}
		cp := *o
		cp.Expr = e
		out.OrderBy = append(out.OrderBy, &cp)
	}
	return out, in, true
}

// hasWindow reports whether e holds a window function.
func hasWindow(e tree.Expr) bool { return hasNode(e, isWindowCall) }

// isWindowCall reports whether n is a window function's call.
func isWindowCall(n tree.Node) bool { f, ok := n.(*tree.FuncExpr); return ok && f.Over != nil }

// windowsOverRows splits sel, a query that does not aggregate and has
// window functions in its SELECT list, into the query of its rows
// (inner: its FROM and WHERE, selecting each column its SELECT list and
// ORDER BY read) and the query that computes the windows, the SELECT list,
// ORDER BY and LIMIT over them (outer). The stored table holds the rows;
// a read answers them exactly, whatever the variables are compared with,
// and the windows are computed over that answer, as over the source's
// rows inline; false when sel is of another shape.
func windowsOverRows(sel *tree.Select) (outer, inner *tree.Select, ok bool) {
	return windowsOverGroups(sel, true)
}

// aliased reports whether name is the output alias of one of items.
func aliased(items []*tree.AliasedExpr, name string) bool {
	for _, it := range items {
		if !it.As.IsEmpty() && strings.EqualFold(it.As.Name, name) {
			return true
		}
	}
	return false
}

// readsAlias reports whether e reads an unqualified name that is an
// output alias of sel, which the groups query would not have.
func readsAlias(sel *tree.Select, e tree.Expr) bool {
	found := false
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		if c, ok := n.(*tree.ColName); ok && c.Qualifier.IsEmpty() {
			for _, se := range sel.SelectExprs {
				if ae, ok := se.(*tree.AliasedExpr); ok && !ae.As.IsEmpty() && strings.EqualFold(ae.As.Name, c.Name.Name) {
					found = true
				}
			}
		}
		return !found, nil
	}, e)
	return found
}

// windowInSubquery reports whether a window function of stmt is in a
// subquery (a derived table, or a WITH query once inlined).
func windowInSubquery(stmt tree.SelectStatement) bool {
	found := false
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		if s, ok := n.(*tree.Subquery); ok && hasNode(s, isWindowCall) {
			found = true
		}
		return !found, nil
	}, stmt)
	return found
}

// windowsInside refuses the windows of a query whose windows are not all
// in its outer SELECT list when one is left in sel, the query the stored
// table is built from, once the queries computed at read are set apart:
// a window computed when the table is built would be over rows that
// the variables do not select yet.
func windowsInside(query string, sel *tree.Select, fixed map[*tree.FuncExpr]bool, opts Options) *Reason {
	var left, kept *tree.FuncExpr
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		if f, ok := n.(*tree.FuncExpr); ok && f.Over != nil {
			if fixed[f] {
				kept = f
				return true, nil
			}
			left = f
			return false, tree.ErrStop
		}
		return true, nil
	}, sel)
	if left == nil && kept != nil && opts.TailColumn != "" {
		r := &Reason{Code: CodeUnsupportedQuery, Message: "a window function (OVER) in a subquery cannot be materialized with a live tail: " +
			"rows newer than the stored table change the window's values over the rows stored before them; materialize it without materialization_tail_column"}
		r.Line, r.Column = lineCol(query, kept.Span().Start)
		return r
	}
	if left == nil {
		return nil
	}
	r := &Reason{Code: CodeUnsupportedQuery, Message: "a window function (OVER) in a subquery or a WITH query materializes only where a read computes it: " +
		"over the rows or groups of the one subquery in FROM whose WHERE compares every variable, with nothing else (no join, no other table or subquery) beside it; " +
		"this one is over rows the variables do not select, or beside a join. Where the window is meant over the selected rows, compare the variables in the WHERE of the query it reads " +
		"(WITH w AS (SELECT ... WHERE t >= {variables.from}) SELECT ..., rank() OVER (...) FROM w), and join after the window"}
	r.Line, r.Column = lineCol(query, left.Span().Start)
	return r
}

// fixedWindows returns the window functions of sel that are in a
// subquery with no variable anywhere beneath it: their rows are the
// same whatever the variables' values, so a stored table computes them
// as a run does (without a live tail, whose newer rows would change
// them).
func fixedWindows(sel *tree.Select) map[*tree.FuncExpr]bool {
	var fixed map[*tree.FuncExpr]bool
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		sub, ok := n.(*tree.Subquery)
		if !ok {
			return true, nil
		}
		if hasNode(sub, isPlaceholder) {
			return true, nil // look for closed subqueries further in
		}
		_ = tree.Walk(func(n tree.Node) (bool, error) {
			if f, ok := n.(*tree.FuncExpr); ok && f.Over != nil {
				if fixed == nil {
					fixed = map[*tree.FuncExpr]bool{}
				}
				fixed[f] = true
			}
			return true, nil
		}, sub)
		return false, nil
	}, sel)
	return fixed
}

func isPlaceholder(n tree.Node) bool {
	_, ok := n.(*tree.Placeholder)
	return ok
}
