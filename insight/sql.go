package insight

import (
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// EventsTable is the table insight queries read.
const EventsTable = "events"

// The events table, as the example server and examples/demo create it:
// events(uuid, event, distinct_id, timestamp, properties), timestamp UTC
// text "YYYY-MM-DD HH:MM:SS", properties a JSON object as text.
const (
	eventsTable = EventsTable
	colEvent    = "event"
	colActor    = "distinct_id"
	colTime     = "timestamp"
	colProps    = "properties"
)

// EventsColumns returns the columns of the events table that insight
// queries read; a scope that lists the table's columns must list them all.
func EventsColumns() []string { return []string{colEvent, colActor, colTime, colProps} }

// gen writes the SQL of one dialect. Every value and every property name
// goes through Bind; WriteString only ever carries this package's own
// text, chosen from fixed tables by validated enums.
type gen struct {
	*placeholder.Builder
	e   engine.Engine
	err error // the first error of events
}

func newGen(e engine.Engine) *gen {
	return &gen{Builder: placeholder.NewBuilder(e), e: e}
}

// w writes SQL text in which each # is replaced by the quoted identifier
// of the matching argument.
func (g *gen) w(text string, idents ...string) {
	parts := strings.Split(text, "#")
	if len(parts) != len(idents)+1 {
		panic(fmt.Sprintf("insight: %d identifiers for %q", len(idents), text))
	}
	for i, p := range parts {
		g.WriteString(p)
		if i < len(idents) {
			g.WriteIdent(idents[i])
		}
	}
}

// text writes the text of property key, "" when it is not set (missing,
// JSON null or the empty string), so that a breakdown value "" and a
// filter on "" select the same events.
func (g *gen) text(key string) { g.e.JSONText(g, g.e.QuoteIdent(colProps), key) }

// number writes the value of property key when it is a JSON number, else
// NULL, which aggregates and comparisons skip.
func (g *gen) number(key string) { g.e.JSONNumber(g, g.e.QuoteIdent(colProps), key) }

// bucket writes the start of the interval holding the timestamp in column
// col, as timestamp text.
func (g *gen) bucket(iv engine.Bucket, col string) {
	g.WriteString(g.e.TimeText(g.e.Truncate(iv, g.e.Timestamp(g.e.QuoteIdent(col)))))
}

// float writes the expression that expr writes cast to the engine's float
// type. Only for values that are never NULL: ClickHouse refuses to cast
// NULL to a type that is not Nullable.
func (g *gen) float(expr func()) {
	g.WriteString("CAST(")
	expr()
	g.WriteString(" AS " + g.e.Type(engine.Float) + ")")
}

// contains writes a case-insensitive substring test of property key.
func (g *gen) contains(key, value string) {
	g.e.Contains(g, func() { g.text(key) }, value)
}

// filter writes one property filter as a boolean expression.
func (g *gen) filter(p Property) {
	switch p.Operator {
	case Exact, IsNot:
		g.text(p.Key)
		if p.Operator == IsNot {
			g.WriteString(" NOT")
		}
		g.WriteString(" IN (")
		g.Bind(p.Values)
		g.WriteString(")")
	case IContains:
		g.contains(p.Key, p.Values[0])
	case NotIContains:
		g.WriteString("NOT (")
		g.contains(p.Key, p.Values[0])
		g.WriteString(")")
	case GT, LT:
		g.number(p.Key)
		if p.Operator == GT {
			g.WriteString(" > ")
		} else {
			g.WriteString(" < ")
		}
		g.Bind(p.Number)
	case IsSet:
		g.text(p.Key)
		g.WriteString(" <> ''")
	case IsNotSet:
		g.text(p.Key)
		g.WriteString(" = ''")
	}
}

// events writes the events table as q's tenant confines it
// (tree.WriteTable): the derived table that reads its rows alone, or the
// table itself when q has no tenant. An error is kept for Err.
func (g *gen) events(q *Query) {
	if err := tree.WriteTable(g, eventsTable, q.Tenant); err != nil && g.err == nil {
		g.err = err
	}
}

// Err returns the first error of the statement: of a Bind, or of a table
// that could not be confined.
func (g *gen) Err() error {
	if g.err != nil {
		return g.err
	}
	return g.Builder.Err()
}

// filters writes " AND <filter>" for each property filter.
func (g *gen) filters(props []Property) {
	for _, p := range props {
		g.WriteString(" AND ")
		g.filter(p)
	}
}

// timeRange writes " AND col >= start AND col < end".
func (g *gen) timeRange(col string, sp span) {
	g.w(" AND # >= ", col)
	g.Bind(sp.start.Format(timeLayout))
	g.w(" AND # < ", col)
	g.Bind(sp.end.Format(timeLayout))
}

// breakdownName is the column of the i-th breakdown value.
func breakdownName(i int) string { return fmt.Sprintf("b%d", i) }

// foldedName is the column of the i-th breakdown value once the values past
// the breakdown limit are folded (empty).
func foldedName(i int) string { return fmt.Sprintf("k%d", i) }

// breakdownColumns writes ", b0, b1" with the given qualifier.
func (g *gen) breakdownColumns(n int, qualifier string) {
	for i := range n {
		g.WriteString(", ")
		if qualifier != "" {
			g.WriteIdent(qualifier)
			g.WriteString(".")
		}
		g.WriteIdent(breakdownName(i))
	}
}

// materialized writes the engine's CTEAs for a common table expression,
// asking the engine to compute it once where it would otherwise inline it
// into every reference, which repeats the grouping of first-time cohorts
// per joined row.
func (g *gen) materialized() {
	g.WriteString(g.e.CTEAs())
}
