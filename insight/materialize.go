package insight

import (
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
)

// Statement is one SQL statement with its bound arguments.
type Statement struct {
	SQL  string
	Args []any
}

// columns are the output columns of Compile's statement for q, which a
// materialized table stores as they are.
func columns(q *Query) []engine.Column {
	var cols []engine.Column
	bds := func() {
		for i := range q.Breakdowns {
			cols = append(cols, engine.Column{Name: breakdownName(i), Kind: engine.Text})
		}
	}
	if q.Kind == Lifecycle {
		return []engine.Column{{Name: "status", Kind: engine.Int}, {Name: "period", Kind: engine.Int}, {Name: "actors", Kind: engine.Int}}
	}
	if q.Kind == Retention {
		bds()
		return append(cols, engine.Column{Name: "cohort", Kind: engine.Text}, engine.Column{Name: "period", Kind: engine.Text}, engine.Column{Name: "actors", Kind: engine.Int})
	}
	cols = append(cols, engine.Column{Name: "series", Kind: engine.Int}, engine.Column{Name: "bucket", Kind: engine.Text})
	bds()
	return append(cols, engine.Column{Name: "value", Kind: engine.Float})
}

// Materialize returns the statements, to run in order, that (re)build
// table with every series of the saved query q (for every breakdown value)
// over its date range resolved against now: drop the table if it exists,
// create it and fill it from the events table (Index gives the index to
// add). Pass the saved query, not one from Apply: the table must hold
// all series. Record now; ReadMaterialized needs it.
//
// The stored rows are those of Compile's statement before the breakdown
// limit: every combination of breakdown values, so that a breakdown
// variable selects its value whether or not the limit keeps it. A read
// applies the limit as Compile does, over the stored rows of the values it
// selects, so it returns exactly what an inline run at the same now would.
func Materialize(q *Query, d engine.Engine, table string, now time.Time) ([]Statement, error) {
	if table == "" {
		return nil, fmt.Errorf("insight: materialize: empty table name")
	}
	inline, err := compile(q, d, now, false)
	if err != nil {
		return nil, err
	}
	cols := columns(q)

	stmts := []Statement{{SQL: d.DropTable(table)}, {SQL: d.CreateTable(table, cols)}}

	g := newGen(d)
	g.w("INSERT INTO # (", table)
	for i, c := range cols {
		if i > 0 {
			g.WriteString(", ")
		}
		g.WriteIdent(c.Name)
	}
	g.WriteString(")\n")
	stmts = append(stmts, Statement{SQL: g.SQL() + inline.SQL, Args: inline.Args})

	return stmts, nil
}

// Index returns the DDL of an index on the breakdown columns of a table
// built by Materialize, "" when the query has no breakdown or the engine
// needs no index. Run it once the table has its final name (an index keeps
// its own name when its table is renamed).
func Index(q *Query, e engine.Engine, table string) string {
	if len(q.Breakdowns) == 0 {
		return ""
	}
	names := make([]string, len(q.Breakdowns))
	for i := range names {
		names[i] = breakdownName(i)
	}
	return e.CreateIndex(table+"_breakdowns", table, names)
}

// ReadMaterialized returns the read of a table built by Materialize from
// the saved query q at materializedAt: only the stored series whose
// breakdown values equal the given ones, with q's breakdown limit applied
// to them as Compile applies it. Its Shape gives what an inline run
// of q.Apply(values) would have given at materializedAt.
//
// Only breakdown variables are accepted: date_from, date_to and any other
// key fail with an *UnknownVariablesError. An omitted breakdown variable
// leaves that breakdown unfiltered, as an inline run does; refusing it
// (unless the endpoint lists it as optional) is the caller's decision.
func ReadMaterialized(q *Query, d engine.Engine, table string, values map[string]any, materializedAt time.Time) (*Compiled, error) {
	if _, err := q.apply(values, true); err != nil {
		return nil, err
	}
	sp, err := resolveSpan(q, materializedAt)
	if err != nil {
		return nil, err
	}
	type filter struct {
		col   string
		value string
	}
	var filters []filter
	for i, b := range q.Breakdowns {
		if raw, ok := values[b.Property]; ok {
			v, err := breakdownValue(b.Property, raw)
			if err != nil {
				return nil, err
			}
			filters = append(filters, filter{breakdownName(i), v})
		}
	}
	g := newGen(d)
	// read selects the stored rows of the given values; withOther adds
	// the Other flag the breakdown limit's windows would add, 0.
	read := func(withOther bool) {
		g.WriteString("SELECT ")
		for i, c := range columns(q) {
			if i > 0 {
				g.WriteString(", ")
			}
			g.WriteIdent(c.Name)
		}
		if withOther {
			g.w(", 0 AS #", "other")
		}
		g.w(" FROM # WHERE 1 = 1", table)
		for _, f := range filters {
			g.w(" AND # = ", f.col)
			g.Bind(f.value)
		}
	}
	switch {
	case q.Kind == Trends && len(q.Breakdowns) > 0 && len(filters) == len(q.Breakdowns):
		// Every breakdown is given a value: the read selects one
		// combination, which ranks first, so the limit's windows would
		// keep every row and fold none into Other. The stored rows are
		// the answer, with the Other flag the windows would add.
		read(true)
	case q.Kind == Trends && len(q.Breakdowns) > 0:
		writeTopBreakdowns(g, q, func() { read(false) })
	default:
		read(false)
	}
	if err := g.Err(); err != nil {
		return nil, fmt.Errorf("insight: read for %s: %w", d.Name(), err)
	}
	return &Compiled{SQL: g.SQL(), Args: g.Args(), q: q, sp: sp}, nil
}
