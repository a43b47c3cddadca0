package materialize

import (
	"slices"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// aggregated rewrites a query with aggregates: the stored table holds one
// row per group of the query and value of the variables' columns, with the
// parts the read combines again.
func (b *builder) aggregated(plan *Plan) error {
	keys, err := b.groupKeys()
	if err != nil {
		return err
	}
	keys, readGroup, err := b.expandKeys(keys)
	if err != nil {
		return err
	}
	pre, err := b.keyColumns(keys)
	if err != nil {
		return err
	}
	b.oneBucketShape = b.oneBucketable(keys)
	// Reading adds the aggregates' parts to b.stored, so the read query is
	// printed before the stored table's select list is complete.
	r := b.readPrinter(keys)
	read, having, err := b.readSelect(r)
	if err != nil {
		return err
	}
	order, err := b.readOrder(r)
	if err != nil {
		return err
	}
	pre = append(pre, b.stored...)
	if err := b.aggregatedPrecompute(plan, keys, pre); err != nil {
		return err
	}
	plan.readHead = "SELECT " + b.distinct() + strings.Join(read, ", ") + " FROM "
	group := ""
	if len(readGroup) > 0 {
		group = " GROUP BY " + strings.Join(readGroup, ", ")
	}
	plan.taken = b.storedColumns(len(keys))
	if err := b.tail(plan, group, having, order); err != nil {
		return err
	}
	return b.setOneBucket(plan, keys, r)
}

// readSelect prints the read's items and its HAVING clause with r; r
// prints aliases from then on.
func (b *builder) readSelect(r *readPrinter) ([]string, string, error) {
	r.aliases = false
	read, err := b.readItems(r)
	if err != nil {
		return nil, "", err
	}
	r.aliases = true
	having, err := b.readHaving(r)
	return read, having, err
}

// aggregatedPrecompute sets the pre-compute query of plan, pre being its
// select list but the variables' columns, and the source a merged read
// computes stored rows from.
func (b *builder) aggregatedPrecompute(plan *Plan, keys []tree.Expr, pre []string) error {
	// What a read merges: the stored columns but the variables', which
	// the parts' own filters have used.
	merged := slices.Clone(pre)
	vcols, from, where, bounded, tail, err := b.precomputeParts(plan)
	if err != nil {
		return err
	}
	b.storedFrom = storedFrom{vcols: vcols, from: from, bounded: bounded}
	for i := range b.vars {
		pre = append(pre, vcols[i]+" AS "+b.q(b.varColumn(i)))
	}
	plan.precompute = "SELECT " + strings.Join(pre, ", ") + from + bounded
	plan.sourceCount = "SELECT count(*)" + from + bounded
	if groups := b.precomputeGroups(keys, vcols); len(groups) > 0 {
		plan.precompute += " GROUP BY " + strings.Join(groups, ", ")
	}
	if b.bucketed() || tail != "" {
		plan.source = &source{selectList: strings.Join(merged, ", "), columns: b.storedColumns(len(keys)),
			from: from, rest: strings.TrimPrefix(where, " WHERE "), tail: tail}
		if groups := b.precomputeGroups(keys, nil); len(groups) > 0 {
			plan.source.groupBy = " GROUP BY " + strings.Join(groups, ", ")
		}
	}
	return nil
}

// bucketed reports whether some variable is stored by bucket.
func (b *builder) bucketed() bool {
	for _, v := range b.vars {
		if v.Bucket != "" {
			return true
		}
	}
	return false
}

// storedColumns returns the names of the stored table's columns that a
// merged read takes, in order: the group keys, the aggregates' parts and
// grain.
func (b *builder) storedColumns(keys int) []string {
	var cols []string
	for j := range keys {
		cols = append(cols, b.gen('k', j))
	}
	return append(cols, b.storedNames...)
}

// keyColumns returns the stored table's group key columns, the keys
// printed under their generated names.
func (b *builder) keyColumns(keys []tree.Expr) ([]string, error) {
	var cols []string
	for j, k := range keys {
		s, err := b.print(k)
		if err != nil {
			return nil, err
		}
		cols = append(cols, s+" AS "+b.q(b.gen('k', j)))
	}
	return cols, nil
}

// precomputeGroups returns the GROUP BY terms of the pre-compute query:
// the group keys, then the variables' columns, each once.
func (b *builder) precomputeGroups(keys []tree.Expr, vcols []string) []string {
	groups := make([]string, 0, len(keys)+len(vcols))
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			groups = append(groups, s)
		}
	}
	for _, k := range keys {
		s, _ := b.print(k) // printed without error by keyColumns
		add(s)
	}
	for _, c := range vcols {
		add(c)
	}
	for _, g := range b.grain {
		add(g)
	}
	return groups
}

// readItems returns the read query's SELECT list, each item under the name
// of its result column.
func (b *builder) readItems(r *readPrinter) ([]string, error) {
	var read []string
	for i, it := range b.items {
		s, err := r.print(it.Expr)
		if err != nil {
			return nil, err
		}
		read = append(read, s+" AS "+b.q(b.names[i]))
	}
	return read, nil
}

// readHaving returns the read query's HAVING clause, or "".
func (b *builder) readHaving(r *readPrinter) (string, error) {
	if b.sel.Having == nil {
		return "", nil
	}
	s, err := r.print(b.sel.Having)
	if err != nil {
		return "", err
	}
	return " HAVING " + s, nil
}

// readOrder returns the read query's ORDER BY terms: a term that names an
// output column becomes its position.
func (b *builder) readOrder(r *readPrinter) ([]string, error) {
	var order []string
	for _, o := range b.sel.OrderBy {
		if o.Nulls != "" || o.Fill != "" {
			return nil, &unsupportedError{"ORDER BY ... " + strings.TrimSpace(o.Nulls+" "+o.Fill)}
		}
		dir := " " + direction(o)
		if n := b.orderPosition(o.Expr); n > 0 {
			order = append(order, strconv.Itoa(n)+dir)
			continue
		}
		s, err := r.print(o.Expr)
		if err != nil {
			return nil, err
		}
		order = append(order, s+dir)
	}
	return order, nil
}

// readPrinter prints expressions of the read query over the stored table:
// a group key becomes its stored column, an aggregate the combination of
// its stored parts, and any other column is refused.
type readPrinter struct {
	b        *builder
	p        printer
	keyIndex map[string]int // canonical text of a group key -> its index
	grouped  bool
	// aliases reports whether output aliases name columns: they do in
	// HAVING and ORDER BY only; inside the SELECT list, and inside the
	// expression an alias stands for, a name is a column of FROM.
	aliases bool
}

func (b *builder) readPrinter(keys []tree.Expr) *readPrinter {
	r := &readPrinter{b: b, keyIndex: map[string]int{}, grouped: len(keys) > 0}
	for j, k := range keys {
		r.keyIndex[canonical(k)] = j
	}
	r.p = printer{d: b.d, hook: r.hook}
	return r
}

func (r *readPrinter) print(e tree.Expr) (string, error) { return r.p.exprString(e) }

// hook is the printer hook of the read query.
func (r *readPrinter) hook(e tree.Expr) (string, bool, error) {
	if j, ok := r.keyIndex[canonical(e)]; ok {
		return r.b.q(r.b.gen('k', j)), true, nil
	}
	switch x := e.(type) {
	case *tree.Placeholder:
		r.b.noteAtRead(x.Name)
		return readMarker(x.Name), true, nil
	case *tree.FuncExpr:
		if isAggregate(x) && lowered(x.Name) == "group_concat" {
			return "", false, fail(CodeAggregate, "group_concat cannot be materialized: the order of its values is not kept")
		}
		if isAggregate(x) {
			s, err := r.b.combine(x, r.grouped)
			return s, err == nil, err
		}
	case *tree.ColName:
		return r.column(x)
	case *tree.Subquery:
		return "", false, fail(CodeUnsupportedQuery, "a subquery outside FROM and WHERE cannot be materialized")
	}
	return "", false, nil
}

// column prints a column that is neither a group key nor inside an
// aggregate. Only an output alias, where aliases name columns, can be read:
// as the expression it stands for.
func (r *readPrinter) column(c *tree.ColName) (string, bool, error) {
	i, ok := r.b.aliases[lowered(c.Name)]
	if !ok || !r.aliases || !c.Qualifier.IsEmpty() {
		return "", false, fail(CodeAggregate, "the column %s is neither grouped nor aggregated", canonical(c))
	}
	r.aliases = false
	s, err := r.print(r.b.items[i].Expr)
	r.aliases = true
	return "(" + s + ")", err == nil, err
}

// groupKeys resolves the GROUP BY terms: positions and output aliases
// become the expressions they name.
func (b *builder) groupKeys() ([]tree.Expr, error) {
	var keys []tree.Expr
	for _, g := range b.sel.GroupBy {
		k := g
		if v, ok := intLiteral(g); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > len(b.items) {
				return nil, fail(CodeUnsupportedQuery, "GROUP BY %s is not a column of the result", v)
			}
			k = b.items[n-1].Expr
		} else if c, ok := g.(*tree.ColName); ok && c.Qualifier.IsEmpty() {
			if i, ok := b.aliases[lowered(c.Name)]; ok {
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
	b.storedNames = append(b.storedNames, b.gen('a', len(b.parts)-1))
	return name
}

// combine returns the read expression that combines the stored parts of
// the aggregate f over the stored rows a run selects.
func (b *builder) combine(f *tree.FuncExpr, grouped bool) (string, error) {
	name := lowered(f.Name)
	text, err := b.print(f)
	if err != nil {
		return "", err
	}
	if s, ok, err := b.recombine(f, name, text); ok || err != nil {
		return s, err
	}
	// One stored row per group remains when every variable is compared
	// with =, so any aggregate passes through; over a range or a list it
	// cannot.
	for _, v := range b.vars {
		if v.ranged() {
			return "", fail(CodeAggregate, "%s cannot be combined again over a range of variable '%s'", text, v.Name)
		}
		if slices.Contains(v.Operators, "in") {
			return "", fail(CodeAggregate, "%s cannot be combined again over the values of list variable '%s'", text, v.Name)
		}
		if b.expanded {
			return "", fail(CodeAggregate, "%s cannot be combined again over the stored rows of a group whose key holds a variable", text)
		}
		if v.several() {
			return "", fail(CodeAggregate, "%s cannot be combined again over the keys variable '%s' selects with %s", text, v.Name, sqlOperator(v.Operators[slices.IndexFunc(v.Operators, func(op string) bool { return op != "=" })]))
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

// recombine returns the read expression of an aggregate whose value over
// many rows follows from its values over parts of them (count, sum, total,
// min, max, avg of one argument; DISTINCT only in min and max), and false
// for any other.
func (b *builder) recombine(f *tree.FuncExpr, name, text string) (string, bool, error) {
	switch {
	case name == "count" && len(f.Exprs) == 0 && !f.Distinct:
		return b.sumOfCounts(b.part(text)), true, nil // ClickHouse's count()
	case len(f.Exprs) != 1:
		return "", false, nil
	case f.Distinct && name != "min" && name != "max" && b.summarized:
		return b.passThrough(name, text)
	case f.Distinct && name != "min" && name != "max":
		return b.distinctOverGrain(f, name, text)
	}
	switch name {
	case "sum", "total", "avg":
		if err := b.checkExactSum(f, name); err != nil {
			return "", false, err
		}
	}
	switch name {
	case "count":
		return b.sumOfCounts(b.part(text)), true, nil
	case "sum", "total", "min", "max":
		return name + "(" + b.part(text) + ")", true, nil
	case "avg":
		s, err := b.average(f, text)
		return s, err == nil, err
	}
	return "", false, nil
}

// distinctOverGrain combines count, sum or avg of DISTINCT x exactly by
// keeping x in the stored table's grain: the stored rows then hold every
// distinct x of every group, and the read aggregates their distinct values
// again. The table grows with the number of distinct x per group, so this
// is done only when a group can span several stored rows (a range or a
// list variable); with equalities only, the value passes through.
func (b *builder) distinctOverGrain(f *tree.FuncExpr, name, text string) (string, bool, error) {
	if name != "count" && name != "sum" && name != "avg" || !b.multiRow() {
		return "", false, nil
	}
	if name != "count" {
		if err := b.checkExactSum(f, name); err != nil {
			return "", false, err
		}
	}
	if _, ok := f.Exprs[0].(*tree.StarExpr); ok {
		return "", false, nil
	}
	arg, err := b.print(f.Exprs[0])
	if err != nil {
		return "", false, err
	}
	col := b.grainColumn(arg)
	if b.uniqueGrain {
		return name + "(" + col + ")", true, nil
	}
	if name == "count" {
		return "count(DISTINCT " + col + ")", true, nil
	}
	return name + "(DISTINCT " + col + ")", true, nil
}

// grainColumn adds the expression expr to the stored table's grain once
// and returns its quoted column name.
func (b *builder) grainColumn(expr string) string {
	if name, ok := b.grainNames[expr]; ok {
		return name
	}
	name := b.q(b.gen('d', len(b.grain)))
	b.grainNames[expr] = name
	b.grain = append(b.grain, expr)
	b.stored = append(b.stored, expr+" AS "+name)
	b.storedNames = append(b.storedNames, b.gen('d', len(b.grain)-1))
	return name
}

// multiRow reports whether the rows of one group of the query can be
// spread over several stored rows that a run selects together: some
// variable is compared with a range or a list.
func (b *builder) multiRow() bool {
	for _, v := range b.vars {
		if v.ranged() || v.several() {
			return true
		}
	}
	return b.expanded
}

// average combines avg(x) from the stored sum and count of x.
func (b *builder) average(f *tree.FuncExpr, text string) (string, error) {
	if _, ok := f.Exprs[0].(*tree.StarExpr); ok {
		return "", fail(CodeAggregate, "%s cannot be materialized", text)
	}
	arg, err := b.print(f.Exprs[0])
	if err != nil {
		return "", err
	}
	s, n := b.part("sum("+arg+")"), b.part("count("+arg+")")
	// Parenthesized: the caller prints it as an operand, like a call.
	if b.d.DecimalAggregates() {
		// The sum of the stored sums over the sum of the stored counts
		// (decimals) has the type avg has inline: a decimal when the
		// stored sums are integers or decimals (PostgreSQL's numeric,
		// MySQL's DECIMAL with div_precision_increment more digits), a
		// double when they are doubles.
		return "(sum(" + s + ") / sum(" + n + "))", nil
	}
	// SQLite's and ClickHouse's avg is a double whatever it averages. The
	// count is cast, not the sum: a sum of nothing but NULLs is NULL,
	// which ClickHouse cannot cast to a Float64 that is not Nullable.
	return "(sum(" + s + ") / CAST(sum(" + n + ") AS " + b.floatType() + "))", nil
}

func (b *builder) floatType() string { return b.d.Type(engine.Float) }

// sumOfCounts is the read of a count from its stored counts, typed as the
// count inline: PostgreSQL's sum of bigints is a numeric and MySQL's a
// DECIMAL (which their drivers answer as text), so it is cast back to the
// engine's integer; SQLite's and ClickHouse's sum of integers is one.
func (b *builder) sumOfCounts(part string) string {
	sum := "coalesce(sum(" + part + "), 0)"
	if b.d.DecimalAggregates() {
		return "CAST(" + sum + " AS " + b.d.IntegerCast() + ")"
	}
	return sum
}
