package insight

import (
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/placeholder"
)

// Statement is one SQL statement with its bound arguments.
type Statement struct {
	SQL  string
	Args []any
}

// column is a column of a materialized table.
type column struct {
	name string
	typ  colType
}

type colType int

const (
	typeText colType = iota
	typeInt
	typeFloat
)

func (t colType) sql(d placeholder.Dialect) string {
	names := map[placeholder.Dialect][3]string{
		placeholder.SQLite:     {"TEXT", "INTEGER", "REAL"},
		placeholder.PostgreSQL: {"text", "bigint", "double precision"},
		placeholder.MySQL:      {"TEXT", "BIGINT", "DOUBLE"},
		placeholder.ClickHouse: {"String", "Int64", "Float64"},
	}
	return names[d][t]
}

// columns are the output columns of Compile's statement for q, which a
// materialized table stores as they are.
func columns(q *Query) []column {
	var cols []column
	bds := func() {
		for i := range q.Breakdowns {
			cols = append(cols, column{breakdownName(i), typeText})
		}
	}
	if q.Kind == Retention {
		bds()
		return append(cols, column{"cohort", typeText}, column{"period", typeText}, column{"actors", typeInt})
	}
	cols = append(cols, column{"series", typeInt}, column{"bucket", typeText})
	bds()
	return append(cols, column{"value", typeFloat})
}

// Materialize returns the statements, to run in order, that (re)build
// table with every series of the saved query q (for every breakdown value)
// over its date range resolved against now: drop the table if it exists,
// create it, fill it from the events table, and index the breakdown
// columns. Pass the saved query, not one from Apply: the table must hold
// all series. Record now; ReadMaterialized needs it.
//
// The stored rows are those of Compile's statement, so a read returns
// exactly what an inline run at the same now would.
func Materialize(q *Query, d placeholder.Dialect, table string, now time.Time) ([]Statement, error) {
	if table == "" {
		return nil, fmt.Errorf("insight: materialize: empty table name")
	}
	inline, err := Compile(q, d, now)
	if err != nil {
		return nil, err
	}
	cols := columns(q)
	var stmts []Statement
	add := func(g *gen) {
		stmts = append(stmts, Statement{SQL: g.SQL(), Args: g.Args()})
	}

	g := newGen(d)
	g.w("DROP TABLE IF EXISTS #", table)
	add(g)

	g = newGen(d)
	g.w("CREATE TABLE # (", table)
	for i, c := range cols {
		if i > 0 {
			g.WriteString(", ")
		}
		g.WriteIdent(c.name)
		g.WriteString(" " + c.typ.sql(d))
	}
	g.WriteString(")")
	if d == placeholder.ClickHouse {
		g.WriteString(" ENGINE = MergeTree ORDER BY (")
		for i, c := range cols[:len(cols)-1] {
			if i > 0 {
				g.WriteString(", ")
			}
			g.WriteIdent(c.name)
		}
		g.WriteString(")")
	}
	add(g)

	g = newGen(d)
	g.w("INSERT INTO # (", table)
	for i, c := range cols {
		if i > 0 {
			g.WriteString(", ")
		}
		g.WriteIdent(c.name)
	}
	g.WriteString(")\n")
	stmts = append(stmts, Statement{SQL: g.SQL() + inline.SQL, Args: inline.Args})

	// MySQL cannot index TEXT without a prefix length, and ClickHouse
	// orders its table by these columns already.
	if len(q.Breakdowns) > 0 && (d == placeholder.SQLite || d == placeholder.PostgreSQL) {
		g = newGen(d)
		g.w("CREATE INDEX # ON # (", table+"_breakdowns", table)
		for i := range q.Breakdowns {
			if i > 0 {
				g.WriteString(", ")
			}
			g.WriteIdent(breakdownName(i))
		}
		g.WriteString(")")
		add(g)
	}
	return stmts, nil
}

// ReadMaterialized returns the read of a table built by Materialize from
// the saved query q at materializedAt: only the stored series whose
// breakdown values equal the given ones. Its Shape gives what an inline run
// of q.Apply(values) would have given at materializedAt.
//
// Only breakdown variables are accepted: date_from, date_to and any other
// key fail with an *UnknownVariablesError. An omitted breakdown variable
// leaves that breakdown unfiltered, as an inline run does; refusing it
// (unless the endpoint lists it as optional) is the caller's decision.
func ReadMaterialized(q *Query, d placeholder.Dialect, table string, values map[string]any, materializedAt time.Time) (*Compiled, error) {
	if _, err := q.apply(values, true); err != nil {
		return nil, err
	}
	sp, err := resolveSpan(q, materializedAt)
	if err != nil {
		return nil, err
	}
	g := newGen(d)
	g.WriteString("SELECT ")
	for i, c := range columns(q) {
		if i > 0 {
			g.WriteString(", ")
		}
		g.WriteIdent(c.name)
	}
	g.w(" FROM # WHERE 1 = 1", table)
	for i, b := range q.Breakdowns {
		raw, ok := values[b.Property]
		if !ok {
			continue
		}
		v, err := breakdownValue(b.Property, raw)
		if err != nil {
			return nil, err
		}
		g.w(" AND # = ", breakdownName(i))
		g.Bind(v)
	}
	if err := g.Err(); err != nil {
		return nil, fmt.Errorf("insight: read for %s: %w", d.Name(), err)
	}
	return &Compiled{SQL: g.SQL(), Args: g.Args(), q: q, sp: sp}, nil
}
