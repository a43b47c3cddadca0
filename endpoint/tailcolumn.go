package endpoint

import (
	"context"
	"log/slog"
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// relation is one FROM item of a query, as the live tail's column is
// resolved against it: the name a column is qualified with (its alias, or
// the table's own name), the table's own name when it is one, and the
// columns it gives when the query shows them (a derived table's or a WITH
// query's SELECT list, an alias's column list); known is false for a
// table whose columns only the engine knows.
type relation struct {
	name, table string
	columns     []string
	known       bool
}

// tailColumnUnread returns why the query sql, read for e, cannot read the
// live tail's column col (name or qualifier.name) in the FROM of its
// outermost SELECT, where the live tail's bound goes; "" when it can, or
// when only the engine can tell (a column of a table, whose columns the
// query does not show). A query the syntax tree cannot read is not judged
// here: it is logged, and its materialization is judged as before.
func tailColumnUnread(ctx context.Context, e engine.Engine, sql, col string) string {
	t, err := tree.Parse(e, sql)
	if err != nil {
		slog.WarnContext(ctx, "endpoint: the live tail's column could not be checked against the query's FROM", "error", err)
		return ""
	}
	sel, with := outerSelect(t.Stmt, nil)
	if sel == nil {
		return ""
	}
	var rels []relation
	if !fromRelations(sel.From, with, &rels) {
		return ""
	}
	qual, name, qualified := strings.Cut(col, ".")
	if !qualified {
		name, qual = qual, ""
	}
	var candidates []relation
	for _, r := range rels {
		switch {
		case !qualified:
			candidates = append(candidates, r)
		case strings.EqualFold(r.name, qual) || strings.EqualFold(r.table, qual):
			candidates = append(candidates, r)
		}
	}
	if qualified && len(candidates) == 0 {
		return "the query's FROM has no table or alias named '" + cut(qual) + "' (it reads " + describeRelations(rels) + ")"
	}
	for _, r := range candidates {
		if !r.known {
			return ""
		}
		for _, c := range r.columns {
			if strings.EqualFold(c, name) {
				return ""
			}
		}
	}
	return "'" + cut(col) + "' is not a column of the query's FROM, which gives " + describeRelations(candidates) +
		"; the live tail's column is the column holding each row's time among the columns of the query's outermost FROM"
}

// outerSelect returns the outermost SELECT of s, through parentheses, and
// the WITH clauses that are in force there; nil for a set operation (the
// live tail is not placed in one).
func outerSelect(s tree.SelectStatement, with []*tree.With) (*tree.Select, []*tree.With) {
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
		return outerSelect(s.Select, with)
	}
	return nil, nil
}

// fromRelations appends the relations of the FROM items in from to rels;
// false when an item is of a kind columns cannot be resolved against
// here (ClickHouse's ARRAY JOIN, which adds columns of its own).
func fromRelations(from []tree.TableExpr, with []*tree.With, rels *[]relation) bool {
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
func relationOf(f *tree.AliasedTableExpr, with []*tree.With) (relation, bool) {
	r := relation{name: f.As.Name}
	switch x := f.Expr.(type) {
	case *tree.TableName:
		r.table = x.Name().Name
		if r.name == "" {
			r.name = r.table
		}
		if len(x.Parts) == 1 {
			if cte := withQuery(with, r.table); cte != nil {
				r.columns, r.known = cteColumns(cte)
			}
		}
	case *tree.Subquery:
		r.columns, r.known = selectColumns(x.Select)
	case *tree.FuncExpr:
		// A table function: its columns are the engine's.
	default:
		return r, false
	}
	if len(f.Columns) > 0 {
		r.columns, r.known = identNames(f.Columns), true
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

// describeRelations names rels and, where the query shows them, their
// columns: "f (distinct_id, first_day)", "the table events".
func describeRelations(rels []relation) string {
	parts := make([]string, 0, len(rels))
	for _, r := range rels {
		name := r.name
		if name == "" {
			name = "a derived table without an alias"
		}
		switch {
		case r.known:
			parts = append(parts, name+" ("+strings.Join(r.columns, ", ")+")")
		case r.table != "" && r.table != r.name:
			parts = append(parts, name+" (the table "+r.table+")")
		default:
			parts = append(parts, name)
		}
	}
	return cut(strings.Join(parts, ", "))
}
