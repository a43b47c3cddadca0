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
		// A LEFT (RIGHT) join keeps every row of its left (right) side:
		// a condition on a column of that side means the same in WHERE.
		switch j := joinWord[t.Join]; {
		case j == "JOIN" || t.Join == "STRAIGHT_JOIN":
			liftFrom(sel, t.LeftExpr)
			liftFrom(sel, t.RightExpr)
		case j == "LEFT JOIN":
			liftFrom(sel, t.LeftExpr)
		case j == "RIGHT JOIN":
			liftFrom(sel, t.RightExpr)
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
		if u, ok := sub.Select.(*tree.Union); ok {
			liftUnion(sel, t.As, u)
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
	name, _, ok := keyedItem(inner, col)
	return name, ok
}

// keyedItem is keyedOutput with the index of the SELECT item that
// outputs col.
func keyedItem(inner *tree.Select, col *tree.ColName) (string, int, bool) {
	if hasNode(&tree.Select{SelectExprs: inner.SelectExprs, OrderBy: inner.OrderBy}, isWindowCall) {
		// A window's value over the subquery's rows depends on the rows
		// a condition on its output would drop after it.
		return "", -1, false
	}
	name, at := "", -1
	for i, se := range inner.SelectExprs {
		ae, ok := se.(*tree.AliasedExpr)
		if !ok {
			continue
		}
		if c, ok := ae.Expr.(*tree.ColName); ok && sameColumn(inner, c, col) {
			name, at = c.Name.Name, i
			if !ae.As.IsEmpty() {
				name = ae.As.Name
			}
			break
		}
	}
	if name == "" {
		return "", -1, false
	}
	// The output name must name that column alone.
	for _, se := range inner.SelectExprs {
		if ae, ok := se.(*tree.AliasedExpr); ok && !ae.As.IsEmpty() && strings.EqualFold(ae.As.Name, name) {
			if c, ok := ae.Expr.(*tree.ColName); !ok || !sameColumn(inner, c, col) {
				return "", -1, false
			}
		}
	}
	aggregating := len(inner.GroupBy) > 0 || inner.Having != nil || hasAggregate(selectNodes(inner.SelectExprs)...)
	if !aggregating {
		return name, at, true
	}
	for _, g := range inner.GroupBy {
		if gc, ok := unparen(g).(*tree.ColName); ok && (sameColumn(inner, gc, col) || gc.Qualifier.IsEmpty() && strings.EqualFold(gc.Name.Name, name)) {
			return name, at, true
		}
	}
	return "", -1, false
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

// liftUnion moves the conditions of variables out of the branches of u, a
// UNION [ALL] read as the derived table alias, into sel's WHERE: a
// condition every branch holds, comparing the same variable as itself by
// the same operator with the column each branch outputs at one position,
// as itself and keyed by it (see keyedOutput). Each branch filtered by it
// and then united gives the rows of the union filtered by it (a row
// UNION DISTINCT drops equals one kept, column for column). Each branch's
// condition becomes one term of sel's WHERE over the union's column
// (named by the first branch), so that every placeholder is still read
// once; the terms are the same condition. Nothing moves when a branch is
// not a plain SELECT, the union or a branch has a LIMIT, or a branch
// lacks the condition.
func liftUnion(sel *tree.Select, alias tree.Ident, u *tree.Union) {
	branches, ok := unionBranches(u)
	if !ok || alias.IsEmpty() {
		return
	}
	for _, b := range branches {
		liftDerived(b)
		if b.Where == nil || b.Limit != nil || b.LimitBy != nil {
			return
		}
		for _, se := range b.SelectExprs {
			if _, ok := se.(*tree.AliasedExpr); !ok {
				return // a * makes positions the engine's
			}
		}
	}
	terms := make([][]tree.Expr, len(branches))
	for i, b := range branches {
		terms[i] = andTerms(b.Where)
	}
	taken := make([][]bool, len(branches))
	for i := range branches {
		taken[i] = make([]bool, len(terms[i]))
	}
	var lifted []tree.Expr
	for k, t0 := range terms[0] {
		c0, at0, ok := unionTerm(branches[0], t0)
		if !ok {
			continue
		}
		name := outputName(branches[0], at0)
		match := []int{k}
		for i := 1; i < len(branches); i++ {
			found := -1
			for j, ti := range terms[i] {
				ci, at, ok := unionTerm(branches[i], ti)
				if ok && !taken[i][j] && at == at0 && ci.Operator == c0.Operator && variableOf(ci.Right) == variableOf(c0.Right) {
					found = j
					break
				}
			}
			if found < 0 {
				match = nil
				break
			}
			match = append(match, found)
		}
		if match == nil {
			continue
		}
		for i, j := range match {
			taken[i][j] = true
			c := unparen(terms[i][j]).(*tree.ComparisonExpr)
			lifted = append(lifted, &tree.ComparisonExpr{Operator: c.Operator, Right: c.Right,
				Left: &tree.ColName{Name: tree.NewIdent(name), Qualifier: tree.TableName{Parts: []tree.Ident{alias}}}})
		}
	}
	if len(lifted) == 0 {
		return
	}
	for i, b := range branches {
		var keep []tree.Expr
		for j, t := range terms[i] {
			if !taken[i][j] {
				keep = append(keep, t)
			}
		}
		b.Where = andOf(keep)
	}
	for _, e := range lifted {
		addWhere(sel, e)
	}
}

// unionBranches returns the SELECTs u unites, through nested UNION and
// UNION ALL and parentheses; false when one is another operation or has
// an ORDER BY, LIMIT or WITH of its own at the union's level.
func unionBranches(s tree.SelectStatement) ([]*tree.Select, bool) {
	switch x := s.(type) {
	case *tree.Select:
		return []*tree.Select{x}, x.With == nil
	case *tree.ParenSelect:
		if x.With != nil {
			return nil, false
		}
		return unionBranches(x.Select)
	case *tree.Union:
		switch x.Type {
		case "UNION", "UNION ALL", "UNION DISTINCT":
		default:
			return nil, false
		}
		if x.With != nil || x.Limit != nil || x.LimitBy != nil || len(x.OrderBy) > 0 {
			return nil, false
		}
		l, ok := unionBranches(x.Left)
		if !ok {
			return nil, false
		}
		r, ok := unionBranches(x.Right)
		return append(l, r...), ok
	}
	return nil, false
}

// unionTerm reads term, a WHERE term of a branch b of a union, as column
// op variable where b outputs column as itself, keyed by it, at SELECT
// item at.
func unionTerm(b *tree.Select, term tree.Expr) (*tree.ComparisonExpr, int, bool) {
	c, ok := unparen(term).(*tree.ComparisonExpr)
	if !ok || variableOf(c.Right) == "" {
		return nil, 0, false
	}
	if _, ok := rangeOps[c.Operator]; !ok && c.Operator != "IN" {
		return nil, 0, false
	}
	col, ok := unparen(c.Left).(*tree.ColName)
	if !ok || !tableColumn(b.From, col) {
		return nil, 0, false
	}
	_, at, ok := keyedItem(b, col)
	return c, at, ok
}

// tableColumn reports whether col, read in a branch of a union whose FROM
// is from, is a column of a table, not of a subquery: a subquery's column
// can be an expression's (CAST(... AS INTEGER)), and a branch's comparison
// with it is made with that column's type (SQLite's affinity), which the
// union's column, made of the branches' columns, may not have (SQLite
// gives a union's column of differently typed branches none), so the
// comparison moved out of the union would not mean the same.
func tableColumn(from []tree.TableExpr, col *tree.ColName) bool {
	var items []*tree.AliasedTableExpr
	var walk func(t tree.TableExpr) bool
	walk = func(t tree.TableExpr) bool {
		switch x := t.(type) {
		case *tree.AliasedTableExpr:
			items = append(items, x)
			return true
		case *tree.JoinTableExpr:
			return walk(x.LeftExpr) && walk(x.RightExpr)
		case *tree.ParenTableExpr:
			for _, e := range x.Exprs {
				if !walk(e) {
					return false
				}
			}
			return true
		}
		return false
	}
	for _, t := range from {
		if !walk(t) {
			return false
		}
	}
	found := false
	for _, it := range items {
		tn, isTable := it.Expr.(*tree.TableName)
		if col.Qualifier.IsEmpty() {
			if !isTable {
				return false // the column may be this subquery's
			}
			found = true
			continue
		}
		name := it.As.Name
		if name == "" && isTable {
			name = tn.Name().Name
		}
		if len(col.Qualifier.Parts) == 1 && strings.EqualFold(name, col.Qualifier.Parts[0].Name) {
			return isTable
		}
		if isTable && it.As.IsEmpty() && canonicalTable(tn) == canonicalTable(&col.Qualifier) {
			return true
		}
	}
	return found && col.Qualifier.IsEmpty()
}

// canonicalTable is t's name parts, lower case, joined by dots.
func canonicalTable(t *tree.TableName) string {
	parts := make([]string, len(t.Parts))
	for i, p := range t.Parts {
		parts[i] = strings.ToLower(p.Name)
	}
	return strings.Join(parts, ".")
}

// variableOf is the code name of the variable e is, as itself (or, for
// IN, as a list of one: ({variables.x})); "" otherwise.
func variableOf(e tree.Expr) string {
	e = unparen(e)
	if t, ok := e.(*tree.ValTuple); ok && len(t.Exprs) == 1 {
		e = unparen(t.Exprs[0])
	}
	if ph := placeholderOf(e); ph != nil {
		return ph.Name
	}
	return ""
}

// outputName is the name of SELECT item at of b, an AliasedExpr of a
// column (see unionTerm).
func outputName(b *tree.Select, at int) string {
	ae := b.SelectExprs[at].(*tree.AliasedExpr)
	if !ae.As.IsEmpty() {
		return ae.As.Name
	}
	return ae.Expr.(*tree.ColName).Name.Name
}
