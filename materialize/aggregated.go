package materialize

import (
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint/engine"
	"github.com/xwb1989/sqlparser"
)

// aggregated rewrites a query with aggregates: the stored table holds one
// row per group of the query and value of the variables' columns, with the
// parts the read combines again.
func (b *builder) aggregated(plan *Plan) error {
	keys, err := b.groupKeys()
	if err != nil {
		return err
	}
	keyIndex := map[string]int{}
	var pre []string
	for j, k := range keys {
		keyIndex[canonical(k)] = j
		s, err := b.print(k)
		if err != nil {
			return err
		}
		pre = append(pre, s+" AS "+b.q(b.gen('k', j)))
	}
	rw := &printer{d: b.d}
	// Output aliases name columns in HAVING and ORDER BY only; inside the
	// SELECT list, and inside the expression an alias stands for, a name is
	// a column of FROM.
	aliases := false
	rw.hook = func(e sqlparser.Expr) (string, bool, error) {
		if j, ok := keyIndex[canonical(e)]; ok {
			return b.q(b.gen('k', j)), true, nil
		}
		switch x := e.(type) {
		case *sqlparser.FuncExpr:
			if isAggregate(x) {
				s, err := b.combine(x, len(keys) > 0)
				return s, err == nil, err
			}
		case *sqlparser.GroupConcatExpr:
			return "", false, fail(CodeAggregate, "group_concat cannot be materialized: the order of its values is not kept")
		case *sqlparser.ColName:
			if i, ok := b.aliases[x.Name.Lowered()]; ok && aliases && x.Qualifier.IsEmpty() {
				aliases = false
				s, err := rw.exprString(b.items[i].Expr)
				aliases = true
				return "(" + s + ")", err == nil, err
			}
			return "", false, fail(CodeAggregate, "the column %s is neither grouped nor aggregated", canonical(x))
		case *sqlparser.Subquery:
			return "", false, fail(CodeUnsupportedQuery, "a subquery outside FROM and WHERE cannot be materialized")
		}
		return "", false, nil
	}
	var read []string
	for i, it := range b.items {
		s, err := rw.exprString(it.Expr)
		if err != nil {
			return err
		}
		read = append(read, s+" AS "+b.q(b.names[i]))
	}
	aliases = true
	having := ""
	if b.sel.Having != nil {
		s, err := rw.exprString(b.sel.Having.Expr)
		if err != nil {
			return err
		}
		having = " HAVING " + s
	}
	var order []string
	for _, o := range b.sel.OrderBy {
		dir := " " + strings.ToUpper(o.Direction)
		if n := b.orderPosition(o.Expr); n > 0 {
			order = append(order, strconv.Itoa(n)+dir)
			continue
		}
		s, err := rw.exprString(o.Expr)
		if err != nil {
			return err
		}
		order = append(order, s+dir)
	}
	pre = append(pre, b.stored...)
	vcols, err := b.varColumns(plan)
	if err != nil {
		return err
	}
	groups := make([]string, 0, len(keys)+len(vcols))
	seen := map[string]bool{}
	for _, k := range keys {
		s, _ := b.print(k)
		if !seen[s] {
			seen[s] = true
			groups = append(groups, s)
		}
	}
	for i, v := range b.vars {
		pre = append(pre, vcols[i]+" AS "+b.q(v.Name))
		if !seen[vcols[i]] {
			seen[vcols[i]] = true
			groups = append(groups, vcols[i])
		}
	}
	from, err := b.from()
	if err != nil {
		return err
	}
	where, err := b.restWhere()
	if err != nil {
		return err
	}
	plan.precompute = "SELECT " + strings.Join(pre, ", ") + from + where
	if len(groups) > 0 {
		plan.precompute += " GROUP BY " + strings.Join(groups, ", ")
	}
	plan.readHead = "SELECT " + b.distinct() + strings.Join(read, ", ") + " FROM "
	group := ""
	if len(keys) > 0 {
		var ks []string
		for j := range keys {
			ks = append(ks, b.q(b.gen('k', j)))
		}
		group = " GROUP BY " + strings.Join(ks, ", ")
	}
	return b.tail(plan, group, having, order)
}

// groupKeys resolves the GROUP BY terms: positions and output aliases
// become the expressions they name.
func (b *builder) groupKeys() ([]sqlparser.Expr, error) {
	var keys []sqlparser.Expr
	for _, g := range b.sel.GroupBy {
		k := g
		if v, ok := g.(*sqlparser.SQLVal); ok && v.Type == sqlparser.IntVal {
			n, err := strconv.Atoi(string(v.Val))
			if err != nil || n < 1 || n > len(b.items) {
				return nil, fail(CodeUnsupportedQuery, "GROUP BY %s is not a column of the result", string(v.Val))
			}
			k = b.items[n-1].Expr
		} else if c, ok := g.(*sqlparser.ColName); ok && c.Qualifier.IsEmpty() {
			if i, ok := b.aliases[c.Name.Lowered()]; ok {
				k = b.items[i].Expr
			}
		}
		if hasAggregate(k) {
			return nil, fail(CodeAggregate, "GROUP BY an aggregate cannot be materialized")
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// part adds an aggregate expression to the stored table once and returns
// its quoted column name.
func (b *builder) part(text string) string {
	if name, ok := b.parts[text]; ok {
		return name
	}
	name := b.q(b.gen('a', len(b.parts)))
	b.parts[text] = name
	b.stored = append(b.stored, text+" AS "+name)
	return name
}

// combine returns the read expression that combines the stored parts of
// the aggregate f over the stored rows a run selects.
func (b *builder) combine(f *sqlparser.FuncExpr, grouped bool) (string, error) {
	name := strings.ToLower(f.Name.String())
	text, err := b.print(f)
	if err != nil {
		return "", err
	}
	if name == "count" && len(f.Exprs) == 0 && !f.Distinct {
		return "coalesce(sum(" + b.part(text) + "), 0)", nil // ClickHouse's count()
	}
	if len(f.Exprs) == 1 && (!f.Distinct || name == "min" || name == "max") {
		switch name {
		case "count":
			return "coalesce(sum(" + b.part(text) + "), 0)", nil
		case "sum", "total", "min", "max":
			return name + "(" + b.part(text) + ")", nil
		case "avg":
			ae, ok := f.Exprs[0].(*sqlparser.AliasedExpr)
			if !ok {
				return "", fail(CodeAggregate, "%s cannot be materialized", text)
			}
			arg, err := b.print(ae.Expr)
			if err != nil {
				return "", err
			}
			s, n := b.part("sum("+arg+")"), b.part("count("+arg+")")
			// Parenthesized: the caller prints it as an operand, like a call.
			return "(CAST(sum(" + s + ") AS " + b.floatType() + ") / sum(" + n + "))", nil
		}
	}
	// One stored row per group remains when every variable is compared
	// with =, so any aggregate passes through; over a range it cannot.
	for _, v := range b.vars {
		if v.ranged() {
			return "", fail(CodeAggregate, "%s cannot be combined again over a range of variable '%s'", text, v.Name)
		}
	}
	switch {
	case countLike[name]:
		return "coalesce(max(" + b.part(text) + "), 0)", nil
	case grouped || nullOnEmpty[name]:
		return "max(" + b.part(text) + ")", nil
	}
	return "", fail(CodeAggregate, "%s has no known value over no rows, which a run that matches nothing must return", text)
}

func (b *builder) floatType() string { return b.d.Type(engine.Float) }
