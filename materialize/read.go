package materialize

import (
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/variable"
)

// Read returns the query that answers a run from the stored table named
// table, with the run's coerced values (by code name, as
// variable.Variable.Coerce returns them) bound as arguments.
//
// It returns an error wrapping ErrRunInline (an *InlineError) when the
// stored table cannot answer this run exactly: a date compared with >= or <
// that is not on its bucket's boundary, or any date compared with another
// operator (>, <=, =) against a bucket. The caller then runs the query inline. A missing, null
// or list value is a *ValueError: every variable of a materialized endpoint
// is required.
func (p *Plan) Read(table string, values map[string]any) (string, []any, error) {
	if table == "" {
		return "", nil, ErrInvalidTable
	}
	b := placeholder.NewBuilder(p.dialect)
	b.WriteString(p.readHead)
	b.WriteIdent(table)
	for i, f := range p.filters {
		v, ok := values[f.variable]
		switch {
		case !ok:
			return "", nil, &ValueError{Variable: f.variable, Detail: "no value; every variable of a materialized endpoint is required"}
		case v == nil:
			return "", nil, &ValueError{Variable: f.variable, Detail: "null cannot be compared"}
		}
		if _, list := v.([]string); list {
			return "", nil, &ValueError{Variable: f.variable, Detail: "a list cannot be compared with " + f.op}
		}
		if f.bucket != "" {
			bv, err := f.bucketValue(v)
			if err != nil {
				return "", nil, err
			}
			v = bv
		}
		if i == 0 {
			b.WriteString(" WHERE ")
		} else {
			b.WriteString(" AND ")
		}
		b.WriteIdent(f.column)
		b.WriteString(" " + f.op + " ")
		b.Bind(v)
	}
	b.WriteString(p.readTail)
	if err := b.Err(); err != nil {
		return "", nil, fmt.Errorf("materialize: read: %w", err)
	}
	return b.SQL(), b.Args(), nil
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

// Refresh is how to rebuild a stored table with a fresh result of the
// pre-compute query: Build creates it beside the live table, under the
// name Next, and Swap then replaces the live table with it, so that a
// refresh that fails before the swap leaves the last good table in place.
type Refresh struct {
	// Next is the name of the table Build creates.
	Next string
	// Build drops a leftover Next and creates it from the query.
	Build []string
	// Swap replaces the live table with Next; run its statements in one
	// transaction when InTx, for the swap to be atomic.
	Swap []string
	InTx bool
}

// Statements returns Build and Swap in order, for callers that run them
// one at a time.
func (r *Refresh) Statements() []string { return append(append([]string(nil), r.Build...), r.Swap...) }

// Refresh returns how to replace the stored table named table with a fresh
// result of the pre-compute query.
func (p *Plan) Refresh(table string) (*Refresh, error) {
	if table == "" {
		return nil, ErrInvalidTable
	}
	next := table + "_next"
	swap, inTx := p.dialect.Swap(next, table)
	return &Refresh{
		Next:  next,
		Build: []string{p.dialect.DropTable(next), p.dialect.CreateTableAs(next, p.precompute)},
		Swap:  swap,
		InTx:  inTx,
	}, nil
}
