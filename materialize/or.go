package materialize

import (
	"fmt"
	"strconv"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// An OR of conditions whose every branch compares a variable with = or IN
// to a column or row expression, (browser = {variables.b} OR country =
// {variables.c}), is materialized with each of those columns a key of the
// stored table: the stored rows hold every combination of them, and a
// read applies the OR to them as the query does to the source rows. It is
// read as one filter (filter.or) whose value is the branches' values
// (orValues), put among the values by Plan.movedValues.

// orUses returns the uses of the variables of term, an OR whose every
// branch (through parentheses and nested ORs) is column = variable or
// column IN variable, each in OR group group; false for any other term.
func orUses(term tree.Expr, group int) ([]bind, bool) {
	if _, ok := unparen(term).(*tree.OrExpr); !ok {
		return nil, false
	}
	var out []bind
	for _, branch := range orTerms(term) {
		c, ok := unparen(branch).(*tree.ComparisonExpr)
		if !ok || c.Operator != "=" && c.Operator != "IN" {
			return nil, false
		}
		binds := findBinds(c)
		if len(binds) != 1 {
			return nil, false
		}
		f := binds[0]
		var u use
		switch {
		case c.Operator == "IN":
			u = judgeIn(c, f)
		case placeholderOf(unparen(c.Right)) == f.ph:
			u = keyUse("=", unparen(c.Left))
		case placeholderOf(unparen(c.Left)) == f.ph:
			u = keyUse("=", unparen(c.Right))
		default:
			return nil, false
		}
		if u.reason != nil {
			return nil, false
		}
		u.group = group
		out = append(out, bind{f.ph, u})
	}
	return out, true
}

// orTerms splits e into the branches of its top-level ORs, through
// parentheses.
func orTerms(e tree.Expr) []tree.Expr {
	switch x := unparen(e).(type) {
	case *tree.OrExpr:
		return append(orTerms(x.Left), orTerms(x.Right)...)
	}
	return []tree.Expr{e}
}

// orName is the key of OR group n's values among a read's values: not a
// code name (it holds a space).
func orName(n int) string { return "or " + strconv.Itoa(n) }

// orValues are the values of an OR group's branches, in order.
type orValues []any

// orValuesOf returns the values of the branches of f, an OR group, each
// checked as checkValues checks a filter's.
func orValuesOf(f filter, values map[string]any) (orValues, error) {
	out := make(orValues, len(f.or))
	for i, m := range f.or {
		v, ok := values[m.variable]
		switch {
		case !ok:
			return nil, &ValueError{Variable: m.variable, Detail: "no value; every variable of a materialized endpoint is required"}
		case v == nil:
			return nil, &ValueError{Variable: m.variable, Detail: "null cannot be compared"}
		}
		if err := checkList(m.variable, m.op, v); err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// writeOr writes the OR of f's branches, each compared with its value in
// v: of the stored columns when quoted, else of the source rows.
func (f filter) writeOr(b *placeholder.Builder, quoted bool, v any) error {
	vals, ok := v.(orValues)
	if !ok || len(vals) != len(f.or) {
		return fmt.Errorf("materialize: the values of an OR of variables are missing")
	}
	b.WriteString("(")
	for i, m := range f.or {
		if i > 0 {
			b.WriteString(" OR ")
		}
		if err := m.write(b, m.column, quoted, vals[i]); err != nil {
			return err
		}
	}
	b.WriteString(")")
	return nil
}
