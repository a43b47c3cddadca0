package materialize

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// A variable in the SELECT list of a query that does not aggregate is
// computed at read too (KindRead): the stored table holds the columns
// its item reads, and the read computes the item over them with the
// value bound (see plain.go).
//
// A variable in the SELECT list or the HAVING clause of an aggregating
// query, outside its aggregates, is computed at read (KindRead): the
// stored table holds the query's groups with their aggregates' parts, as
// it does without the variable, and the read query, which combines those
// parts again per group, binds the variable where the query has it.
// HAVING sum(amount) > {variables.n} is read as HAVING sum("_a0") > ?;
// SELECT {variables.label} AS label as SELECT ? AS label. A group key
// that holds a variable (GROUP BY CASE WHEN country = {variables.c} ...
// END) is stored as the columns it reads, and the read groups by the key
// computed over them with the value bound.

// readMarker is the text a read query holds in place of the value of
// variable name until Plan.text binds it: NUL bytes, which no printed
// query holds (Analyze refuses a query with one).
func readMarker(name string) string { return "\x00" + name + "\x00" }

// atReadBinds judges the placeholders of the SELECT list and HAVING of
// sel: computed at read (op "read") when outside aggregates, windows and
// subqueries, and in a query that aggregates; refused with a reason
// otherwise.
func atReadBinds(sel *tree.Select) []bind {
	aggregating := len(sel.GroupBy) > 0 || sel.Having != nil || hasAggregate(selectNodes(sel.SelectExprs)...) || hasAggregate(orderNodes(sel.OrderBy)...)
	var out []bind
	judge := func(where string, nodes ...tree.Node) {
		for _, f := range findBinds(nodes...) {
			out = append(out, bind{f.ph, atReadUse(where, f, aggregating)})
		}
	}
	judge("the SELECT list", selectNodes(sel.SelectExprs)...)
	if sel.Having != nil {
		judge("HAVING", sel.Having)
	}
	return out
}

// atReadUse judges one placeholder f of the SELECT list or HAVING
// (where).
func atReadUse(where string, f found, aggregating bool) use {
	bad := func(format string, args ...any) use {
		return use{reason: &Reason{Code: CodeNotInWhere, Message: fmt.Sprintf(format, args...)}}
	}
	switch {
	case f.has(func(n tree.Node) bool { _, ok := n.(*tree.Subquery); return ok }):
		return bad("is used in a subquery in %s; only the outer WHERE can be materialized", where)
	case f.has(func(n tree.Node) bool { c, ok := n.(*tree.FuncExpr); return ok && c.Over != nil }):
		return bad("is used in a window function (OVER) in %s; the windows are computed over stored rows before any value is known; compare the variable in the WHERE instead", where)
	case f.has(func(n tree.Node) bool { e, ok := n.(tree.Expr); return ok && isAggregate(e) }):
		return bad("is used inside an aggregate in %s; the stored table holds the aggregates' parts computed before any value is known, so a variable there cannot be read; use it outside the aggregate (sum(x) > {variables.n}), or compare it in the WHERE", where)
	case !aggregating && where != "the SELECT list":
		return bad("is used in %s of a query that does not aggregate; compare it in the WHERE", where)
	}
	return use{op: "read"}
}

// storedUses returns the uses of each variable that the stored table
// keeps (all but those computed at read), and the indexes of the
// variables that have some.
func storedUses(uses [][]use) ([][]use, []int) {
	var out [][]use
	var idx []int
	for i, us := range uses {
		var kept []use
		for _, u := range us {
			if u.op != "read" {
				kept = append(kept, u)
			}
		}
		if len(kept) > 0 {
			out = append(out, kept)
			idx = append(idx, i)
		}
	}
	return out, idx
}

// hasPlaceholder reports whether a variable's placeholder occurs in n.
func hasPlaceholder(n tree.Node) bool {
	return hasNode(n, func(n tree.Node) bool { _, ok := n.(*tree.Placeholder); return ok })
}

// columnsOf returns the columns e reads, each once, in order.
func columnsOf(e tree.Node) []tree.Expr {
	var out []tree.Expr
	seen := map[string]bool{}
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		if c, ok := n.(*tree.ColName); ok && !seen[canonical(c)] {
			seen[canonical(c)] = true
			out = append(out, c)
		}
		return true, nil
	}, e)
	return out
}

// text writes s, a part of the read query, binding the value of each
// variable whose readMarker it holds.
func (p *Plan) text(b *placeholder.Builder, s string, values map[string]any) {
	if !strings.Contains(s, "\x00") {
		b.WriteString(s)
		return
	}
	for i, part := range strings.Split(s, "\x00") {
		if i%2 == 0 {
			b.WriteString(part)
			continue
		}
		b.Bind(values[part]) // checked by checkValues
	}
}

// checkReadValues checks the values of the variables computed at read:
// present, not null, and not a list, which only IN can read.
func (p *Plan) checkReadValues(values map[string]any) error {
	for _, name := range p.atRead {
		v, ok := values[name]
		switch {
		case !ok:
			return &ValueError{Variable: name, Detail: "no value; every variable of a materialized endpoint is required"}
		case v == nil:
			return &ValueError{Variable: name, Detail: "null cannot be read in the SELECT list or HAVING of a materialized endpoint"}
		}
		if _, ok := v.([]string); ok {
			return &ValueError{Variable: name, Detail: "a list can be compared only with IN"}
		}
	}
	return nil
}

// noteAtRead records that the read binds variable name.
func (b *builder) noteAtRead(name string) {
	if !slices.Contains(b.atRead, name) {
		b.atRead = append(b.atRead, name)
	}
}

// expandKeys returns the group keys of the stored table and the terms of
// the read's GROUP BY. A key that holds a variable is stored as the
// columns it reads, and the read groups by it as the SELECT item it is,
// by position, computed over the stored columns with the value bound
// (one bound value for the item and its group, which PostgreSQL needs
// to see them as one expression); the other keys are stored and read as
// they are.
func (b *builder) expandKeys(keys []tree.Expr) ([]tree.Expr, []string, error) {
	var stored []tree.Expr
	var read []string
	index := map[string]int{}
	add := func(k tree.Expr) int {
		c := canonical(k)
		if j, ok := index[c]; ok {
			return j
		}
		index[c] = len(stored)
		stored = append(stored, k)
		return len(stored) - 1
	}
	for _, k := range keys {
		if !hasPlaceholder(k) {
			read = append(read, b.q(b.gen('k', add(k))))
			continue
		}
		ck := canonicalWithVars(k)
		item := slices.IndexFunc(b.items, func(it *tree.AliasedExpr) bool { return it.Expr == k || ck != "" && canonicalWithVars(it.Expr) == ck })
		if item < 0 {
			return nil, nil, fail(CodeNotInWhere, "a GROUP BY term that holds a variable is computed at read only as an item of the SELECT list; select it (expr AS name) and group by its name or position")
		}
		b.expanded = true
		for _, c := range columnsOf(k) {
			add(c)
		}
		read = append(read, strconv.Itoa(item+1))
	}
	return stored, read, nil
}

// canonicalWithVars is canonical for an expression that may hold
// variables, each written as its placeholder (canonical gives every such
// expression one text: that of its refusal); "" when e cannot be
// printed.
func canonicalWithVars(e tree.Expr) string {
	s, err := tree.Normal{Canonical: true, Hook: func(e tree.Expr) (string, bool, error) {
		if ph, ok := e.(*tree.Placeholder); ok {
			return "{variables." + ph.Name + "}", true, nil
		}
		return "", false, nil
	}}.Expr(e)
	if err != nil {
		return ""
	}
	return s
}
