package engine

import (
	"strconv"
	"time"
)

// clickhouse is ClickHouse, bound with the server's typed query parameters
// {p1:String}, {p2:Int64}, ...: the arguments are the values as text, in
// order, for parameters named p1, p2, ... (an executor names them). A
// client-side '?' binding would format values into the SQL text, breaking
// the promise that no value ever becomes part of it. A variable used twice
// reuses its parameter; list elements get one each. Dates and date-times
// are bound as UTC text.
type clickhouse struct{}

func (clickhouse) Name() string { return "clickhouse" }

func (clickhouse) String() string { return "clickhouse" }

func (clickhouse) Marker(dst []byte, n int, typ string) []byte {
	dst = appendNumbered(append(dst, '{'), 'p', n)
	dst = append(dst, ':')
	dst = append(dst, typ...)
	return append(dst, '}')
}

func (clickhouse) MarkerLen(n int, typ string) int { return len("{p:}") + decimalLen(n) + len(typ) }

func (clickhouse) Numbered() bool { return true }

func (clickhouse) Arg(v any) (any, string, error) {
	s, err := reduce(v)
	if err != nil {
		return nil, "", err
	}
	switch s.kind {
	case kInt:
		return strconv.FormatInt(s.i, 10), "Int64", nil
	case kFloat:
		return strconv.FormatFloat(s.f, 'g', -1, 64), "Float64", nil
	case kBool:
		return strconv.FormatBool(s.b), "Bool", nil
	case kTime:
		// As UTC text: a String parameter compares with a String column
		// of UTC text as text, and with a DateTime column as a date-time,
		// where a Date or DateTime parameter fails against a String
		// column unless the query casts one side.
		return s.timeText(), "String", nil
	}
	return s.s, "String", nil
}

func (clickhouse) ListType() string { return "String" }

func (clickhouse) ArgName(n int) string { return "p" + strconv.Itoa(n) }

// ReadsMarker: clickhouse-go reads '?', $NNN and @name.
func (clickhouse) ReadsMarker(sigil byte, rest string) bool {
	switch sigil {
	case '?', '@':
		return true
	case '$':
		return digits(rest)
	}
	return false
}

func (clickhouse) QuoteIdent(s string) string { return quote(s, '`') }

func (clickhouse) AppendString(dst []byte, s string) []byte { return appendBackslashed(dst, s, false) }

func (clickhouse) Lexical() Lexical { return Lexical{BackslashEscapes: true} }

func (clickhouse) Type(k Kind) string { return [...]string{"String", "Int64", "Float64"}[k] }

func (clickhouse) Timestamp(col string) string { return "toDateTime(" + col + ", 'UTC')" }

func (e clickhouse) StrictTimestamp(col string) string { return e.Timestamp(col) }

func (clickhouse) Truncate(u Unit, ts string) string {
	switch u {
	case Minute:
		return "toStartOfMinute(" + ts + ")"
	case Hour:
		return "toStartOfHour(" + ts + ")"
	case Week:
		return "toDateTime(toMonday(" + ts + "), 'UTC')"
	case Month:
		return "toDateTime(toStartOfMonth(" + ts + "), 'UTC')"
	}
	return "toStartOfDay(" + ts + ")"
}

func (clickhouse) TimeText(ts string) string {
	return "formatDateTime(" + ts + ", '%Y-%m-%d %H:%i:%S', 'UTC')"
}

func (clickhouse) JSONText(w Writer, col, key string) {
	w.WriteString("JSONExtractString(" + col + ", ")
	w.Bind(key)
	w.WriteString(")")
}

func (clickhouse) JSONNumber(w Writer, col, key string) {
	w.WriteString("JSONExtract(" + col + ", ")
	w.Bind(key)
	w.WriteString(", 'Nullable(Float64)')")
}

func (clickhouse) Contains(w Writer, haystack func(), needle string) {
	w.WriteString("positionCaseInsensitiveUTF8(")
	haystack()
	w.WriteString(", ")
	w.Bind(needle)
	w.WriteString(") > 0")
}

func (clickhouse) CTE() string { return " AS " }

func (e clickhouse) CreateTableAs(table, query string) string {
	return "CREATE TABLE " + e.QuoteIdent(table) + " ENGINE = MergeTree ORDER BY tuple() AS " + query
}

// CreateTable orders the table by every column but the last (the value).
func (e clickhouse) CreateTable(table string, cols []Column) string {
	keys := make([]string, 0, len(cols))
	for _, c := range cols[:max(len(cols)-1, 0)] {
		keys = append(keys, c.Name)
	}
	return "CREATE TABLE " + tableDef(e, table, cols) + " ENGINE = MergeTree ORDER BY (" + columnList(e, keys) + ")"
}

// CreateIndex: the table is sorted by its key columns already.
func (clickhouse) CreateIndex(_, _ string, _ []string) string { return "" }

func (e clickhouse) DropTable(table string) string {
	return "DROP TABLE IF EXISTS " + e.QuoteIdent(table)
}

// Swap: EXCHANGE TABLES is atomic; the live table is created empty first
// when there is none.
func (e clickhouse) Swap(next, live string) ([]string, bool) {
	return []string{
		"CREATE TABLE IF NOT EXISTS " + e.QuoteIdent(live) + " AS " + e.QuoteIdent(next),
		"EXCHANGE TABLES " + e.QuoteIdent(next) + " AND " + e.QuoteIdent(live),
		e.DropTable(next),
	}, false
}

func (clickhouse) Page(query, limit, offset string) string { return page(query, limit, offset) }

func (clickhouse) StopsEarly() bool { return false }

// Guard: per-query settings. max_execution_time (whole seconds, rounded
// up) comes first, because readonly=1 forbids changing settings after it.
func (clickhouse) Guard(timeout time.Duration, readOnly bool) Guard {
	var g Guard
	if timeout > 0 {
		g.Settings = append(g.Settings, Setting{"max_execution_time", strconv.FormatInt(ceilSeconds(timeout), 10)})
	}
	if !readOnly {
		g.Settings = append(g.Settings, Setting{"readonly", "1"})
	}
	return g
}

// Tables lists the tables of the current database.
func (clickhouse) Tables() string {
	return "SELECT name FROM system.tables WHERE database = currentDatabase()"
}
