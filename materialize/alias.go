package materialize

import (
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/sql/tree"
)

// checkAliases refuses output aliases whose meaning depends on the source
// tables, which the rewrite cannot see: SQLite resolves a name in WHERE,
// GROUP BY and HAVING to a column of FROM first and to an output alias only
// when there is no such column, while the rewrite resolves GROUP BY and
// HAVING names to aliases and stores WHERE columns as they are.
func (b *builder) checkAliases() error {
	shadows := map[string]bool{} // aliases that stand for something else than a column of that name
	for name, i := range b.aliases {
		if c, ok := b.items[i].Expr.(*tree.ColName); !ok || lowered(c.Name) != name {
			shadows[name] = true
		}
	}
	if len(shadows) == 0 {
		return nil
	}
	for i, v := range b.vars {
		var err error
		_ = tree.Walk(func(n tree.Node) (bool, error) {
			c, ok := n.(*tree.ColName)
			if ok && err == nil && c.Qualifier.IsEmpty() && shadows[lowered(c.Name)] {
				err = &reasonError{r: Reason{Code: CodeNotColumn, Variable: v.Name, Line: b.uses[i][0].line, Column: b.uses[i][0].column,
					Message: fmt.Sprintf("is compared to %s, an output alias rather than a column; give the output alias another name", c.Name.Name)}}
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
	addColumnNames(names, selectNodes(b.sel.SelectExprs)...)
	addColumnNames(names, tableNodes(b.sel.From)...)
	if b.sel.Where != nil {
		addColumnNames(names, b.sel.Where)
	}
	later := orderNodes(b.sel.OrderBy)
	if b.sel.Having != nil {
		later = append([]tree.Node{b.sel.Having}, later...)
	}
	// Names inside aggregates are columns of FROM, never aliases.
	_ = tree.Walk(func(c tree.Node) (bool, error) {
		if e, ok := c.(tree.Expr); ok && isAggregate(e) {
			addColumnNames(names, c)
			return false, nil
		}
		return true, nil
	}, later...)
	return names
}

// groupingNames returns the unqualified names (lower-case) of GROUP BY
// terms and of HAVING, which the rewrite reads as output aliases.
func (b *builder) groupingNames() map[string]bool {
	names := map[string]bool{}
	for _, g := range b.sel.GroupBy {
		if c, ok := g.(*tree.ColName); ok && c.Qualifier.IsEmpty() {
			names[lowered(c.Name)] = true
		}
	}
	if b.sel.Having != nil {
		_ = tree.Walk(func(c tree.Node) (bool, error) {
			if col, ok := c.(*tree.ColName); ok && col.Qualifier.IsEmpty() {
				names[lowered(col.Name)] = true
			}
			return true, nil
		}, b.sel.Having)
	}
	return names
}

// addColumnNames adds the names (lower-case) of the columns under n.
func addColumnNames(names map[string]bool, n ...tree.Node) {
	_ = tree.Walk(func(c tree.Node) (bool, error) {
		if col, ok := c.(*tree.ColName); ok {
			names[lowered(col.Name)] = true
		}
		return true, nil
	}, n...)
}

// lowered is a name in lower case, as names compare without case.
func lowered(id tree.Ident) string { return strings.ToLower(id.Name) }
