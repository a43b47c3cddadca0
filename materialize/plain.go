package materialize

import (
	"slices"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/sql/tree"
)

// plain rewrites a query without aggregates: the stored table holds its
// rows before the variables' filters, with the compared columns.
func (b *builder) plain(plan *Plan) error {
	var pre, read, cols []string
	hidden := map[string]string{} // canonical column -> its stored name
	for i, it := range b.items {
		if hasPlaceholder(it.Expr) {
			// Computed at read (see atread.go): the columns it reads are
			// stored, and the read computes it over them with the
			// variables' values bound.
			for _, c := range columnsOf(it.Expr) {
				if _, ok := hidden[canonical(c)]; ok {
					continue
				}
				s, err := b.print(c)
				if err != nil {
					return err
				}
				name := b.gen('x', len(hidden))
				hidden[canonical(c)] = name
				pre = append(pre, s+" AS "+b.q(name))
				cols = append(cols, name)
			}
			r := printer{d: b.d, hook: b.plainReadHook(hidden)}
			s, err := r.exprString(it.Expr)
			if err != nil {
				return err
			}
			read = append(read, s+" AS "+b.q(b.names[i]))
			continue
		}
		s, err := b.print(it.Expr)
		if err != nil {
			return err
		}
		pre = append(pre, s+" AS "+b.q(b.gen('c', i)))
		cols = append(cols, b.gen('c', i))
		read = append(read, b.q(b.gen('c', i))+" AS "+b.q(b.names[i]))
	}
	var order []string
	for _, o := range b.sel.OrderBy {
		dir := " " + direction(o)
		if n := b.orderPosition(o.Expr); n > 0 {
			order = append(order, strconv.Itoa(n)+dir)
			continue
		}
		if b.sel.Distinct != "" {
			return fail(CodeUnsupportedQuery, "SELECT DISTINCT ordered by an expression it does not select cannot be materialized")
		}
		s, err := b.print(o.Expr)
		if err != nil {
			return err
		}
		hidden := b.gen('o', len(order))
		pre = append(pre, s+" AS "+b.q(hidden))
		cols = append(cols, hidden)
		order = append(order, b.q(hidden)+dir)
	}
	merged := slices.Clone(pre)
	vcols, from, where, bounded, tail, err := b.precomputeParts(plan)
	if err != nil {
		return err
	}
	for i := range b.vars {
		pre = append(pre, vcols[i]+" AS "+b.q(b.varColumn(i)))
	}
	plan.precompute = "SELECT " + strings.Join(pre, ", ") + from + bounded
	plan.sourceCount = "SELECT count(*)" + from + bounded
	if tail != "" {
		plan.source = &source{selectList: strings.Join(merged, ", "), columns: cols,
			from: from, rest: strings.TrimPrefix(where, " WHERE "), tail: tail}
	}
	plan.readHead = "SELECT " + b.distinct() + strings.Join(read, ", ") + " FROM "
	return b.tail(plan, "", "", order)
}

// plainReadHook is the printer hook of a plain read's item that holds a
// variable: a column becomes its stored name in hidden (by canonical
// text), a variable its readMarker.
func (b *builder) plainReadHook(hidden map[string]string) func(tree.Expr) (string, bool, error) {
	return func(e tree.Expr) (string, bool, error) {
		if ph, ok := e.(*tree.Placeholder); ok {
			b.noteAtRead(ph.Name)
			return readMarker(ph.Name), true, nil
		}
		if c, ok := e.(*tree.ColName); ok {
			return b.q(hidden[canonical(c)]), true, nil
		}
		return "", false, nil
	}
}
