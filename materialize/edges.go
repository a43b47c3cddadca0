package materialize

import (
	"fmt"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
	"github.com/endpointkit/endpointkit/variable"
)

// source is what a read needs to compute stored rows from the source data
// itself: the pre-compute query in pieces, so that a read can add the
// variables' own predicates to it. A read does so for the partial buckets
// at the edges of a date range (Exact range edges, below).
type source struct {
	// selectList is the pre-compute query's SELECT list, whose columns
	// are columns (in this order) of the stored table.
	selectList string
	columns    []string
	from       string
	// scopedFrom is from as the caller's scope rewrote it (ScopeSource),
	// with placeholders a read binds from its values; nil when the plan
	// is not scoped, and from is written as it is.
	scopedFrom *placeholder.Template
	rest       string // the WHERE terms without variables, AND-ed; "" if none
	groupBy    string // " GROUP BY ..." or ""
	tail       string // the tail column, printed; "" without a live tail
}

// BuiltAtVariable is the placeholder of the pre-compute query of a plan
// with a live tail, and the key of the value its reads take: the instant
// the stored table is built at. The stored table keeps the source rows
// whose time is at or before it; a read adds the rows after it from the
// source. Bind the same instant to both.
const BuiltAtVariable = "__endpointkit_built_at"

// Tail reports whether the plan has a live tail: its pre-compute query
// holds the placeholder {variables.__endpointkit_built_at} (render it, with
// placeholder, bound to the build instant), and every read needs that
// instant under BuiltAtVariable.
func (p *Plan) Tail() bool { return p.source != nil && p.source.tail != "" }

// scopeProbe starts the statement ScopeSource gives its scope: the FROM
// clause of the source after a select list that reads nothing.
const scopeProbe = "SELECT 1"

// ScopeSource returns a copy of p whose reads compute rows from the source
// (the partial buckets of an unaligned range, a live tail's newer rows)
// through scope, as the pre-compute query is: scope receives a statement
// reading the source's FROM clause, and returns it rewritten, keeping its
// leading "SELECT 1" and everything outside the table references as they
// are (access.Scope does), with placeholders for what each read binds
// (a tenant: put its value in the values of Read and ReadPage). A plan
// whose reads never touch the source is returned as it is.
func (p *Plan) ScopeSource(scope func(query string) (string, error)) (*Plan, error) {
	if p.source == nil {
		return p, nil
	}
	scoped, err := scope(scopeProbe + p.source.from)
	if err != nil {
		return nil, err
	}
	from, ok := strings.CutPrefix(scoped, scopeProbe)
	if !ok {
		return nil, fmt.Errorf("materialize: the scope of the source rewrote its select list: %q", scoped)
	}
	tmpl, err := placeholder.CompileFor(p.dialect.Lexical(), from)
	if err != nil {
		return nil, fmt.Errorf("materialize: the scoped source: %w", err)
	}
	q := *p
	src := *p.source
	src.scopedFrom = tmpl
	q.source = &src
	return &q, nil
}

// Exact range edges
//
// A Date variable compared with a range operator is stored by bucket. A
// run whose date is on a bucket's boundary reads whole buckets. One whose
// date is not (2025-03-01 13:30 against day buckets) reads the whole
// buckets inside the range from the stored table, and computes the rows
// of the partial buckets at its edges from the source data, with every
// variable's predicate as the inline query has it; the two are merged with
// UNION ALL and aggregated again, as stored rows always are. Both parts
// hold rows of the stored table's grain, so every aggregate the read can
// combine (count, sum, min, max, avg, DISTINCT ones kept in the grain) is
// exact, and the source is read over the edges only: with an index on the
// time column, a few hours of rows.

// interval is the span of whole buckets [lo, hi) of one bucketed variable
// whose every instant satisfies all its predicates; a nil end is unbounded.
type interval struct {
	lo, hi *time.Time
}

// empty reports whether no bucket is whole inside the interval.
func (iv interval) empty() bool { return iv.lo != nil && iv.hi != nil && !iv.lo.Before(*iv.hi) }

// intervals returns the interval of each bucketed variable for values, and
// whether every one of its predicates falls on a boundary, so that the
// stored table answers alone.
func (p *Plan) intervals(values map[string]any) (map[string]interval, bool, error) {
	out := map[string]interval{}
	aligned := true
	for _, f := range p.filters {
		if f.bucket == "" {
			continue
		}
		t, err := f.instant(values)
		if err != nil {
			return nil, false, err
		}
		iv := out[f.variable]
		floor := f.bucket.Floor(t)
		next := f.bucket.Next(floor)
		switch f.op {
		case ">=":
			if floor.Equal(t) {
				iv.lo = later(iv.lo, t)
			} else {
				iv.lo, aligned = later(iv.lo, next), false
			}
		case ">":
			iv.lo, aligned = later(iv.lo, next), false
		case "<":
			iv.hi = earlier(iv.hi, floor)
			aligned = aligned && floor.Equal(t)
		case "<=":
			iv.hi, aligned = earlier(iv.hi, floor), false
		default: // "=": a single instant, never a whole bucket
			iv.lo, iv.hi, aligned = later(iv.lo, next), earlier(iv.hi, floor), false
		}
		out[f.variable] = iv
	}
	return out, aligned, nil
}

func later(a *time.Time, b time.Time) *time.Time {
	if a != nil && a.After(b) {
		return a
	}
	return &b
}

func earlier(a *time.Time, b time.Time) *time.Time {
	if a != nil && a.Before(b) {
		return a
	}
	return &b
}

// instant returns the date value of a bucketed filter, in UTC.
func (f filter) instant(values map[string]any) (time.Time, error) {
	switch x := values[f.variable].(type) {
	case variable.Timestamp:
		return x.Time.UTC(), nil
	case time.Time:
		return x.UTC(), nil
	default:
		return time.Time{}, &ValueError{Variable: f.variable, Detail: fmt.Sprintf("want a date, got Go type %T", x)}
	}
}

// writeMergedRead writes the read of a range with partial buckets, or of a
// plan with a live tail, but its ORDER BY and LIMIT: the stored rows of the
// whole buckets and the other rows, computed from the source, merged.
func (p *Plan) writeMergedRead(b *placeholder.Builder, table string, values map[string]any, ivs map[string]interval) error {
	groups := p.groups(values, ivs)
	whole, partial := true, false
	for i := range groups {
		whole = whole && !groups[i].inner.empty()
		partial = partial || len(groups[i].partial()) > 0
	}
	if whole && !partial && !p.Tail() {
		// Unaligned only in a looser bound (from >= a AND from >= b, b
		// on a boundary): the whole buckets are the answer.
		return p.writeStoredRead(b, table, values, func() error { return p.writeStoredFilters(b, values, ivs, nil, false) })
	}
	if cut, ok := p.tailCut(values); ok && whole && p.oneBucket != nil {
		return p.writeOneBucketMerged(b, table, values, ivs, groups, cut)
	}
	p.text(b, p.readHead, values)
	b.WriteString("(")
	if whole {
		b.WriteString("SELECT " + p.source.columnList(b) + " FROM ")
		b.WriteIdent(table)
		if err := p.writeStoredFilters(b, values, ivs, nil, false); err != nil {
			return err
		}
	}
	if err := p.writeSourceParts(b, values, groups, whole, !whole, nil); err != nil {
		return err
	}
	b.WriteString(") AS ")
	b.WriteIdent("stored_parts")
	p.text(b, p.readGroup, values)
	return nil
}

// writeSourceParts writes the branches of a merged read computed from the
// source, each after UNION ALL but the first when first: the partial
// buckets, then, with a live tail and whole buckets, the rows newer than
// the stored ones, or, with from set, those at or after it (the tail's
// rows and the stored ones of the cut's buckets, see summary.go).
func (p *Plan) writeSourceParts(b *placeholder.Builder, values map[string]any, groups []group, whole, first bool, from *time.Time) error {
	sep := " UNION ALL "
	if first {
		sep = ""
	}
	// One branch per partial bucket, each bounded tightly on its
	// expression so that an index on it serves, and disjoint from the
	// others: a branch of group i takes the rows inside the whole buckets
	// of the groups before it.
	for i, g := range groups {
		for _, seg := range g.partial() {
			b.WriteString(sep)
			sep = " UNION ALL "
			if err := p.writeSourceBranch(b, values, groups, i, &seg, nil); err != nil {
				return err
			}
		}
	}
	if p.Tail() && whole {
		// Rows newer than the stored ones, inside every whole bucket
		// (those outside are in the branches above).
		b.WriteString(sep)
		sep = " UNION ALL "
		newer := &bound{op: ">", v: values[BuiltAtVariable]}
		if from != nil {
			newer = boundAt(">=", from)
		}
		if err := p.writeSourceBranch(b, values, groups, len(groups), nil, newer); err != nil {
			return err
		}
	}
	if sep == "" {
		// Every bucket whole, none partial and no tail: writeMergedRead
		// reads the stored rows alone then, so this is never reached; an
		// empty operand would be an error.
		return fmt.Errorf("materialize: a merged read with nothing to merge")
	}
	return nil
}

// bound is one end of a range on an expression: op and the instant, and
// the value to bind, which is the run's own where the bound is a
// predicate's (a date-only value may compare otherwise than its instant:
// as text on SQLite), else the instant.
type bound struct {
	op string
	t  time.Time
	v  any
}

// segment is a range of an expression; a nil end is unbounded.
type segment struct{ lo, hi *bound }

// group is the bucketed variables compared with one expression (as
// date_from and date_to with timestamp): the tightest range their
// predicates leave, and the whole buckets inside it.
type group struct {
	raw     string
	outer   segment  // the predicates' range
	inner   interval // the whole buckets: [inner.lo, inner.hi)
	filters []filter
}

// groups returns the bucketed filters grouped by expression, in order.
func (p *Plan) groups(values map[string]any, ivs map[string]interval) []group {
	var out []group
	index := map[string]int{}
	for _, f := range p.filters {
		if f.bucket == "" {
			continue
		}
		i, ok := index[f.raw]
		if !ok {
			i = len(out)
			index[f.raw] = i
			out = append(out, group{raw: f.raw})
		}
		g := &out[i]
		g.filters = append(g.filters, f)
		t, _ := f.instant(values) // checked by checkValues
		v := values[f.variable]
		switch f.op {
		case ">=", ">":
			g.outer.lo = tighterLow(g.outer.lo, bound{f.op, t, v})
		case "<", "<=":
			g.outer.hi = tighterHigh(g.outer.hi, bound{f.op, t, v})
		default: // "="
			g.outer.lo = tighterLow(g.outer.lo, bound{">=", t, v})
			g.outer.hi = tighterHigh(g.outer.hi, bound{"<=", t, v})
		}
		iv := ivs[f.variable]
		if iv.lo != nil {
			g.inner.lo = later(g.inner.lo, *iv.lo)
		}
		if iv.hi != nil {
			g.inner.hi = earlier(g.inner.hi, *iv.hi)
		}
	}
	return out
}

func tighterLow(a *bound, b bound) *bound {
	if a != nil && (a.t.After(b.t) || a.t.Equal(b.t) && a.op == ">") {
		return a
	}
	return &b
}

func tighterHigh(a *bound, b bound) *bound {
	if a != nil && (a.t.Before(b.t) || a.t.Equal(b.t) && a.op == "<") {
		return a
	}
	return &b
}

// partial returns the segments of g's range outside its whole buckets:
// the range itself when no bucket is whole, else what lies before and
// after them.
func (g *group) partial() []segment {
	if g.inner.empty() {
		return []segment{g.outer}
	}
	var out []segment
	if g.inner.lo != nil && g.outer.lo != nil && g.outer.lo.t.Before(*g.inner.lo) {
		out = append(out, segment{lo: g.outer.lo, hi: &bound{"<", *g.inner.lo, nil}})
	}
	if g.inner.hi != nil && g.outer.hi != nil && (g.inner.hi.Before(g.outer.hi.t) || g.inner.hi.Equal(g.outer.hi.t) && g.outer.hi.op == "<=") {
		out = append(out, segment{lo: &bound{">=", *g.inner.hi, nil}, hi: g.outer.hi})
	}
	return out
}

// writeSourceBranch writes one SELECT of the source at the stored table's
// grain, with every predicate of the query: groups before only inside
// their whole buckets, group only within seg (when seg is not nil), the
// groups after as the query has them, and, when newer is not nil, only
// rows whose tail column is beyond it (after the build instant, or at or
// after a cut).
func (p *Plan) writeSourceBranch(b *placeholder.Builder, values map[string]any, groups []group, only int, seg *segment, newer *bound) error {
	b.WriteString("SELECT " + p.source.selectList)
	if p.source.scopedFrom != nil {
		b.WriteTemplate(p.source.scopedFrom, values)
	} else {
		b.WriteString(p.source.from)
	}
	sep := " WHERE "
	next := func() {
		b.WriteString(sep)
		sep = " AND "
	}
	// First: the planner takes the first range it meets on a column, and
	// these are the narrow ones.
	if seg != nil {
		next()
		writeSegment(b, groups[only].raw, *seg)
	}
	if newer != nil {
		next()
		b.WriteString(p.source.tail + " " + newer.op + " ")
		b.Bind(newer.value())
	}
	if p.source.rest != "" {
		next()
		b.WriteString(p.source.rest)
	}
	for _, f := range p.filters {
		if f.bucket != "" {
			continue
		}
		next()
		if err := f.write(b, "", false, values[f.variable]); err != nil {
			return err
		}
	}
	for i, g := range groups {
		// Every predicate as the inline query has it, the segment's group
		// too: which of two bounds at one instant is tighter (a date-only
		// value against a date-time one) depends on the engine.
		for _, f := range g.filters {
			next()
			if err := f.write(b, "", false, values[f.variable]); err != nil {
				return err
			}
		}
		if inner := (segment{lo: boundAt(">=", g.inner.lo), hi: boundAt("<", g.inner.hi)}); i < only && (inner.lo != nil || inner.hi != nil) {
			next()
			writeSegment(b, g.raw, inner)
		}
	}
	b.WriteString(p.source.groupBy)
	return nil
}

func boundAt(op string, t *time.Time) *bound {
	if t == nil {
		return nil
	}
	return &bound{op, *t, nil}
}

// writeSegment writes raw within seg, which has at least one end.
func writeSegment(b *placeholder.Builder, raw string, seg segment) {
	switch {
	case seg.lo != nil:
		b.WriteString(raw + " " + seg.lo.op + " ")
		b.Bind(seg.lo.value())
		if seg.hi == nil {
			return
		}
		b.WriteString(" AND ")
	}
	b.WriteString(raw + " " + seg.hi.op + " ")
	b.Bind(seg.hi.value())
}

// columnList returns the stored table's columns, quoted, in order.
func (s *source) columnList(b *placeholder.Builder) string {
	out := ""
	for i, c := range s.columns {
		if i > 0 {
			out += ", "
		}
		out += b.Engine().QuoteIdent(c)
	}
	return out
}

// writeStoredFilters writes the WHERE clause of the stored part: each
// variable that is not bucketed as in a plain read, each bucketed one
// within its whole buckets, and, with a cut, only the rows before it or,
// when after, only those at or after it (see tailCut).
func (p *Plan) writeStoredFilters(b *placeholder.Builder, values map[string]any, ivs map[string]interval, cut *tailCut, after bool) error {
	sep := " WHERE "
	next := func() {
		b.WriteString(sep)
		sep = " AND "
	}
	for _, f := range p.filters {
		if f.bucket != "" {
			continue
		}
		next()
		if err := f.write(b, f.column, true, values[f.variable]); err != nil {
			return err
		}
	}
	for _, f := range p.bucketColumns() {
		iv := cut.narrow(ivs[f.variable], f.column, after)
		for _, end := range []struct {
			t  *time.Time
			op string
		}{{iv.lo, ">="}, {iv.hi, "<"}} {
			if end.t != nil {
				next()
				writeCompare(b, f.column, end.op, *end.t)
			}
		}
	}
	if cut == nil || after || len(cut.filters) == 1 {
		return nil
	}
	next()
	b.WriteString("(")
	for i, f := range cut.filters {
		if i > 0 {
			b.WriteString(" OR ")
		}
		writeCompare(b, f.column, "<", cut.at[i])
	}
	b.WriteString(")")
	return nil
}

// writeCompare writes the stored column compared with the instant t.
func writeCompare(b *placeholder.Builder, column, op string, t time.Time) {
	b.WriteIdent(column)
	b.WriteString(" " + op + " ")
	b.Bind(variable.Timestamp{Time: t})
}

// bucketColumns returns one filter per bucketed variable.
func (p *Plan) bucketColumns() []filter {
	var out []filter
	seen := map[string]bool{}
	for _, f := range p.filters {
		if f.bucket != "" && !seen[f.variable] {
			seen[f.variable] = true
			out = append(out, f)
		}
	}
	return out
}

// withTail adds the live tail's bound to the pre-compute query's WHERE
// (where, as restWhere returns it), and returns the printed tail column.
func (b *builder) withTail(where string) (string, string, error) {
	name := b.opts.TailColumn
	if name == "" {
		return where, "", nil
	}
	col := &tree.ColName{Name: tree.NewIdent(name)}
	if q, n, ok := strings.Cut(name, "."); ok {
		col = &tree.ColName{Qualifier: tree.TableName{Parts: []tree.Ident{tree.NewIdent(q)}}, Name: tree.NewIdent(n)}
	}
	tail, err := b.print(col)
	if err != nil {
		return "", "", err
	}
	bound := tail + " <= {variables." + BuiltAtVariable + "}"
	if where == "" {
		return " WHERE " + bound, tail, nil
	}
	return where + " AND " + bound, tail, nil
}

// value returns what bd binds: the run's own value where the bound is a
// predicate's, else the instant, as a date when it is a UTC midnight. A
// date takes the type of what it is compared with on every engine: a Date
// column on ClickHouse reads a String parameter as a date and refuses
// '2013-07-31 00:00:00', a PostgreSQL date column reads an untyped one as a
// date, and a date-time column or a timestamp reads the date as its
// midnight. Text in the layout YYYY-MM-DD HH:MM:SS compares with the date
// as with the midnight's text under >= and <, the operators of the bounds
// a read makes.
func (bd *bound) value() any {
	if bd.v != nil {
		return bd.v
	}
	t := bd.t.UTC()
	return variable.Timestamp{Time: t, DateOnly: t.Equal(engine.Day.Floor(t))}
}

// EdgeProbe is one read of the source data that runs of a plan make beside
// its stored table, for a check of its query plan (see Plan.EdgeProbes):
// Name says which, in the user's words, SQL and Args are the read.
type EdgeProbe struct {
	Name string
	SQL  string
	Args []any
}

// EdgeProbes returns the reads of the source data that runs of p make
// beside the stored table, one of each kind, as of the build instant at:
// the partial bucket of each bucketed expression (the hour before at),
// and with a live tail the rows newer than at (up to the end of its day,
// as a run up to today reads them). Each is the SELECT of such
// a branch with the time range and the query's own filters but without
// the variables' predicates, whose values a run gives: what it asks of
// the engine is whether an index serves the range on the time column
// (with the tenant first where the plan is scoped; put the tenant in
// values as a run does). A plan whose reads never touch the source has
// none.
func (p *Plan) EdgeProbes(at time.Time, values map[string]any) ([]EdgeProbe, error) {
	if p.source == nil {
		return nil, nil
	}
	at = at.UTC().Truncate(time.Second)
	var out []EdgeProbe
	seen := map[string]bool{}
	for _, f := range p.filters {
		if f.bucket == "" || seen[f.raw] {
			continue
		}
		seen[f.raw] = true
		seg := segment{lo: &bound{">=", at.Add(-time.Hour), nil}, hi: &bound{"<", at, nil}}
		probe, err := p.edgeProbe("the partial buckets of "+f.raw, values, func(b *placeholder.Builder) { writeSegment(b, f.raw, seg) })
		if err != nil {
			return nil, err
		}
		out = append(out, probe)
	}
	if p.Tail() {
		// As a run up to the build instant's day: its own upper bound (a
		// whole bucket's end) makes the tail a two-sided range, which
		// SQLite prefers to an index in the GROUP BY's order.
		end := engine.Day.Next(engine.Day.Floor(at))
		probe, err := p.edgeProbe("the live tail ("+p.source.tail+" after the build)", values, func(b *placeholder.Builder) {
			b.WriteString(p.source.tail + " > ")
			b.Bind(variable.Timestamp{Time: at})
			b.WriteString(" AND " + p.source.tail + " < ")
			b.Bind(variable.Timestamp{Time: end, DateOnly: true})
		})
		if err != nil {
			return nil, err
		}
		out = append(out, probe)
	}
	return out, nil
}

// edgeProbe writes one probe of EdgeProbes: a source branch as
// writeSourceBranch writes it, with the range cond writes, the query's
// own filters, and no variable's predicate.
func (p *Plan) edgeProbe(name string, values map[string]any, cond func(b *placeholder.Builder)) (EdgeProbe, error) {
	b := placeholder.NewBuilder(p.dialect)
	b.WriteString("SELECT " + p.source.selectList)
	if p.source.scopedFrom != nil {
		b.WriteTemplate(p.source.scopedFrom, values)
	} else {
		b.WriteString(p.source.from)
	}
	b.WriteString(" WHERE ")
	cond(b)
	if p.source.rest != "" {
		b.WriteString(" AND " + p.source.rest)
	}
	b.WriteString(p.source.groupBy)
	if err := b.Err(); err != nil {
		return EdgeProbe{}, fmt.Errorf("materialize: edge probe: %w", err)
	}
	return EdgeProbe{Name: name, SQL: b.SQL(), Args: b.Args()}, nil
}
