package materialize

import (
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// Relation is one FROM item of a query, as a live tail's column is
// resolved against it (see CheckTailColumn).
type Relation struct {
	// Name is the name a column of it is qualified with: its alias, or
	// the table's own name; "" for a derived table without an alias.
	Name string
	// Table is the table's own name when the item is a table.
	Table string
	// Columns are the columns it gives, when Known.
	Columns []string
	// Known reports whether the query shows its columns (a derived
	// table's or a WITH query's SELECT list, an alias's column list);
	// false for a table, whose columns only the engine knows.
	Known bool
}

// TailColumnUnread is why a live tail's column cannot be read in the FROM
// of a query's outermost SELECT, where the tail's bound goes.
type TailColumnUnread struct {
	// Column is the column as given (name or qualifier.name).
	Column string
	// Qualifier is the column's qualifier when it names no relation of
	// the FROM; "" when the column is not among those it names.
	Qualifier string
	// Relations are the relations looked in: those the qualifier could
	// name (all of them when Qualifier is set, or the column is
	// unqualified).
	Relations []Relation
	// Subquery reports that the FROM looked in is that of the query's one
	// subquery in FROM, where its variables are compared and its plan
	// stores rows (see nested.go), rather than the outermost FROM.
	Subquery bool
}

// CheckTailColumn reads query, an endpoint's SQL template, for e and
// reports whether its outermost SELECT's FROM, where a live tail's bound
// goes, can give the column col (name or qualifier.name); for a query
// materialized at the grain of its one subquery in FROM (see nested.go),
// that subquery's FROM. It returns nil when it
// can, or when only the engine can tell (a column of a table, whose
// columns the query does not show, or a FROM item such as ClickHouse's
// ARRAY JOIN); a *TailColumnUnread that names what the FROM gives when it
// cannot. The error is the syntax tree's when it cannot read the query,
// which then is not judged.
func CheckTailColumn(e engine.Engine, query, col string) (*TailColumnUnread, error) {
	t, err := tree.Parse(e, query)
	if err != nil {
		return nil, err
	}
	sel, with := outermostSelect(t.Stmt, nil)
	if sel == nil {
		return nil, nil
	}
	nested := false
	if inner := tailSubquery(e, query); inner != nil {
		sel, with, nested = inner, nil, true
	}
	var rels []Relation
	if !fromRelations(sel.From, with, &rels) {
		return nil, nil
	}
	qual, name, qualified := strings.Cut(col, ".")
	if !qualified {
		name, qual = qual, ""
	}
	var candidates []Relation
	for _, r := range rels {
		if !qualified || strings.EqualFold(r.Name, qual) || strings.EqualFold(r.Table, qual) {
			candidates = append(candidates, r)
		}
	}
	if qualified && len(candidates) == 0 {
		return &TailColumnUnread{Column: col, Qualifier: qual, Relations: rels, Subquery: nested}, nil
	}
	for _, r := range candidates {
		if !r.Known {
			return nil, nil
		}
		for _, c := range r.Columns {
			if strings.EqualFold(c, name) {
				return nil, nil
			}
		}
	}
	return &TailColumnUnread{Column: col, Relations: candidates, Subquery: nested}, nil
}

// tailSubquery returns the one subquery of query whose grain a plan
// stores (see nestedInner), read as Analyze reads it: CTEs read once
// inlined and the conditions that can be carried out of subqueries
// carried out; nil for any other query.
func tailSubquery(e engine.Engine, query string) *tree.Select {
	t, err := tree.Parse(e, query)
	if err != nil {
		return nil
	}
	sel, ok := t.Stmt.(*tree.Select)
	if !ok || sel.With != nil && !inlineWith(sel) {
		return nil
	}
	liftDerived(sel)
	var inner *tree.Select
	for {
		next, ok := nestedInner(sel)
		if !ok {
			return inner
		}
		inner, sel = next, next
	}
}

// outermostSelect returns the outermost SELECT of s, through parentheses,
// and the WITH clauses in force there; nil for a set operation (the live
// tail is not placed in one).
func outermostSelect(s tree.SelectStatement, with []*tree.With) (*tree.Select, []*tree.With) {
	switch s := s.(type) {
	case *tree.Select:
		if s.With != nil {
			with = append(with, s.With)
		}
		return s, with
	case *tree.ParenSelect:
		if s.With != nil {
			with = append(with, s.With)
		}
		return outermostSelect(s.Select, with)
	}
	return nil, nil
}

// fromRelations appends the relations of the FROM items in from to rels;
// false when an item is of a kind columns cannot be resolved against
// here (ClickHouse's ARRAY JOIN, which adds columns of its own).
func fromRelations(from []tree.TableExpr, with []*tree.With, rels *[]Relation) bool {
	for _, f := range from {
		switch f := f.(type) {
		case *tree.AliasedTableExpr:
			r, ok := relationOf(f, with)
			if !ok {
				return false
			}
			*rels = append(*rels, r)
		case *tree.JoinTableExpr:
			if !fromRelations([]tree.TableExpr{f.LeftExpr, f.RightExpr}, with, rels) {
				return false
			}
		case *tree.ParenTableExpr:
			if !fromRelations(f.Exprs, with, rels) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// relationOf is the relation of one FROM item.
func relationOf(f *tree.AliasedTableExpr, with []*tree.With) (Relation, bool) {
	r := Relation{Name: f.As.Name}
	switch x := f.Expr.(type) {
	case *tree.TableName:
		r.Table = x.Name().Name
		if r.Name == "" {
			r.Name = r.Table
		}
		if len(x.Parts) == 1 {
			if cte := withQuery(with, r.Table); cte != nil {
				r.Columns, r.Known = cteColumns(cte)
			}
		}
	case *tree.Subquery:
		r.Columns, r.Known = selectColumns(x.Select)
	case *tree.FuncExpr:
		// A table function: its columns are the engine's.
	default:
		return r, false
	}
	if len(f.Columns) > 0 {
		r.Columns, r.Known = identNames(f.Columns), true
	}
	return r, true
}

// withQuery returns the WITH query named name in force, the innermost
// first, or nil.
func withQuery(with []*tree.With, name string) *tree.CommonTableExpr {
	for i := len(with) - 1; i >= 0; i-- {
		for _, c := range with[i].CTEs {
			if c.Subquery != nil && strings.EqualFold(c.Name.Name, name) {
				return c
			}
		}
	}
	return nil
}

// cteColumns returns the columns a WITH query gives.
func cteColumns(c *tree.CommonTableExpr) ([]string, bool) {
	if len(c.Columns) > 0 {
		return identNames(c.Columns), true
	}
	return selectColumns(c.Subquery.Select)
}

// selectColumns returns the names of the columns a query gives; false
// when one is not shown by the query (a * or an expression without an
// alias, which the engine names).
func selectColumns(s tree.SelectStatement) ([]string, bool) {
	switch s := s.(type) {
	case *tree.Select:
		var out []string
		for _, se := range s.SelectExprs {
			ae, ok := se.(*tree.AliasedExpr)
			if !ok {
				return nil, false
			}
			switch {
			case !ae.As.IsEmpty():
				out = append(out, ae.As.Name)
			default:
				c, ok := ae.Expr.(*tree.ColName)
				if !ok {
					return nil, false
				}
				out = append(out, c.Name.Name)
			}
		}
		return out, true
	case *tree.ParenSelect:
		return selectColumns(s.Select)
	case *tree.Union:
		return selectColumns(s.Left)
	}
	return nil, false
}

// identNames returns the names of ids.
func identNames(ids []tree.Ident) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.Name
	}
	return out
}
