package materialize

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/variable"
)

// Read returns the query that answers a run from the stored table named
// table, with the run's coerced values (by code name, as
// variable.Variable.Coerce returns them) bound as arguments. It returns
// every row of the answer; ReadPage returns one page of them.
//
// A date compared with a range operator off its bucket's boundary is still
// answered exactly: the whole buckets come from the stored table and the
// partial ones at the range's edges from the source data, merged in the
// query (see Plan.Refresh for the index that keeps that quick). A missing,
// null or empty value, or a list where the query compares no list, is a
// *ValueError: every variable of a materialized endpoint is required.
func (p *Plan) Read(table string, values map[string]any) (string, []any, error) {
	return p.read(table, values, nil)
}

// ReadPage is Read with the answer paged in SQL: at most limit rows of it,
// after the first offset, in the order of the query's ORDER BY. A caller
// that wants to know whether more rows follow asks for one more than it
// shows. The rows are those of the inline query paged the same way; when
// the query has a LIMIT of its own, the page is taken from what that LIMIT
// leaves. A negative limit or offset is a *PageError.
func (p *Plan) ReadPage(table string, values map[string]any, limit, offset int64) (string, []any, error) {
	if limit < 0 || offset < 0 {
		return "", nil, &PageError{Limit: limit, Offset: offset}
	}
	return p.read(table, values, &page{limit: limit, offset: offset})
}

// writeStoredRead writes a read of the stored rows alone, but its ORDER BY
// and LIMIT, filters writing its WHERE clause: the one-bucket read where
// the plan has one.
func (p *Plan) writeStoredRead(b *placeholder.Builder, table string, values map[string]any, filters func() error) error {
	head, group := p.readHead, p.readGroup
	if ob := p.oneBucket; ob != nil {
		head, group = ob.head, ob.group+ob.having
	}
	p.text(b, head, values)
	b.WriteIdent(table)
	if err := filters(); err != nil {
		return err
	}
	p.text(b, group, values)
	return nil
}

// page is the slice of a read's answer that ReadPage returns.
type page struct{ limit, offset int64 }

func (p *Plan) read(table string, values map[string]any, pg *page) (string, []any, error) {
	if table == "" {
		return "", nil, ErrInvalidTable
	}
	b := placeholder.NewBuilder(p.dialect)
	// The query's own LIMIT picks its rows first; the page is taken from
	// those. Without one, the page's LIMIT goes on the read itself, where
	// the engine can stop reading early.
	wrap := pg != nil && p.limited
	if p.outer != nil {
		// The page is of the outer query's answer, which its own LIMIT
		// picks first.
		wrap = pg != nil && p.outer.limited
	}
	if wrap {
		b.WriteString("SELECT * FROM (")
	}
	if p.outer != nil {
		b.WriteString(p.outer.head)
	}
	values, err := p.movedValues(values)
	if err != nil {
		return "", nil, err
	}
	if err := p.checkValues(values); err != nil {
		return "", nil, err
	}
	if err := p.checkReadValues(values); err != nil {
		return "", nil, err
	}
	ivs, aligned, err := p.intervals(values)
	if err != nil {
		return "", nil, err
	}
	if aligned && !p.Tail() {
		err = p.writeStoredRead(b, table, values, func() error { return p.writeFilters(b, values) })
	} else {
		err = p.writeMergedRead(b, table, values, ivs)
	}
	if err != nil {
		return "", nil, err
	}
	p.text(b, p.readEnd, values)
	if p.outer != nil {
		b.WriteString(p.outer.end)
	}
	if wrap {
		b.WriteString(") AS ")
		b.WriteIdent("stored_page")
	}
	if pg != nil {
		writePage(b, pg.limit, pg.offset)
	}
	if err := b.Err(); err != nil {
		return "", nil, fmt.Errorf("materialize: read: %w", err)
	}
	return b.SQL(), b.Args(), nil
}

// checkValues checks that every filter has a value it can bind: present,
// not null, a list only where compared with IN, a date where bucketed.
func (p *Plan) checkValues(values map[string]any) error {
	for _, f := range p.filters {
		v, ok := values[f.variable]
		switch {
		case !ok:
			return &ValueError{Variable: f.variable, Detail: "no value; every variable of a materialized endpoint is required"}
		case v == nil:
			return &ValueError{Variable: f.variable, Detail: "null cannot be compared"}
		}
		if err := checkList(f.variable, f.op, v); err != nil {
			return err
		}
		if f.bucket != "" {
			if _, err := f.instant(values); err != nil {
				return err
			}
		}
	}
	if p.Tail() {
		switch values[BuiltAtVariable].(type) {
		case time.Time, variable.Timestamp:
		default:
			return &ValueError{Variable: BuiltAtVariable, Detail: "want the instant the stored table was built at (a time.Time); a plan with a live tail needs it"}
		}
	}
	return nil
}

// writeFilters writes the WHERE clause of a read whose bucketed dates are
// all on their buckets' boundaries: each stored variable column compared
// with its bound value.
func (p *Plan) writeFilters(b *placeholder.Builder, values map[string]any) error {
	for i, f := range p.filters {
		v := values[f.variable]
		if f.bucket != "" {
			t, _ := f.instant(values) // checked by checkValues
			v = variable.Timestamp{Time: t}
		}
		if i == 0 {
			b.WriteString(" WHERE ")
		} else {
			b.WriteString(" AND ")
		}
		if err := f.write(b, f.column, true, v); err != nil {
			return err
		}
	}
	return nil
}

// write writes the comparison of f with the bound value v: of the stored
// column when quoted, else of the variable's expression over a source row.
func (f filter) write(b *placeholder.Builder, column string, quoted bool, v any) error {
	if f.or != nil {
		return f.writeOr(b, quoted, v)
	}
	if quoted {
		b.WriteIdent(column)
	} else {
		b.WriteString(f.raw)
	}
	if f.op == "in" || f.op == "not in" {
		b.WriteString(" " + strings.ToUpper(f.op) + " (")
		b.Bind(v)
		b.WriteString(")")
		return nil
	}
	b.WriteString(" " + sqlOperator(f.op) + " ")
	b.Bind(v)
	if f.escape != "" {
		b.WriteString(" ESCAPE " + f.escape)
	}
	return nil
}

// sqlOperator is op, as Variable.Operators names it, as every engine
// reads it.
func sqlOperator(op string) string {
	if op == "!=" {
		return "<>"
	}
	return strings.ToUpper(op)
}

// checkList checks the value v of variable name compared by op: a list
// only with [NOT] IN, and not an empty one, which the engines cannot
// read.
func checkList(name, op string, v any) error {
	list, ok := v.([]string)
	switch {
	case !ok:
		return nil
	case op != "in" && op != "not in":
		return &ValueError{Variable: name, Detail: "a list cannot be compared with " + sqlOperator(op)}
	case len(list) == 0 && op == "in":
		return &ValueError{Variable: name, Detail: "an empty list matches nothing; give at least one value"}
	case len(list) == 0:
		return &ValueError{Variable: name, Detail: "an empty list cannot be read by NOT IN; give at least one value"}
	}
	return nil
}

// writePage appends the clause that keeps limit rows after the first
// offset, both bound. Every engine supported so far spells it the same;
// this is the one place to change for one that does not.
func writePage(b *placeholder.Builder, limit, offset int64) {
	b.WriteString(" LIMIT ")
	b.Bind(limit)
	b.WriteString(" OFFSET ")
	b.Bind(offset)
}

// ErrInvalidPage is wrapped by every *PageError.
var ErrInvalidPage = errors.New("materialize: invalid page")

// PageError reports a page ReadPage cannot read: a negative limit or
// offset. The service checks both before a run, so this is a caller's bug.
type PageError struct {
	Limit, Offset int64
}

// Error implements error.
func (e *PageError) Error() string {
	return fmt.Sprintf("materialize: page of limit %d and offset %d: neither may be negative", e.Limit, e.Offset)
}

// Unwrap returns ErrInvalidPage.
func (e *PageError) Unwrap() error { return ErrInvalidPage }
