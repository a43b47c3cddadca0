package materialize

import (
	"slices"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/placeholder"
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

// Refresh returns the statements that replace the stored table named table
// with a fresh result of the pre-compute query, to run in order. The new
// result is built, and indexed on the variables' columns, under
// table+"_next" first, so that a refresh that fails leaves the last good
// table in place.
func (p *Plan) Refresh(table string) ([]string, error) {
	if table == "" {
		return nil, ErrInvalidTable
	}
	next := p.dialect.QuoteIdent(table + "_next")
	cur := p.dialect.QuoteIdent(table)
	create := "CREATE TABLE " + next + " AS " + p.precompute
	if p.dialect == placeholder.ClickHouse {
		create = "CREATE TABLE " + next + " ENGINE = MergeTree ORDER BY tuple() AS " + p.precompute
	}
	rename := "ALTER TABLE " + next + " RENAME TO " + cur
	if p.dialect == placeholder.ClickHouse {
		rename = "RENAME TABLE " + next + " TO " + cur
	}
	free, index := keyIndex(p.dialect, table+"_next", p.keyColumns())
	stmts := []string{"DROP TABLE IF EXISTS " + next}
	if free != "" {
		stmts = append(stmts, free)
	}
	stmts = append(stmts, create)
	if index != "" {
		stmts = append(stmts, index)
	}
	return append(stmts, "DROP TABLE IF EXISTS "+cur, rename), nil
}

// keyColumns returns the stored columns a read compares with values, those
// compared only with = first: an index on them in this order serves every
// read's equalities and its first range.
func (p *Plan) keyColumns() []string {
	ranged := map[string]bool{}
	for _, f := range p.filters {
		if f.op != "=" {
			ranged[f.column] = true
		}
	}
	var eq, rng []string
	for _, f := range p.filters {
		switch {
		case slices.Contains(eq, f.column) || slices.Contains(rng, f.column):
		case ranged[f.column]:
			rng = append(rng, f.column)
		default:
			eq = append(eq, f.column)
		}
	}
	return append(eq, rng...)
}

// keyIndex returns the statements, in dialect d, that index the columns
// cols of the table named table (the "_next" table of a refresh): free
// runs before the table is created, create after it is filled. Either is
// "" when d needs none.
//
// SQLite and PostgreSQL name indexes per schema, and a renamed table keeps
// its index's name, so the index built with the last "_next" table now
// belongs to the table being replaced: free drops it, and reads of that
// table until the swap scan it, as exact as before but slower. MySQL cannot
// index a TEXT column without a prefix length, which would be wrong for
// numbers, and a ClickHouse MergeTree cannot order by Nullable columns by
// default; both scan.
func keyIndex(d placeholder.Dialect, table string, cols []string) (free, create string) {
	if len(cols) == 0 || (d != placeholder.SQLite && d != placeholder.PostgreSQL) {
		return "", ""
	}
	name := d.QuoteIdent(table + "_ix")
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = d.QuoteIdent(c)
	}
	return "DROP INDEX IF EXISTS " + name,
		"CREATE INDEX " + name + " ON " + d.QuoteIdent(table) + " (" + strings.Join(quoted, ", ") + ")"
}
