package materialize

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
	"github.com/endpointkit/endpointkit/variable"
)

// Plan is the rewrite of a materializable query: the pre-compute query that
// fills the stored table, and the read query that answers a run from it.
type Plan struct {
	dialect    engine.Engine
	precompute string
	// sourceCount counts the source rows the pre-compute query reads.
	sourceCount string
	// The read query is readHead, the table, the filters, readGroup
	// (GROUP BY and HAVING) and readEnd (ORDER BY and LIMIT).
	readHead  string
	readGroup string
	readEnd   string
	// oneBucket is the read of a plan whose groups each lie in one bucket
	// of every bucketed variable; nil for others.
	oneBucket *oneBucket
	// summarized: the stored table holds one row per group of the query
	// and value of the variables' columns, without the grain of its
	// DISTINCT aggregates (see summary.go).
	summarized bool
	// taken are the stored columns an aggregating read takes but compares
	// with no value: the group keys, the aggregates' parts and the grain.
	taken []string
	// limited: the read has a LIMIT of the query's own, which must pick
	// its rows before a page is taken from them.
	limited bool
	filters []filter
	// moves are the values of the moved uses of date variables, by the
	// name their filters bind (see dateShift).
	moves   map[string]move
	columns []string
	// source computes stored rows from the source data, for the partial
	// buckets of an unaligned range; nil when no variable is bucketed.
	source *source
	// outer is the query a read computes over the stored table's
	// answer, when the plan is of its one subquery (see nested.go).
	outer *outerRead
	// atRead are the variables the read binds where the query has them
	// (see atread.go): readHead, readGroup and oneBucket's parts hold
	// their readMarker.
	atRead []string
}

// filter is one comparison of the read query: stored column op value.
type filter struct {
	variable string
	column   string // stored column name
	op       string
	bucket   engine.Bucket
	raw      string // the variable's expression over a source row, printed
	// escape is the ESCAPE string of a [NOT] [I]LIKE as the query
	// writes it, printed; "" for none.
	escape string
	// or are the branches of an OR of variables (see or.go): the filter
	// is their OR, its variable the key of their values (orName).
	or []filter
}

// Precompute returns the query whose result is the stored table. It holds no
// values: the variables' predicates are gone, and their columns are part of
// the result.
func (p *Plan) Precompute() string { return p.precompute }

// Layout names the way this package lays out stored tables. It changes
// whenever a release stores a plan's table differently (summary.go's
// summarized groups were the last change), so that a host that keys its
// stored tables by it (as the endpoint's Service does) builds them anew
// after an upgrade instead of reading a table of the old layout with the
// new read.
const Layout = "2"

// SourceCount returns the query that counts the source rows the
// pre-compute query reads (its FROM and the filters it keeps, before any
// grouping): the stored table's rows over it tell how much a stored table
// saves. Like Precompute, it holds no values.
func (p *Plan) SourceCount() string { return p.sourceCount }

// Columns returns the names of the read query's result columns, the same
// as the inline query's.
func (p *Plan) Columns() []string { return append([]string(nil), p.columns...) }

// Engine returns the engine the plan's SQL is written for.
func (p *Plan) Engine() engine.Engine { return p.dialect }

// builder assembles one plan.
type builder struct {
	sel     *tree.Select
	d       engine.Engine
	prefix  string // of generated column names
	vars    []Variable
	uses    [][]use
	opts    Options
	names   []string
	aliases map[string]int // lower-case output alias -> item index
	items   []*tree.AliasedExpr
	// precompute select list, and the parts already in it by canonical text
	stored []string
	parts  map[string]string
	// grain: expressions kept in the stored table's GROUP BY for exact
	// DISTINCT aggregates, and their column names by printed text
	grain      []string
	grainNames map[string]string
	// storedNames are the column names of stored, in order
	storedNames []string
	// atRead are the variables the read binds in its SELECT list, GROUP
	// BY or HAVING (see atread.go), in order of first use.
	atRead []string
	// src is the query's text, which the tree's spans index.
	src string
	// storedFrom are the parts of the pre-compute query aggregatedPrecompute
	// printed, which the summary's pre-compute query reuses.
	storedFrom storedFrom
	// sums is what judging the sums found (see judgeSum); nil until a sum
	// is judged.
	sums *sumTypes
	// The flags, together (one word, not one each between pointers).
	ranged bool // some variable is compared with a range operator
	// subquery: sel is the one subquery of the query (see nested.go),
	// whose SELECT items are not the text's top-level ones.
	subquery bool
	// expanded: a group key holds a variable, and the stored table
	// groups by the columns it reads instead, so that a group of the
	// query spans several stored rows.
	expanded bool
	// uniqueGrain: the rows the read aggregates hold each value of the
	// one grain expression once (see oneBucket), so that DISTINCT
	// aggregates over it need no DISTINCT.
	uniqueGrain bool
	// oneBucketShape: every group of the query lies in one bucket of
	// each bucketed variable (see oneBucketable), so that a read adds up
	// no stored parts of one group but a DISTINCT aggregate's.
	oneBucketShape bool
	// summarized: the stored table holds one row per group of the query
	// and value of the variables' columns, with each DISTINCT aggregate
	// computed whole (see summary.go).
	summarized bool
}

// sumTypes is what judging a query's sums found of its columns' types.
type sumTypes struct {
	// untyped are the tables whose columns' unknown types a sum was
	// taken exact with (Analysis.Untyped); pending those of the sum
	// being judged.
	untyped []Table
	pending []*tree.TableName
	// floatColumn names the floating-point column the sum being judged
	// reads, for its refusal; "" for none.
	floatColumn string
}

// reasonError carries a Reason out of the rewrite; off, when not 0, is 1
// past the byte offset of the construct in the query.
type reasonError struct {
	r   Reason
	off int
}

// failAt is fail about the construct at byte offset off of the query.
func failAt(off int, code Code, format string, args ...any) error {
	return &reasonError{Reason{Code: code, Message: fmt.Sprintf(format, args...)}, off + 1}
}

func (e *reasonError) Error() string { return e.r.Message }

func fail(code Code, format string, args ...any) error {
	return &reasonError{r: Reason{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// build rewrites sel; a query it cannot rewrite returns a Reason. untyped
// are the tables whose columns' types its sums were taken exact without
// (Analysis.Untyped).
func build(sel *tree.Select, lx *lexed, vars []Variable, uses [][]use, opts Options, window *Reason, subquery bool) (plan *Plan, untyped []Table, reason *Reason) {
	if window != nil {
		if why := windowsRefusal(sel, vars, uses, opts); why != "" {
			r := *window
			r.Message = why
			return nil, nil, &r
		}
	}
	b := &builder{sel: sel, d: opts.Engine, vars: vars, uses: uses, opts: opts, subquery: subquery,
		aliases: map[string]int{}, parts: map[string]string{}, grainNames: map[string]string{}}
	plan, err := b.build(lx)
	if err != nil {
		return nil, nil, reasonOf(err, lx)
	}
	return plan, b.untyped(), nil
}

// untyped are the tables whose columns' types b's sums were taken exact
// without.
func (b *builder) untyped() []Table {
	if b.sums == nil {
		return nil
	}
	return b.sums.untyped
}

// reasonOf is the Reason of an error of the rewrite.
func reasonOf(err error, lx *lexed) *Reason {
	var re *reasonError
	if errors.As(err, &re) {
		r := re.r
		if re.off > 0 && r.Line == 0 {
			r.Line, r.Column = lineCol(lx.src, re.off-1)
		}
		return &r
	}
	var ue *unsupportedError
	if errors.As(err, &ue) {
		return &Reason{Code: CodeUnsupportedQuery, Message: "the query uses " + ue.Error() + " by the materialization printer"}
	}
	return &Reason{Code: CodeUnsupportedQuery, Message: err.Error()}
}

func (b *builder) build(lx *lexed) (*Plan, error) {
	b.src = lx.src
	pr := &printer{d: b.d}
	pr.checkSelectOptions(b.sel)
	if pr.err != nil {
		return nil, pr.err
	}
	if off, ok := dividedSum(b.d, false, nil, outerNodes(b.sel)...); ok {
		return nil, failAt(off, CodeUnsupportedQuery, "a sum() divided (/ or %%) cannot be materialized on %s: the read adds up the stored sums, and the sum of a bigint is a numeric there, so an integer division would keep its fraction; divide in the caller, or cast the sum first (CAST(sum(x) AS numeric) / 7) to divide as the read does", b.d.Name())
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
	aggregating := b.aggregating()
	if b.sel.Limit != nil && len(b.sel.OrderBy) == 0 && (!aggregating || len(b.sel.GroupBy) > 0) {
		// Which rows come first is up to the engine, and the stored table
		// would pick differently from the source.
		return nil, failAt(lx.topWord("limit", true), CodeUnsupportedQuery, "LIMIT without ORDER BY picks arbitrary rows; add an ORDER BY")
	}
	b.setRanges(aggregating)
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
	plan.atRead = b.atRead
	return plan, nil
}

// aggregating reports whether the query aggregates rows.
func (b *builder) aggregating() bool {
	sel := b.sel
	return len(sel.GroupBy) > 0 || sel.Having != nil || hasAggregate(selectNodes(sel.SelectExprs)...) || hasAggregate(orderNodes(sel.OrderBy)...)
}

// setRanges notes whether a variable is compared with a range operator,
// and has an aggregating query store its Date range variables by bucket.
func (b *builder) setRanges(aggregating bool) {
	for i := range b.vars {
		v := &b.vars[i]
		if !v.ranged() {
			continue
		}
		b.ranged = true
		if aggregating && b.opts.Types[v.Name] == variable.Date {
			v.Bucket = DefaultBucket
			if o, ok := b.opts.Buckets[v.Name]; ok {
				v.Bucket = o
			}
		}
	}
}

// outputs collects the SELECT items and the names of the result columns.
func (b *builder) outputs(lx *lexed) error {
	spans := lx.selectItems()
	if len(spans) != len(b.sel.SelectExprs) || b.subquery {
		spans = nil
	}
	for i, se := range b.sel.SelectExprs {
		off := -1
		if spans != nil {
			off = lx.tokens[spans[i][0]].start
		}
		ae, ok := se.(*tree.AliasedExpr)
		if !ok {
			return failAt(off, CodeUnsupportedQuery, "SELECT * cannot be materialized; list the columns")
		}
		if hasNode(ae.Expr, func(n tree.Node) bool { _, ok := n.(*tree.Subquery); return ok }) {
			return failAt(off, CodeUnsupportedQuery, "a subquery in the SELECT list cannot be materialized; join its table, or compute it in a subquery in FROM")
		}
		if ae.As.IsEmpty() && hasPlaceholder(ae.Expr) {
			// The engine names such a column after its bind marker.
			return failAt(off, CodeNotInWhere, "a SELECT item that holds a variable is computed at read only when it is named; write `expr AS name`")
		}
		var name string
		switch {
		case !ae.As.IsEmpty():
			name = ae.As.Name
			b.aliases[strings.ToLower(name)] = i
		default:
			if c, ok := ae.Expr.(*tree.ColName); ok {
				name = c.Name.Name
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

// collides reports whether a variable's code name could equal a generated
// column name with the current prefix.
func (b *builder) collides() bool {
	for _, v := range b.vars {
		rest, ok := strings.CutPrefix(v.Name, b.prefix)
		if ok && len(rest) > 1 && strings.ContainsRune("ckaovd", rune(rest[0])) {
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

func (b *builder) print(e tree.Expr) (string, error) {
	return (&printer{d: b.d}).exprString(e)
}

// restWhere returns the WHERE terms that hold no variable, printed.
func (b *builder) restWhere() (string, error) {
	if b.sel.Where == nil {
		return "", nil
	}
	var terms []string
	for _, t := range andTerms(b.sel.Where) {
		if len(findBinds(t)) > 0 {
			if t = constantHalf(t); t == nil {
				continue
			}
		}
		s, err := b.print(t)
		if err != nil {
			return "", err
		}
		if _, ok := t.(*tree.OrExpr); ok {
			s = "(" + s + ")"
		}
		terms = append(terms, s)
	}
	if len(terms) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(terms, " AND "), nil
}

// precomputeParts returns what both kinds of pre-compute query are built
// from: each variable's stored expression (varColumns, which also sets the
// read filters of plan), the FROM clause, the WHERE terms without
// variables (where), the same with the live tail's bound (bounded), and the
// printed tail column ("" without a tail).
func (b *builder) precomputeParts(plan *Plan) (vcols []string, from, where, bounded, tail string, err error) {
	if vcols, err = b.varColumns(plan); err != nil {
		return
	}
	if from, err = b.from(); err != nil {
		return
	}
	if where, err = b.restWhere(); err != nil {
		return
	}
	bounded, tail, err = b.withTail(where)
	return
}

// varColumns returns each variable's stored expression, and sets the read
// filters of plan.
func (b *builder) varColumns(plan *Plan) ([]string, error) {
	var exprs []string
	groups := map[int]int{} // OR group -> index of its filter
	for i, v := range b.vars {
		col, err := b.print(b.uses[i][0].expr)
		if err != nil {
			return nil, err
		}
		raw := col
		if !isPlain(b.uses[i][0].expr) {
			raw = "(" + raw + ")"
		}
		if v.Bucket != "" {
			col = bucketExpr(v.Bucket, b.d, col)
		}
		exprs = append(exprs, col)
		for _, u := range b.uses[i] {
			escape := ""
			if u.escape != nil {
				if escape, err = b.print(u.escape); err != nil {
					return nil, err
				}
			}
			if u.group > 0 {
				if v.Bucket != "" {
					return nil, fail(CodeUnderOr, "variable '%s' is used under OR and compared by range elsewhere; a variable of an OR must be compared with = or IN only", v.Name)
				}
				m := filter{variable: v.Name, column: b.varColumn(i), op: u.op, raw: raw, escape: escape}
				if g, ok := groups[u.group]; ok {
					plan.filters[g].or = append(plan.filters[g].or, m)
					continue
				}
				groups[u.group] = len(plan.filters)
				plan.filters = append(plan.filters, filter{variable: orName(u.group), op: "or", or: []filter{m}})
				continue
			}
			name := v.Name
			if u.shift != nil {
				if b.opts.Types[v.Name] != variable.Date {
					return nil, fail(CodeInExpression, "variable '%s' is moved by an interval, which only a Date variable can be", v.Name)
				}
				name = u.shift.name(v.Name)
				if plan.moves == nil {
					plan.moves = map[string]move{}
				}
				plan.moves[name] = move{variable: v.Name, by: u.shift.by}
			}
			plan.filters = append(plan.filters, filter{variable: name, column: b.varColumn(i), op: u.op, bucket: v.Bucket, raw: raw, escape: escape})
		}
	}
	return exprs, nil
}

// varColumn returns the name of the stored column of variable i: its code
// name when it is compared with a column, a generated name when with an
// expression, which could read the code name as a column on engines
// where aliases are visible in the select list (ClickHouse), or when the
// code name is a result column's name.
//
// On an engine with one alias space (ClickHouse), a code name that names a
// table or a table's alias in the query is a generated name too: the tenant scope reads a scoped table as
// (SELECT ...) AS <table>, and ClickHouse refuses a column alias and a
// table expression of one name ("Duplicate aliases events"), so that the
// stored table of WHERE event IN {variables.events} could not be built.
func (b *builder) varColumn(i int) string {
	if _, ok := b.uses[i][0].expr.(*tree.ColName); ok && !b.namesOther(b.vars[i].Name, b.uses[i][0].canon) && !(b.d.OneAliasSpace() && b.namesTable(b.vars[i].Name)) {
		return b.vars[i].Name
	}
	return b.gen('v', i)
}

// namesTable reports whether name is the name (its last part) or alias of
// a table expression anywhere in the query.
func (b *builder) namesTable(name string) bool {
	found := false
	_ = tree.Walk(func(n tree.Node) (bool, error) {
		t, ok := n.(*tree.AliasedTableExpr)
		if !ok {
			return !found, nil
		}
		if strings.EqualFold(t.As.Name, name) {
			found = true
		}
		if tn, ok := t.Expr.(*tree.TableName); ok && len(tn.Parts) > 0 && strings.EqualFold(tn.Parts[len(tn.Parts)-1].Name, name) {
			found = true
		}
		return !found, nil
	}, b.sel)
	return found
}

// namesOther reports whether name is the name of a result column other
// than the column canon, which ClickHouse would read in the read's WHERE
// as that result column (an aggregate there) rather than the stored one.
func (b *builder) namesOther(name, canon string) bool {
	for i, n := range b.names {
		if strings.EqualFold(n, name) && canonical(b.items[i].Expr) != canon {
			return true
		}
	}
	return false
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
func (b *builder) orderPosition(e tree.Expr) int {
	if v, ok := intLiteral(e); ok {
		n, err := strconv.Atoi(v)
		if err == nil && n >= 1 && n <= len(b.items) {
			return n
		}
	}
	if c, ok := e.(*tree.ColName); ok && c.Qualifier.IsEmpty() {
		if i, ok := b.aliases[lowered(c.Name)]; ok {
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

// tail sets the read query's GROUP BY, HAVING, ORDER BY and LIMIT.
func (b *builder) tail(plan *Plan, group, having string, order []string) error {
	limit, err := b.limit()
	if err != nil {
		return err
	}
	plan.readGroup = group + having
	if len(order) > 0 {
		plan.readEnd = " ORDER BY " + strings.Join(order, ", ")
	}
	plan.readEnd += limit
	plan.limited = b.sel.Limit != nil
	return nil
}

// isPlain reports whether e prints as one operand that needs no
// parentheses before a comparison operator.
func isPlain(e tree.Expr) bool {
	switch e.(type) {
	case *tree.ColName, *tree.FuncExpr, *tree.ConvertExpr:
		return true
	}
	return false
}

// intLiteral returns the text of e when it is a whole number written in
// decimal digits.
func intLiteral(e tree.Expr) (string, bool) {
	v, ok := e.(*tree.Literal)
	if !ok || v.Kind != tree.NumVal || v.Text == "" {
		return "", false
	}
	for i := 0; i < len(v.Text); i++ {
		if v.Text[i] < '0' || v.Text[i] > '9' {
			return "", false
		}
	}
	return v.Text, true
}
