package materialize

import (
	"errors"
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/variable"
)

// Read returns the query that answers a run from the stored table named
// table, with the run's coerced values (by code name, as
// variable.Variable.Coerce returns them) bound as arguments. It returns
// every row of the answer; ReadPage returns one page of them.
//
// It returns an error wrapping ErrRunInline (an *InlineError) when the
// stored table cannot answer this run exactly: a date compared with >= or <
// that is not on its bucket's boundary, or any date compared with another
// operator (>, <=, =) against a bucket. The caller then runs the query inline. A missing, null
// or list value is a *ValueError: every variable of a materialized endpoint
// is required.
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
	if wrap {
		b.WriteString("SELECT * FROM (")
	}
	b.WriteString(p.readHead)
	b.WriteIdent(table)
	if err := p.writeFilters(b, values); err != nil {
		return "", nil, err
	}
	b.WriteString(p.readTail)
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

// writeFilters writes the read's WHERE clause: each stored variable column
// compared with its bound value.
func (p *Plan) writeFilters(b *placeholder.Builder, values map[string]any) error {
	for i, f := range p.filters {
		v, ok := values[f.variable]
		switch {
		case !ok:
			return &ValueError{Variable: f.variable, Detail: "no value; every variable of a materialized endpoint is required"}
		case v == nil:
			return &ValueError{Variable: f.variable, Detail: "null cannot be compared"}
		}
		if list, ok := v.([]string); ok && f.op != "in" {
			return &ValueError{Variable: f.variable, Detail: "a list cannot be compared with " + f.op}
		} else if ok && len(list) == 0 {
			return &ValueError{Variable: f.variable, Detail: "an empty list matches nothing; give at least one value"}
		}
		if f.bucket != "" {
			bv, err := f.bucketValue(v)
			if err != nil {
				return err
			}
			v = bv
		}
		if i == 0 {
			b.WriteString(" WHERE ")
		} else {
			b.WriteString(" AND ")
		}
		b.WriteIdent(f.column)
		if f.op == "in" {
			b.WriteString(" IN (")
			b.Bind(v)
			b.WriteString(")")
			continue
		}
		b.WriteString(" " + f.op + " ")
		b.Bind(v)
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

// bucketValue returns the value to compare a bucketed column with: the
// same instant as a date-time, in the form the bucket expression yields.
// Only >= and < against the first instant of a bucket are exact: a row is
// at or after that instant exactly when its bucket is.
func (f filter) bucketValue(v any) (any, error) {
	var t time.Time
	switch x := v.(type) {
	case variable.Timestamp:
		t = x.Time
	case time.Time:
		t = x
	default:
		return nil, &ValueError{Variable: f.variable, Detail: fmt.Sprintf("want a date, got Go type %T", v)}
	}
	t = t.UTC()
	switch {
	case f.op != ">=" && f.op != "<":
		return nil, &InlineError{Variable: f.variable, Detail: fmt.Sprintf("%s against a %s bucket cannot be exact", f.op, f.bucket)}
	case !f.bucket.boundary(t):
		return nil, &InlineError{Variable: f.variable, Detail: fmt.Sprintf("%s is not the start of a %s", t.Format(time.RFC3339Nano), f.bucket)}
	}
	return variable.Timestamp{Time: t}, nil
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
