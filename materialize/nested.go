package materialize

import (
	"slices"
	"strings"

	"github.com/endpointkit/endpointkit/sql/tree"
)

// A query whose variables are all compared in the WHERE of its one
// subquery in FROM (a CTE read once, or a derived table) where they
// cannot be carried out to the outer WHERE (the subquery aggregates by
// another column: per user, per day) is materialized at the subquery's
// grain: the stored table is the subquery's, built as any query's, and a
// read answers the subquery exactly from it (whole buckets stored, the
// partial ones and a live tail's rows from the source) and computes the
// outer query over that answer, as the outer query reads the subquery
// inline. The outer query reads nothing else: no other table, no
// subquery, no variable.

// innerMarker names the subquery in the printed outer query, where its
// read goes.
const innerMarker = "endpointkit_inner_read"

// outerRead is the outer query of a plan that answers its subquery from
// the stored table: head, the subquery's read, then end.
type outerRead struct {
	head, end string
	// limited: the outer query has a LIMIT of its own, which a page
	// takes its rows from.
	limited bool
}

// nestedInner returns the one subquery in sel's FROM, a SELECT, when
// every placeholder of sel is in it and the rest of sel reads nothing but
// it: sel's plan can then be the subquery's, with sel computed over its
// read.
func nestedInner(sel *tree.Select) (*tree.Select, bool) {
	if len(sel.From) != 1 || sel.With != nil {
		return nil, false
	}
	te, ok := sel.From[0].(*tree.AliasedTableExpr)
	if !ok || te.As.IsEmpty() || te.Columns != nil || te.Lateral || len(te.Suffixes) > 0 {
		return nil, false
	}
	sub, ok := te.Expr.(*tree.Subquery)
	if !ok {
		return nil, false
	}
	inner, ok := sub.Select.(*tree.Select)
	if !ok || inner.With != nil || len(findBinds(inner)) == 0 {
		return nil, false
	}
	clean := true
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		switch n.(type) {
		case *tree.Subquery, *tree.TableName, *tree.Placeholder, *tree.BindMarker:
			clean = false
		}
		return clean, nil
	}, outerNodes(sel)...)
	return inner, clean
}

// outerNodes are the clauses of sel but its FROM.
func outerNodes(sel *tree.Select) []tree.Node {
	nodes := selectNodes(sel.SelectExprs)
	nodes = append(nodes, exprNodes(sel.GroupBy)...)
	nodes = append(nodes, orderNodes(sel.OrderBy)...)
	for _, n := range []tree.Node{sel.Where, sel.Having, sel.Limit, sel.LimitBy} {
		if n != nil && !isNilNode(n) {
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// isNilNode reports whether n is a typed nil.
func isNilNode(n tree.Node) bool {
	switch x := n.(type) {
	case *tree.Limit:
		return x == nil
	case *tree.LimitBy:
		return x == nil
	}
	return false
}

// around makes p, the plan of outer's one subquery, the plan of outer:
// its reads compute outer over the subquery's read, and its columns are
// outer's. top says outer is the query itself, whose SELECT items are the
// text's top-level ones.
//
// untyped are the tables whose columns' types the sums of the queries
// inside were taken exact without, with those of outer's added.
func (p *Plan) around(outer *tree.Select, lx *lexed, top bool, opts Options, untyped *[]Table) *Reason {
	b := &builder{sel: outer, d: p.dialect, opts: opts, aliases: map[string]int{}, subquery: !top}
	if off, ok := dividedSum(p.dialect, true, []tree.Node{outer.From[0]}, outerNodes(outer)...); ok {
		return reasonOf(failAt(off, CodeUnsupportedQuery, "a division (/ or %%) over a sum() cannot be materialized on %s where the sum is read from the stored table and computed on (a subquery's sum, or a sum beside a window function): its read adds up the stored sums, and the sum of a bigint is a numeric there, so an integer division would keep its fraction; divide in the caller, or cast first (CAST(x AS numeric) / 7)", p.dialect.Name()), lx)
	}
	b.src = lx.src
	if err := b.checkOuterSums(outer); err != nil {
		return reasonOf(err, lx)
	}
	for _, t := range b.untyped() {
		if !slices.Contains(*untyped, t) {
			*untyped = append(*untyped, t)
		}
	}
	err := b.outputs(lx)
	var o *outerRead
	if err == nil {
		o, err = b.outer(outer)
	}
	if err != nil {
		return reasonOf(err, lx)
	}
	if p.outer != nil {
		// A chain: the subquery's own outer query is read inside this one.
		o.head += p.outer.head
		o.end = p.outer.end + o.end
	}
	p.outer, p.columns = o, b.names
	return nil
}

// outer prints sel, whose FROM is its one subquery, with the subquery
// cut out: the read of the subquery goes between head and end.
func (b *builder) outer(sel *tree.Select) (*outerRead, error) {
	te := sel.From[0].(*tree.AliasedTableExpr)
	cp := *sel
	cp.From = []tree.TableExpr{&tree.AliasedTableExpr{Expr: &tree.TableName{Parts: []tree.Ident{tree.NewIdent(innerMarker)}}, As: te.As}}
	pr := &printer{d: b.d}
	pr.selectStatement(&cp)
	if pr.err != nil {
		return nil, pr.err
	}
	text := pr.b.String()
	head, end, ok := strings.Cut(text, b.q(innerMarker))
	if !ok || strings.Contains(end, b.q(innerMarker)) {
		return nil, fail(CodeUnsupportedQuery, "the outer query could not be printed around its subquery's read")
	}
	return &outerRead{head: head + "(", end: ")" + end, limited: sel.Limit != nil}, nil
}
