package materialize

import (
	"fmt"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/xwb1989/sqlparser"
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
		floor := f.bucket.floor(t)
		next := f.bucket.next(floor)
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

// writeMerged writes the FROM operand of a read whose range has partial
// buckets: the stored rows of the whole buckets, and the rows of the
// partial ones computed from the source, merged.
func (p *Plan) writeMerged(b *placeholder.Builder, table string, values map[string]any, ivs map[string]interval) error {
	b.WriteString("(")
	stored := true
	for _, iv := range ivs {
		if iv.empty() {
			stored = false // no whole bucket: the source answers alone
		}
	}
	if stored {
		b.WriteString("SELECT " + p.source.columnList(b) + " FROM ")
		b.WriteIdent(table)
		if err := p.writeStoredFilters(b, values, ivs); err != nil {
			return err
		}
		b.WriteString(" UNION ALL ")
	}
	b.WriteString("SELECT " + p.source.selectList + p.source.from + " WHERE ")
	if p.source.rest != "" {
		b.WriteString(p.source.rest + " AND ")
	}
	for _, f := range p.filters {
		if err := p.writeRawPredicate(b, f, values); err != nil {
			return err
		}
		b.WriteString(" AND ")
	}
	// The source gives the partial buckets and, with a live tail, every
	// row newer than the stored ones.
	if p.Tail() {
		b.WriteString("(" + p.source.tail + " > ")
		b.Bind(asTimestamp(values[BuiltAtVariable]))
		b.WriteString(" OR ")
	}
	p.writeOutside(b, ivs)
	if p.Tail() {
		b.WriteString(")")
	}
	b.WriteString(p.source.groupBy + ") AS ")
	b.WriteIdent("stored_parts")
	return nil
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
// within its whole buckets.
func (p *Plan) writeStoredFilters(b *placeholder.Builder, values map[string]any, ivs map[string]interval) error {
	sep := " WHERE "
	for _, f := range p.filters {
		if f.bucket != "" {
			continue
		}
		b.WriteString(sep)
		sep = " AND "
		if err := f.write(b, f.column, true, values[f.variable]); err != nil {
			return err
		}
	}
	for _, f := range p.bucketColumns() {
		iv := ivs[f.variable]
		for _, end := range []struct {
			t  *time.Time
			op string
		}{{iv.lo, ">="}, {iv.hi, "<"}} {
			if end.t == nil {
				continue
			}
			b.WriteString(sep)
			sep = " AND "
			b.WriteIdent(f.column)
			b.WriteString(" " + end.op + " ")
			b.Bind(variable.Timestamp{Time: *end.t})
		}
	}
	return nil
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

// writeRawPredicate writes f as the inline query has it: the variable's
// expression over the source row compared with the value.
func (p *Plan) writeRawPredicate(b *placeholder.Builder, f filter, values map[string]any) error {
	return f.write(b, "", false, asTimestamp(values[f.variable]))
}

// asTimestamp returns a time.Time as the variable.Timestamp it binds as,
// and any other value as it is.
func asTimestamp(v any) any {
	if t, ok := v.(time.Time); ok {
		return variable.Timestamp{Time: t}
	}
	return v
}

// withTail adds the live tail's bound to the pre-compute query's WHERE
// (where, as restWhere returns it), and returns the printed tail column.
func (b *builder) withTail(where string) (string, string, error) {
	name := b.opts.TailColumn
	if name == "" {
		return where, "", nil
	}
	col := &sqlparser.ColName{Name: sqlparser.NewColIdent(name)}
	if q, n, ok := strings.Cut(name, "."); ok {
		col = &sqlparser.ColName{Qualifier: sqlparser.TableName{Name: sqlparser.NewTableIdent(q)}, Name: sqlparser.NewColIdent(n)}
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

// writeOutside writes the condition that a source row is outside the whole
// buckets of some bucketed variable: in a partial bucket at an edge.
func (p *Plan) writeOutside(b *placeholder.Builder, ivs map[string]interval) {
	b.WriteString("(")
	first := true
	for _, f := range p.bucketColumns() {
		iv := ivs[f.variable]
		if iv.empty() {
			b.WriteString("1 = 1)")
			return
		}
		for _, end := range []struct {
			t  *time.Time
			op string
		}{{iv.lo, "<"}, {iv.hi, ">="}} {
			if end.t == nil {
				continue
			}
			if !first {
				b.WriteString(" OR ")
			}
			first = false
			b.WriteString(f.raw + " " + end.op + " ")
			b.Bind(variable.Timestamp{Time: *end.t})
		}
	}
	if first {
		b.WriteString("1 = 0")
	}
	b.WriteString(")")
}
