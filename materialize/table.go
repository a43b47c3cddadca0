package materialize

import (
	"slices"
	"strconv"
	"strings"
)

// TableName returns the name of the stored table of one version of an
// endpoint: "endpointkit_mat_" followed by the endpoint id reduced to
// lower-case letters, digits and underscores (at most 32 of them: all the
// hex digits of a UUID), and
// "_v<version>". It is short enough for every engine's identifier limit,
// with room for Refresh's "_next" suffix. Ids that differ only in other
// characters share a name, so pass an id (a UUID), not a display name.
func TableName(endpointID string, version int) string {
	var b strings.Builder
	b.WriteString("endpointkit_mat_")
	n := 0
	for _, r := range strings.ToLower(endpointID) {
		if n == 32 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			n++
		case r == '_':
			b.WriteByte('_')
			n++
		}
	}
	b.WriteString("_v")
	b.WriteString(strconv.Itoa(version))
	return b.String()
}

// Refresh is how to rebuild a stored table with a fresh result of the
// pre-compute query: Build creates it beside the live table, under the
// name Next, Swap then replaces the live table with it, so that a refresh
// that fails before the swap leaves the last good table in place, and Index
// indexes the new live table on the columns reads compare with values.
type Refresh struct {
	// Next is the name of the table Build creates.
	Next string
	// Build drops a leftover Next and creates it from the query.
	Build []string
	// Swap replaces the live table with Next; run its statements in one
	// transaction when InTx, for the swap to be atomic.
	Swap []string
	InTx bool
	// Index is run after the swap: a renamed table keeps its index's name,
	// so the index is named after the live table, whose old index went
	// with the old table. Reads between the swap and the index scan, as
	// exact as ever. Empty where the engine needs or can build no index.
	Index []string
}

// Statements returns Build, Swap and Index in order, for callers that run
// them one at a time.
func (r *Refresh) Statements() []string {
	return slices.Concat(r.Build, r.Swap, r.Index)
}

// Refresh returns how to replace the stored table named table with a fresh
// result of the pre-compute query. With a live tail (Plan.Tail), Build's
// statements hold the placeholder {variables.__endpointkit_built_at}:
// render them with package placeholder, BuiltAtVariable bound to the build
// instant that reads will be given.
func (p *Plan) Refresh(table string) (*Refresh, error) {
	if table == "" {
		return nil, ErrInvalidTable
	}
	next := table + "_next"
	swap, inTx := p.dialect.Swap(next, table)
	r := &Refresh{
		Next:  next,
		Build: []string{p.dialect.DropTable(next), p.dialect.CreateTableAs(next, p.precompute)},
		Swap:  swap,
		InTx:  inTx,
	}
	if cols := p.indexColumns(); len(cols) > 0 {
		if ddl := p.dialect.CreateIndex(table+"_ix", table, cols); ddl != "" {
			r.Index = []string{ddl}
		}
	}
	return r, nil
}

// indexColumns returns the columns of the stored table's index: those a
// read compares with values (keyColumns), and, on an engine that groups in
// index order when a read takes several stored rows per group (over a
// range), those it takes after them, so that the index covers the read
// and gives the order of a one-bucket read's groups.
func (p *Plan) indexColumns() []string {
	cols := p.keyColumns()
	if !p.dialect.GroupsInIndexOrder() || !slices.ContainsFunc(p.filters, func(f filter) bool { return f.op != "=" && f.op != "in" && f.or == nil }) {
		return cols
	}
	for _, c := range p.taken {
		if !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	return cols
}

// keyColumns returns the stored columns a read compares with values, those
// compared only with = first: an index on them in this order serves every
// read's equalities and its first range.
func (p *Plan) keyColumns() []string {
	ranged := map[string]bool{}
	for _, f := range p.filters {
		if f.op != "=" && f.or == nil {
			ranged[f.column] = true
		}
	}
	var eq, rng []string
	for _, f := range p.filters {
		switch {
		case f.or != nil:
			// An OR's columns serve no one index: the read scans.
		case slices.Contains(eq, f.column) || slices.Contains(rng, f.column):
		case ranged[f.column]:
			rng = append(rng, f.column)
		default:
			eq = append(eq, f.column)
		}
	}
	return append(eq, rng...)
}
