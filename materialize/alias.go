package materialize

import (
	"fmt"

	"github.com/xwb1989/sqlparser"
)

// checkAliases refuses output aliases whose meaning depends on the source
// tables, which the rewrite cannot see: SQLite resolves a name in WHERE,
// GROUP BY and HAVING to a column of FROM first and to an output alias only
// when there is no such column, while the rewrite resolves GROUP BY and
// HAVING names to aliases and stores WHERE columns as they are.
func (b *builder) checkAliases() error {
	shadows := map[string]bool{} // aliases that stand for something else than a column of that name
	for name, i := range b.aliases {
		if c, ok := b.items[i].Expr.(*sqlparser.ColName); !ok || c.Name.Lowered() != name {
			shadows[name] = true
		}
	}
	if len(shadows) == 0 {
		return nil
	}
	for i, v := range b.vars {
		var err error
		_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
			c, ok := n.(*sqlparser.ColName)
			if ok && err == nil && c.Qualifier.IsEmpty() && shadows[c.Name.Lowered()] {
				err = &reasonError{r: Reason{Code: CodeNotColumn, Variable: v.Name, Line: b.uses[i][0].line, Column: b.uses[i][0].column,
					Message: fmt.Sprintf("is compared to %s, an output alias rather than a column; give the output alias another name", c.Name.String())}}
			}
			return err == nil, nil
		}, b.uses[i][0].expr)
		if err != nil {
			return err
		}
	}
	referenced, used := b.columnNames(), b.groupingNames()
	for name := range shadows {
		if referenced[name] && used[name] {
			return fail(CodeUnsupportedQuery, "the output alias %s is also the name of a column, which GROUP BY or HAVING would read as the column; give the alias another name", name)
		}
	}
	return nil
}

// columnNames returns the names (lower-case) that certainly name columns
// of FROM: those in the SELECT list, FROM and WHERE, and inside the
// aggregates of HAVING and ORDER BY.
func (b *builder) columnNames() map[string]bool {
	names := map[string]bool{}
	addColumnNames(names, b.sel.SelectExprs)
	addColumnNames(names, b.sel.From)
	if b.sel.Where != nil {
		addColumnNames(names, b.sel.Where)
	}
	for _, n := range []sqlparser.SQLNode{b.sel.Having, b.sel.OrderBy} {
		if h, ok := n.(*sqlparser.Where); ok && h == nil {
			continue
		}
		// Names inside aggregates are columns of FROM, never aliases.
		_ = sqlparser.Walk(func(c sqlparser.SQLNode) (bool, error) {
			if e, ok := c.(sqlparser.Expr); ok && isAggregate(e) {
				addColumnNames(names, c)
				return false, nil
			}
			return true, nil
		}, n)
	}
	return names
}

// groupingNames returns the unqualified names (lower-case) of GROUP BY
// terms and of HAVING, which the rewrite reads as output aliases.
func (b *builder) groupingNames() map[string]bool {
	names := map[string]bool{}
	for _, g := range b.sel.GroupBy {
		if c, ok := g.(*sqlparser.ColName); ok && c.Qualifier.IsEmpty() {
			names[c.Name.Lowered()] = true
		}
	}
	if b.sel.Having != nil {
		_ = sqlparser.Walk(func(c sqlparser.SQLNode) (bool, error) {
			if col, ok := c.(*sqlparser.ColName); ok && col.Qualifier.IsEmpty() {
				names[col.Name.Lowered()] = true
			}
			return true, nil
		}, b.sel.Having)
	}
	return names
}

// addColumnNames adds the names (lower-case) of the columns under n.
func addColumnNames(names map[string]bool, n sqlparser.SQLNode) {
	_ = sqlparser.Walk(func(c sqlparser.SQLNode) (bool, error) {
		if col, ok := c.(*sqlparser.ColName); ok {
			names[col.Name.Lowered()] = true
		}
		return true, nil
	}, n)
}
