package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// clickhouse is ClickHouse, bound with the server's typed query parameters
// {p1:String}, {p2:Int64}, ...: the arguments are the values as text, in
// order, for parameters named p1, p2, ... (an executor names them). A
// client-side '?' binding would format values into the SQL text, breaking
// the promise that no value ever becomes part of it. A variable used twice
// reuses its parameter; list elements get one each. Dates and date-times
// are bound as UTC text.
type clickhouse struct {
	// cluster names the cluster the stored tables live on (see
	// ClickHouseCluster), "" on a single server.
	cluster string
}

// ErrCluster is wrapped by the error of ClickHouseCluster for a name that
// cannot be a cluster's.
var ErrCluster = errors.New("engine: invalid ClickHouse cluster name")

// ClickHouseCluster returns the ClickHouse engine for a cluster, named as
// in the servers' remote_servers configuration (or a macro such as
// "{cluster}"). Its stored tables are created ON CLUSTER: each is a
// ReplicatedMergeTree table named <table>_local on every shard (its
// Keeper path '/clickhouse/tables/{uuid}/{shard}', replica '{replica}'),
// behind a Distributed table named <table> that runs read from; a
// refresh fills the next table through its Distributed table and swaps
// the local tables with EXCHANGE TABLES ON CLUSTER, so that the
// Distributed table keeps pointing at the same local name. A table takes
// more than one statement to create or drop there: an executor expands
// the engine's statements (see Expander), as chexec does.
//
// The name may hold letters, digits and '_', '-', '.', '{', '}'; anything
// else, or an empty name, wraps ErrCluster.
func ClickHouseCluster(name string) (Engine, error) {
	if name == "" || len(name) > 255 {
		return nil, fmt.Errorf("%w: %q (want 1 to 255 characters)", ErrCluster, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(isLetter(c) && c < 0x80 || c >= '0' && c <= '9' || strings.IndexByte("_-.{}", c) >= 0) {
			return nil, fmt.Errorf("%w: %q has %q at byte %d (want letters, digits, '_', '-', '.', '{' or '}')", ErrCluster, name, c, i)
		}
	}
	return clickhouse{cluster: name}, nil
}

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

func (clickhouse) Lexical() Lexical {
	return Lexical{BackslashEscapes: true, HashComments: true, FixedEscapes: true, BacktickNames: true, NameEscapes: true, DollarQuotes: true, NestedComments: true, ASCIIWords: true}
}

func (clickhouse) Type(k Kind) string { return [...]string{"String", "Int64", "Float64"}[k] }

func (clickhouse) Timestamp(col string) string { return "toDateTime(" + col + ", 'UTC')" }

func (e clickhouse) StrictTimestamp(col string) string { return e.Timestamp(col) }

func (clickhouse) Truncate(u Bucket, ts string) string {
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

// JSONText: JSONExtractString alone answers the empty text for a number
// or a boolean, so the text of those is their raw JSON (JSONExtractRaw); a
// JSON null, a missing key and a NULL column are the empty text.
func (clickhouse) JSONText(w Writer, col, key string) {
	doc := "ifNull(" + col + ", '')"
	w.WriteString("multiIf(JSONType(" + doc + ", ")
	w.Bind(key)
	w.WriteString(") = 'String', JSONExtractString(" + doc + ", ")
	w.Bind(key)
	w.WriteString("), JSONType(" + doc + ", ")
	w.Bind(key)
	w.WriteString(") = 'Null', '', JSONExtractRaw(" + doc + ", ")
	w.Bind(key)
	w.WriteString("))")
}

// JSONNumber: JSONExtract(..., 'Nullable(Float64)') would read the string
// "12" as 12 and true as 1; only a JSON number is a number.
func (clickhouse) JSONNumber(w Writer, col, key string) {
	w.WriteString("if(JSONType(" + col + ", ")
	w.Bind(key)
	w.WriteString(") IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(" + col + ", ")
	w.Bind(key)
	w.WriteString("), NULL)")
}

func (clickhouse) Contains(w Writer, haystack func(), needle string) {
	w.WriteString("positionCaseInsensitiveUTF8(")
	haystack()
	w.WriteString(", ")
	w.Bind(needle)
	w.WriteString(") > 0")
}

func (clickhouse) CTEAs() string { return " AS " }

func (clickhouse) Concat(parts ...string) string { return "concat(" + strings.Join(parts, ", ") + ")" }

// CreateTableAs: on a cluster, the local tables are created empty, and
// Expand adds the Distributed table and the INSERT that fills it once,
// from the host the statement reaches: CREATE ... ON CLUSTER ... AS SELECT
// would run the SELECT on every host, each inserting all the rows.
func (e clickhouse) CreateTableAs(table, query string) string {
	if e.cluster != "" {
		return "CREATE TABLE " + e.QuoteIdent(table+localSuffix) + e.onCluster() + " ENGINE = " + replicated +
			" ORDER BY tuple() EMPTY AS " + query
	}
	return "CREATE TABLE " + e.QuoteIdent(table) + " ENGINE = MergeTree ORDER BY tuple() AS " + query
}

// CreateTable orders the table by every column but the last (the value).
func (e clickhouse) CreateTable(table string, cols []Column) string {
	keys := make([]string, 0, len(cols))
	for _, c := range cols[:max(len(cols)-1, 0)] {
		keys = append(keys, c.Name)
	}
	order := " ORDER BY (" + columnList(e, keys) + ")"
	if e.cluster != "" {
		return "CREATE TABLE " + e.QuoteIdent(table+localSuffix) + e.onCluster() + " " + columnDefs(e, cols) +
			" ENGINE = " + replicated + order
	}
	return "CREATE TABLE " + tableDef(e, table, cols) + " ENGINE = MergeTree" + order
}

// CreateIndex: the table is sorted by its key columns already.
func (clickhouse) CreateIndex(_, _ string, _ []string) string { return "" }

// DropTable: on a cluster, Expand adds the drop of the local tables.
func (e clickhouse) DropTable(table string) string {
	return "DROP TABLE IF EXISTS " + e.QuoteIdent(table) + e.onCluster()
}

func (clickhouse) GroupsInIndexOrder() bool { return false }

// ZonedTruncation: a DateTime without a zone of its own takes the server's.
func (clickhouse) ZonedTruncation() bool { return true }

// Swap: EXCHANGE TABLES is atomic; the live table is created empty first
// when there is none. On a cluster the local tables are exchanged, on
// each host atomically, and the Distributed table keeps pointing at the
// live local name (exchanging the Distributed tables instead would leave
// the live one reading the next build's local name, which the next
// refresh drops and refills). Rows inserted through the next Distributed
// table are flushed to the shards first.
func (e clickhouse) Swap(next, live string) ([]string, bool) {
	if e.cluster == "" {
		return []string{
			"CREATE TABLE IF NOT EXISTS " + e.QuoteIdent(live) + " AS " + e.QuoteIdent(next),
			"EXCHANGE TABLES " + e.QuoteIdent(next) + " AND " + e.QuoteIdent(live),
			e.DropTable(next),
		}, false
	}
	on := e.onCluster()
	nextLocal, liveLocal := e.QuoteIdent(next+localSuffix), e.QuoteIdent(live+localSuffix)
	return []string{
		"CREATE TABLE IF NOT EXISTS " + liveLocal + on + " AS " + nextLocal,
		"SYSTEM FLUSH DISTRIBUTED " + e.QuoteIdent(next) + on,
		"EXCHANGE TABLES " + nextLocal + " AND " + liveLocal + on,
		e.distributed(live, true),
		e.DropTable(next),
		"DROP TABLE IF EXISTS " + nextLocal + on,
	}, false
}

// The stored tables on a cluster: the local table of <table> is
// <table>_local, a ReplicatedMergeTree whose Keeper path is
// ClickHouse's default one (unique per table by its UUID, which ON
// CLUSTER gives every host alike, so that EXCHANGE TABLES and a
// re-created name never meet an old path).
const (
	localSuffix = "_local"
	replicated  = "ReplicatedMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}')"
)

// onCluster is the ON CLUSTER clause of the engine's DDL, "" on a single
// server. The name is a string literal, so that a macro ('{cluster}')
// expands.
func (e clickhouse) onCluster() string {
	if e.cluster == "" {
		return ""
	}
	return " ON CLUSTER " + string(e.AppendString(nil, e.cluster))
}

// distributed is the DDL of the Distributed table table over its local
// tables, inserting rows on a random shard.
func (e clickhouse) distributed(table string, ifNotExists bool) string {
	create := "CREATE TABLE "
	if ifNotExists {
		create += "IF NOT EXISTS "
	}
	local := table + localSuffix
	return create + e.QuoteIdent(table) + e.onCluster() + " AS " + e.QuoteIdent(local) +
		" ENGINE = Distributed(" + string(e.AppendString(nil, e.cluster)) + ", currentDatabase(), " +
		string(e.AppendString(nil, local)) + ", rand())"
}

// Expand implements Expander. On a cluster, the engine's create of a
// table's local tables (CreateTableAs, CreateTable) is followed by the
// create of its Distributed table, and, for CreateTableAs, by the INSERT
// of the query's rows through it, sent to the shards before the statement
// returns; its drop (DropTable) is followed by the drop of the local
// tables. Every other statement, and every statement on a single server,
// runs as it is. Each statement takes the arguments of stmt: those that
// hold the query use them, the others hold no parameter.
func (e clickhouse) Expand(stmt string) []string {
	if e.cluster == "" {
		return []string{stmt}
	}
	on := e.onCluster()
	if rest, ok := strings.CutPrefix(stmt, "DROP TABLE IF EXISTS "); ok {
		table, tail, ok := cutIdent(rest)
		if ok && tail == on && !strings.HasSuffix(table, localSuffix) {
			return []string{stmt, "DROP TABLE IF EXISTS " + e.QuoteIdent(table+localSuffix) + on}
		}
		return []string{stmt}
	}
	rest, ok := strings.CutPrefix(stmt, "CREATE TABLE ")
	if !ok {
		return []string{stmt}
	}
	local, tail, ok := cutIdent(rest)
	table, isLocal := strings.CutSuffix(local, localSuffix)
	if !ok || !isLocal || !strings.HasPrefix(tail, on+" ") {
		return []string{stmt}
	}
	tail = tail[len(on):]
	if query, ok := strings.CutPrefix(tail, " ENGINE = "+replicated+" ORDER BY tuple() EMPTY AS "); ok {
		return []string{stmt, e.distributed(table, false),
			"INSERT INTO " + e.QuoteIdent(table) + " SETTINGS distributed_foreground_insert = 1 " + query}
	}
	if strings.HasPrefix(tail, " (") {
		return []string{stmt, e.distributed(table, false)}
	}
	return []string{stmt}
}

// cutIdent reads the identifier that QuoteIdent wrote at the start of s,
// and returns it unquoted with what follows it.
func cutIdent(s string) (name, rest string, ok bool) {
	if len(s) < 2 || s[0] != '`' {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '`' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '`' {
			b.WriteByte('`')
			i++
			continue
		}
		return b.String(), s[i+1:], true
	}
	return "", "", false
}

// columnDefs writes "(col type, ...)".
func columnDefs(e Engine, cols []Column) string {
	b := []byte{'('}
	for i, c := range cols {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, e.QuoteIdent(c.Name)...)
		b = append(b, ' ')
		b = append(b, e.Type(c.Kind)...)
	}
	return string(append(b, ')'))
}

func (clickhouse) Page(query, limit, offset string) string { return page(query, limit, offset) }

func (clickhouse) StopsEarly() bool { return false }

// OneAliasSpace implements Engine.
func (clickhouse) OneAliasSpace() bool { return true }

// Guard: per-query settings. session_timezone is UTC, as the library's
// SQL assumes: a DateTime column without a zone of its own reads, and
// text compared with it parses, in the session's zone, which a server
// may default otherwise (its timezone setting or the user's profile;
// ClickHouse 23.6 or later). optimize_move_to_prewhere is off: it moved a
// condition of the query into the PREWHERE of a scoped table's read ahead
// of the tenant's condition (a primary key column's, which it puts last),
// so that the query's expressions ran on every project's rows and an
// error (toInt64 of another project's value, a division by its zero) told
// one project of another's rows; without it the tenant's condition
// filters first. A query may still write PREWHERE itself on an unscoped
// table. max_execution_time (whole seconds, rounded up) follows; readonly
// comes last, because readonly=1 forbids changing settings after it.
func (clickhouse) Guard(timeout time.Duration, readOnly bool) Guard {
	g := Guard{Settings: []Setting{{"session_timezone", "UTC"}, {"optimize_move_to_prewhere", "0"}}}
	if timeout > 0 {
		g.Settings = append(g.Settings, Setting{"max_execution_time", strconv.FormatInt(ceilSeconds(timeout), 10)})
	}
	if !readOnly {
		g.Settings = append(g.Settings, Setting{"readonly", "1"})
	}
	return g
}

// Tables lists the tables of the current database; on a cluster, a local
// table is listed by the name of its Distributed table, whose DropTable
// drops both (a local table must never be dropped alone as an orphan).
func (e clickhouse) Tables() string {
	if e.cluster != "" {
		return "SELECT DISTINCT if(endsWith(name, '" + localSuffix + "'), substring(name, 1, length(name) - " +
			strconv.Itoa(len(localSuffix)) + "), name) AS name FROM system.tables WHERE database = currentDatabase()"
	}
	return "SELECT name FROM system.tables WHERE database = currentDatabase()"
}

// Explain implements Engine.
func (clickhouse) Explain() (string, PlanForm) { return "", PlanNone }

// DisplayName implements Engine.
func (clickhouse) DisplayName() string { return "ClickHouse" }

// Embedded implements Engine: ClickHouse is a server (chDB, its library,
// answers as one).
func (clickhouse) Embedded() bool { return false }

// TypedAsDeclared implements Engine.
func (clickhouse) TypedAsDeclared() bool { return true }

// DecimalAggregates implements Engine: ClickHouse's sum of integers is an
// integer, its avg a Float64.
func (clickhouse) DecimalAggregates() bool { return false }

// IntegerCast implements Engine.
func (clickhouse) IntegerCast() string { return "Int64" }

// TableBytes implements Engine: bytes_on_disk of the table's active parts
// on the server the query reaches (on a cluster, that server's shard
// only).
func (clickhouse) TableBytes(table string) (string, string) {
	return "", "SELECT sum(bytes_on_disk) AS bytes FROM system.parts WHERE active AND database = currentDatabase() AND table = " + tableBytesLiteral(table)
}

// ResumWidens implements Engine.
func (clickhouse) ResumWidens() bool { return false }

// FloatLiteral implements Engine.
func (clickhouse) FloatLiteral(text string) bool { return fractional(text) || isNonFinite(text) }

// FloatDivision implements Engine.
func (clickhouse) FloatDivision() bool { return true }

// FloatJSON implements Engine.
func (clickhouse) FloatJSON() bool { return false }

// ExactSumType implements Engine.
func (clickhouse) ExactSumType() string { return "Nullable(Decimal(38, 10))" }
