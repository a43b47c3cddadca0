package insight

import (
	"fmt"
	"strings"

	"github.com/endpointkit/endpointkit/placeholder"
)

// The events table, as the example server and examples/demo create it:
// events(uuid, event, distinct_id, timestamp, properties), timestamp UTC
// text "YYYY-MM-DD HH:MM:SS", properties a JSON object as text.
const (
	eventsTable = "events"
	colEvent    = "event"
	colActor    = "distinct_id"
	colTime     = "timestamp"
	colProps    = "properties"
)

// gen writes the SQL of one dialect. Every value and every property name
// goes through Bind; WriteString only ever carries this package's own
// text, chosen from fixed tables by validated enums.
type gen struct {
	*placeholder.Builder
	d placeholder.Dialect
}

func newGen(d placeholder.Dialect) *gen {
	return &gen{Builder: placeholder.NewBuilder(d), d: d}
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

// jsonPath is the path of a top-level key for engines that take paths
// (SQLite, MySQL); checkKey has refused keys a path label cannot hold.
func jsonPath(key string) string { return `$."` + key + `"` }

// text writes the text of property key, "" when it is not set (missing,
// JSON null or the empty string), so that a breakdown value "" and a
// filter on "" select the same events.
func (g *gen) text(key string) {
	switch g.d {
	case placeholder.PostgreSQL:
		g.w("COALESCE((#::jsonb) ->> ", colProps)
		g.Bind(key)
		g.WriteString("::text, '')")
	case placeholder.MySQL:
		g.w("COALESCE(JSON_UNQUOTE(JSON_EXTRACT(#, ", colProps)
		g.Bind(jsonPath(key))
		g.WriteString(")), '')")
	case placeholder.ClickHouse:
		g.w("JSONExtractString(#, ", colProps)
		g.Bind(key)
		g.WriteString(")")
	default:
		g.w("COALESCE(CAST(json_extract(#, ", colProps)
		g.Bind(jsonPath(key))
		g.WriteString(") AS TEXT), '')")
	}
}

// number writes the value of property key when it is a JSON number, else
// NULL, which aggregates and comparisons skip.
func (g *gen) number(key string) {
	switch g.d {
	case placeholder.PostgreSQL:
		g.w("(CASE WHEN jsonb_typeof((#::jsonb) -> ", colProps)
		g.Bind(key)
		g.w("::text) = 'number' THEN ((#::jsonb) ->> ", colProps)
		g.Bind(key)
		g.WriteString("::text)::double precision END)")
	case placeholder.MySQL:
		g.w("(CASE WHEN JSON_TYPE(JSON_EXTRACT(#, ", colProps)
		g.Bind(jsonPath(key))
		g.w(")) IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL') THEN CAST(JSON_EXTRACT(#, ", colProps)
		g.Bind(jsonPath(key))
		g.WriteString(") AS DOUBLE) END)")
	case placeholder.ClickHouse:
		g.w("JSONExtract(#, ", colProps)
		g.Bind(key)
		g.WriteString(", 'Nullable(Float64)')")
	default:
		g.w("(CASE WHEN json_type(#, ", colProps)
		g.Bind(jsonPath(key))
		g.w(") IN ('integer', 'real') THEN json_extract(#, ", colProps)
		g.Bind(jsonPath(key))
		g.WriteString(") END)")
	}
}

// bucket writes the start of the interval holding the timestamp text in
// column col, as timestamp text.
func (g *gen) bucket(iv Interval, col string) {
	switch g.d {
	case placeholder.PostgreSQL:
		unit := map[Interval]string{Hour: "hour", Day: "day", Week: "week", Month: "month"}[iv]
		g.w("to_char(date_trunc('"+unit+"', #::timestamp), 'YYYY-MM-DD HH24:MI:SS')", col)
	case placeholder.MySQL:
		switch iv {
		case Hour:
			g.w("DATE_FORMAT(#, '%Y-%m-%d %H:00:00')", col)
		case Week:
			g.w("DATE_FORMAT(DATE_SUB(DATE(#), INTERVAL WEEKDAY(#) DAY), '%Y-%m-%d 00:00:00')", col, col)
		case Month:
			g.w("DATE_FORMAT(#, '%Y-%m-01 00:00:00')", col)
		default:
			g.w("DATE_FORMAT(#, '%Y-%m-%d 00:00:00')", col)
		}
	case placeholder.ClickHouse:
		fn := map[Interval]string{Hour: "toStartOfHour(", Day: "toStartOfDay(", Week: "toDateTime(toMonday(", Month: "toDateTime(toStartOfMonth("}[iv]
		closing := map[Interval]string{Hour: ")", Day: ")", Week: "), 'UTC')", Month: "), 'UTC')"}[iv]
		g.w("formatDateTime("+fn+"toDateTime(#, 'UTC')"+closing+", '%Y-%m-%d %H:%i:%S', 'UTC')", col)
	default:
		// The text layout lets SQLite cut instead of parse, except for
		// weeks, which need the weekday.
		switch iv {
		case Hour:
			g.w("substr(#, 1, 13) || ':00:00'", col)
		case Week:
			g.w("strftime('%Y-%m-%d 00:00:00', #, '-6 days', 'weekday 1')", col)
		case Month:
			g.w("substr(#, 1, 7) || '-01 00:00:00'", col)
		default:
			g.w("substr(#, 1, 10) || ' 00:00:00'", col)
		}
	}
}

// contains writes a case-insensitive substring test of property key.
func (g *gen) contains(key, value string) {
	switch g.d {
	case placeholder.PostgreSQL:
		g.WriteString("strpos(lower(")
		g.text(key)
		g.WriteString("), lower(")
		g.Bind(value)
		g.WriteString("::text)) > 0")
	case placeholder.MySQL:
		g.WriteString("LOCATE(LOWER(")
		g.Bind(value)
		g.WriteString("), LOWER(")
		g.text(key)
		g.WriteString(")) > 0")
	case placeholder.ClickHouse:
		g.WriteString("positionCaseInsensitiveUTF8(")
		g.text(key)
		g.WriteString(", ")
		g.Bind(value)
		g.WriteString(") > 0")
	default:
		g.WriteString("instr(lower(")
		g.text(key)
		g.WriteString("), lower(")
		g.Bind(value)
		g.WriteString(")) > 0")
	}
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

// materialized writes " AS " for a common table expression, asking SQLite
// and PostgreSQL to compute it once: both may otherwise inline it into
// every reference, which repeats the grouping of first-time cohorts per
// joined row.
func (g *gen) materialized() {
	if g.d == placeholder.SQLite || g.d == placeholder.PostgreSQL {
		g.WriteString(" AS MATERIALIZED ")
	} else {
		g.WriteString(" AS ")
	}
}
