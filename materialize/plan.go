package materialize

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/xwb1989/sqlparser"
)

// Plan is the rewrite of a materializable query: the pre-compute query that
// fills the stored table, and the read query that answers a run from it.
type Plan struct {
	dialect    placeholder.Dialect
	precompute string
	// The read query is readHead, the table, the filters, readTail.
	readHead string
	readTail string
	filters  []filter
	columns  []string
}

// filter is one comparison of the read query: stored column op value.
type filter struct {
	variable string
	column   string // stored column name
	op       string
	bucket   Bucket
}

// Precompute returns the query whose result is the stored table. It holds no
// values: the variables' predicates are gone, and their columns are part of
// the result.
func (p *Plan) Precompute() string { return p.precompute }

// Columns returns the names of the read query's result columns, the same
// as the inline query's.
func (p *Plan) Columns() []string { return append([]string(nil), p.columns...) }

// Dialect returns the dialect the plan's SQL is written in.
func (p *Plan) Dialect() placeholder.Dialect { return p.dialect }

// builder assembles one plan.
type builder struct {
	sel     *sqlparser.Select
	d       placeholder.Dialect
	prefix  string // of generated column names
	vars    []Variable
	uses    [][]use
	opts    Options
	ranged  bool // some variable is compared with a range operator
	names   []string
	aliases map[string]int // lower-case output alias -> item index
	items   []*sqlparser.AliasedExpr
	// precompute select list, and the parts already in it by canonical text
	stored []string
	parts  map[string]string
}

// reasonError carries a Reason out of the rewrite.
type reasonError struct{ r Reason }

func (e *reasonError) Error() string { return e.r.Message }

func fail(code Code, format string, args ...any) error {
	return &reasonError{Reason{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// build rewrites sel; a query it cannot rewrite returns a Reason.
func build(sel *sqlparser.Select, lx *lexed, vars []Variable, uses [][]use, opts Options) (*Plan, *Reason) {
	b := &builder{sel: sel, d: opts.Dialect, vars: vars, uses: uses, opts: opts,
		aliases: map[string]int{}, parts: map[string]string{}}
	plan, err := b.build(lx)
	if err != nil {
		var re *reasonError
		if errors.As(err, &re) {
			return nil, &re.r
		}
		var ue *unsupportedError
		if errors.As(err, &ue) {
			return nil, &Reason{Code: CodeUnsupportedQuery, Message: "the query uses " + ue.Error() + " by the materialization printer"}
		}
		return nil, &Reason{Code: CodeUnsupportedQuery, Message: err.Error()}
	}
	return plan, nil
}

func (b *builder) build(lx *lexed) (*Plan, error) {
	sel := b.sel
	pr := &printer{d: b.d}
	pr.checkSelectOptions(sel)
	if pr.err != nil {
		return nil, pr.err
	}
	if err := b.outputs(lx); err != nil {
		return nil, err
	}
	if err := b.checkAliases(); err != nil {
		return nil, err
	}
	b.prefix = "_"
	for b.collides() {
		b.prefix += "_"
	}
	aggregating := len(sel.GroupBy) > 0 || sel.Having != nil || hasAggregate(sel.SelectExprs) || hasAggregate(sel.OrderBy)
	if sel.Limit != nil && len(sel.OrderBy) == 0 && (!aggregating || len(sel.GroupBy) > 0) {
		// Which rows come first is up to the engine, and the stored table
		// would pick differently from the source.
		return nil, fail(CodeUnsupportedQuery, "LIMIT without ORDER BY picks arbitrary rows; add an ORDER BY")
	}
	for i := range b.vars {
		v := &b.vars[i]
		if v.ranged() {
			b.ranged = true
			if aggregating && b.opts.Types[v.Name] == variable.Date {
				v.Bucket = DefaultBucket
				if o, ok := b.opts.Buckets[v.Name]; ok {
					v.Bucket = o
				}
			}
		}
	}
	plan := &Plan{dialect: b.d, columns: b.names}
	var err error
	if aggregating {
		err = b.aggregated(plan)
	} else {
		err = b.plain(plan)
	}
	if err != nil {
		return nil, err
	}
	return plan, nil
}

// outputs collects the SELECT items and the names of the result columns.
func (b *builder) outputs(lx *lexed) error {
	spans := lx.selectItems()
	if len(spans) != len(b.sel.SelectExprs) {
		spans = nil
	}
	for i, se := range b.sel.SelectExprs {
		ae, ok := se.(*sqlparser.AliasedExpr)
		if !ok {
			return fail(CodeUnsupportedQuery, "SELECT * cannot be materialized; list the columns")
		}
		if hasNode(ae.Expr, func(n sqlparser.SQLNode) bool { _, ok := n.(*sqlparser.Subquery); return ok }) {
			return fail(CodeUnsupportedQuery, "a subquery in the SELECT list cannot be materialized")
		}
		var name string
		switch {
		case !ae.As.IsEmpty():
			name = ae.As.String()
			b.aliases[strings.ToLower(name)] = i
		default:
			if c, ok := ae.Expr.(*sqlparser.ColName); ok {
				name = c.Name.String()
			} else if spans != nil {
				name = lx.span(spans[i][0], spans[i][1])
			} else {
				name, _ = (&printer{d: b.d}).exprString(ae.Expr)
			}
		}
		b.items = append(b.items, ae)
		b.names = append(b.names, name)
	}
	return nil
}

// checkAliases refuses output aliases whose meaning depends on the source
// tables, which the rewrite cannot see: SQLite resolves a name in WHERE,
// GROUP BY and HAVING to a column of FROM first and to an output alias only
// when there is no such column, while the rewrite resolves GROUP BY and
// HAVING names to aliases and stores WHERE columns as they are.
func (b *builder) checkAliases() error {
	shadows := map[string]bool{} // aliases that stand for something else than a column of that name
	for name, i := range b.aliases {
		if c, ok := b.items[i].Expr.(*sqlparser.ColName); ok && c.Name.Lowered() == name {
			continue
		}
		shadows[name] = true
	}
	if len(shadows) == 0 {
		return nil
	}
	for i, v := range b.vars {
		c := b.uses[i][0].col
		if c.Qualifier.IsEmpty() && shadows[c.Name.Lowered()] {
			return &reasonError{Reason{Code: CodeNotColumn, Variable: v.Name,
				Message: fmt.Sprintf("is compared to %s, an output alias rather than a column", c.Name.String())}}
		}
	}
	referenced := map[string]bool{}
	collect := func(n sqlparser.SQLNode) {
		_ = sqlparser.Walk(func(c sqlparser.SQLNode) (bool, error) {
			if col, ok := c.(*sqlparser.ColName); ok {
				referenced[col.Name.Lowered()] = true
			}
			return true, nil
		}, n)
	}
	collect(b.sel.SelectExprs)
	collect(b.sel.From)
	if b.sel.Where != nil {
		collect(b.sel.Where)
	}
	for _, n := range []sqlparser.SQLNode{b.sel.Having, b.sel.OrderBy} {
		if h, ok := n.(*sqlparser.Where); ok && h == nil {
			continue
		}
		// Names inside aggregates are columns of FROM, never aliases.
		_ = sqlparser.Walk(func(c sqlparser.SQLNode) (bool, error) {
			if e, ok := c.(sqlparser.Expr); ok && isAggregate(e) {
				collect(c)
				return false, nil
			}
			return true, nil
		}, n)
	}
	used := map[string]bool{}
	for _, g := range b.sel.GroupBy {
		if c, ok := g.(*sqlparser.ColName); ok && c.Qualifier.IsEmpty() {
			used[c.Name.Lowered()] = true
		}
	}
	if b.sel.Having != nil {
		_ = sqlparser.Walk(func(c sqlparser.SQLNode) (bool, error) {
			if col, ok := c.(*sqlparser.ColName); ok && col.Qualifier.IsEmpty() {
				used[col.Name.Lowered()] = true
			}
			return true, nil
		}, b.sel.Having)
	}
	for name := range shadows {
		if referenced[name] && used[name] {
			return fail(CodeUnsupportedQuery, "the output alias %s is also the name of a column, which GROUP BY or HAVING would read as the column; give the alias another name", name)
		}
	}
	return nil
}

// collides reports whether a variable's code name could equal a generated
// column name with the current prefix.
func (b *builder) collides() bool {
	for _, v := range b.vars {
		rest, ok := strings.CutPrefix(v.Name, b.prefix)
		if ok && len(rest) > 1 && strings.ContainsRune("ckao", rune(rest[0])) {
			if _, err := strconv.Atoi(rest[1:]); err == nil {
				return true
			}
		}
	}
	return false
}

func (b *builder) gen(kind byte, i int) string {
	return b.prefix + string(kind) + strconv.Itoa(i)
}

func (b *builder) q(name string) string { return b.d.QuoteIdent(name) }

func (b *builder) print(e sqlparser.Expr) (string, error) {
	return (&printer{d: b.d}).exprString(e)
}

// restWhere returns the WHERE terms that hold no variable, printed.
func (b *builder) restWhere() (string, error) {
	if b.sel.Where == nil {
		return "", nil
	}
	var terms []string
	for _, t := range andTerms(b.sel.Where.Expr) {
		if len(findBinds(t)) > 0 {
			continue
		}
		s, err := b.print(t)
		if err != nil {
			return "", err
		}
		if _, ok := t.(*sqlparser.OrExpr); ok {
			s = "(" + s + ")"
		}
		terms = append(terms, s)
	}
	if len(terms) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(terms, " AND "), nil
}

// varColumns returns each variable's stored expression, and sets the read
// filters of plan.
func (b *builder) varColumns(plan *Plan) ([]string, error) {
	var exprs []string
	for i, v := range b.vars {
		col, err := b.print(b.uses[i][0].col)
		if err != nil {
			return nil, err
		}
		if v.Bucket != "" {
			col = v.Bucket.expr(b.d, col)
		}
		exprs = append(exprs, col)
		for _, u := range b.uses[i] {
			plan.filters = append(plan.filters, filter{variable: v.Name, column: v.Name, op: u.op, bucket: v.Bucket})
		}
	}
	return exprs, nil
}

func (b *builder) from() (string, error) {
	pr := &printer{d: b.d}
	pr.from(b.sel.From)
	return pr.b.String(), pr.err
}

func (b *builder) limit() (string, error) {
	pr := &printer{d: b.d}
	pr.limit(b.sel.Limit)
	return pr.b.String(), pr.err
}

// orderPosition returns the 1-based output position an ORDER BY term names
// (a number, an output alias, or an output expression), or 0.
func (b *builder) orderPosition(e sqlparser.Expr) int {
	if v, ok := e.(*sqlparser.SQLVal); ok && v.Type == sqlparser.IntVal {
		n, err := strconv.Atoi(string(v.Val))
		if err == nil && n >= 1 && n <= len(b.items) {
			return n
		}
	}
	if c, ok := e.(*sqlparser.ColName); ok && c.Qualifier.IsEmpty() {
		if i, ok := b.aliases[c.Name.Lowered()]; ok {
			return i + 1
		}
	}
	canon := canonical(e)
	for i, it := range b.items {
		if canonical(it.Expr) == canon {
			return i + 1
		}
	}
	return 0
}

func (b *builder) distinct() string {
	if b.sel.Distinct != "" {
		return "DISTINCT "
	}
	return ""
}

// plain rewrites a query without aggregates: the stored table holds its
// rows before the variables' filters, with the compared columns.
func (b *builder) plain(plan *Plan) error {
	var pre, read []string
	for i, it := range b.items {
		s, err := b.print(it.Expr)
		if err != nil {
			return err
		}
		pre = append(pre, s+" AS "+b.q(b.gen('c', i)))
		read = append(read, b.q(b.gen('c', i))+" AS "+b.q(b.names[i]))
	}
	var order []string
	for _, o := range b.sel.OrderBy {
		dir := " " + strings.ToUpper(o.Direction)
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
		order = append(order, b.q(hidden)+dir)
	}
	vcols, err := b.varColumns(plan)
	if err != nil {
		return err
	}
	for i, v := range b.vars {
		pre = append(pre, vcols[i]+" AS "+b.q(v.Name))
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
	plan.readHead = "SELECT " + b.distinct() + strings.Join(read, ", ") + " FROM "
	return b.tail(plan, "", "", order)
}

// tail sets the read query's GROUP BY, HAVING, ORDER BY and LIMIT.
func (b *builder) tail(plan *Plan, group, having string, order []string) error {
	limit, err := b.limit()
	if err != nil {
		return err
	}
	var t strings.Builder
	t.WriteString(group)
	t.WriteString(having)
	if len(order) > 0 {
		t.WriteString(" ORDER BY " + strings.Join(order, ", "))
	}
	t.WriteString(limit)
	plan.readTail = t.String()
	return nil
}

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
			return "CAST(sum(" + s + ") AS " + b.floatType() + ") / sum(" + n + ")", nil
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

func (b *builder) floatType() string {
	switch b.d {
	case placeholder.PostgreSQL:
		return "DOUBLE PRECISION"
	case placeholder.MySQL:
		return "DOUBLE"
	case placeholder.ClickHouse:
		return "Float64"
	}
	return "REAL"
}
