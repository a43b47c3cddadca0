package engine

import (
	"strings"
	"time"
)

// mysql is MySQL (8.0.17 or later) and MariaDB (10.6 or later), as
// go-sql-driver/mysql drives them, with the default sql_mode (backslash
// escapes on). Timestamps are DATETIME, TIMESTAMP (read in a UTC session:
// see Session) or UTC text.
type mysql struct{}

// Session sets the time zone: a TIMESTAMP column reads, and text compares
// with it, in the session's zone (DATETIME has none).
func (mysql) Session() []string { return []string{"SET time_zone = '+00:00'"} }

func (mysql) Name() string { return "mysql" }

func (mysql) String() string { return "mysql" }

func (mysql) Marker(dst []byte, _ int, _ string) []byte { return appendQuestion(dst) }

func (mysql) MarkerLen(int, string) int { return 1 }

func (mysql) Numbered() bool { return false }

// Arg binds times as text, which compares with DATETIME and text columns.
func (mysql) Arg(v any) (any, string, error) {
	s, err := reduce(v)
	if err != nil {
		return nil, "", err
	}
	if s.kind == kTime {
		return s.timeText(), "", nil
	}
	return s.native(), "", nil
}

func (mysql) ListType() string { return "" }

func (mysql) ArgName(int) string { return "" }

// ReadsMarker: go-sql-driver reads '?' only.
func (mysql) ReadsMarker(sigil byte, _ string) bool { return sigil == '?' }

func (mysql) QuoteIdent(s string) string { return quote(s, '`') }

func (mysql) AppendString(dst []byte, s string) []byte { return appendBackslashed(dst, s, true) }

func (mysql) Lexical() Lexical {
	return Lexical{BackslashEscapes: true, HashComments: true, DoubleQuoteStrings: true, PipesOr: true, IntDiv: true, NullSafeEqual: true,
		BacktickNames: true, DashCommentSpace: true, DigitWords: true}
}

// Type: text is LONGBLOB, which compares, groups and sorts byte for byte.
// MySQL's and MariaDB's text types compare by a collation, and the
// defaults fold case (and accents) and ignore trailing spaces (PAD SPACE;
// utf8mb4_bin too), so a stored 'Chrome ' would answer a read of 'chrome'
// that the inline query, comparing JSONText, does not. The binary no-pad
// collations are named differently on the two servers
// (utf8mb4_nopad_bin, utf8mb4_0900_bin); the binary type is the same on
// both. Drivers return its values as bytes, which executors turn into
// text.
func (mysql) Type(k Kind) string { return [...]string{"LONGBLOB", "BIGINT", "DOUBLE"}[k] }

func (mysql) Timestamp(col string) string { return col }

func (mysql) StrictTimestamp(col string) string { return col }

// Truncate answers text, which compares with DATETIME and text columns.
func (mysql) Truncate(u Bucket, ts string) string {
	switch u {
	case Minute:
		return "DATE_FORMAT(" + ts + ", '%Y-%m-%d %H:%i:00')"
	case Hour:
		return "DATE_FORMAT(" + ts + ", '%Y-%m-%d %H:00:00')"
	case Week:
		return "DATE_FORMAT(DATE_SUB(" + ts + ", INTERVAL WEEKDAY(" + ts + ") DAY), '%Y-%m-%d 00:00:00')"
	case Month:
		return "DATE_FORMAT(" + ts + ", '%Y-%m-01 00:00:00')"
	}
	return "DATE_FORMAT(" + ts + ", '%Y-%m-%d 00:00:00')"
}

func (mysql) TimeText(ts string) string { return ts }

// JSONText tells a JSON null from the string "null" by JSON_TYPE, since
// JSON_UNQUOTE writes both as 'null'; the rule wants the empty text for
// the first.
// The text is cast to binary so that it compares and groups byte for byte
// (JSON text has the collation utf8mb4_bin, PAD SPACE), as on the other
// engines and as the LONGBLOB columns of stored tables (see Type) do.
func (mysql) JSONText(w Writer, col, key string) {
	src := jsonSource(col)
	w.WriteString("CAST(CASE WHEN JSON_TYPE(JSON_EXTRACT(" + src + ", ")
	w.Bind(jsonPath(key))
	w.WriteString(")) <> 'NULL' THEN JSON_UNQUOTE(JSON_EXTRACT(" + src + ", ")
	w.Bind(jsonPath(key))
	w.WriteString(")) ELSE '' END AS BINARY)")
}

func (mysql) JSONNumber(w Writer, col, key string) {
	src := jsonSource(col)
	w.WriteString("(CASE WHEN JSON_TYPE(JSON_EXTRACT(" + src + ", ")
	w.Bind(jsonPath(key))
	w.WriteString(")) IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL') THEN CAST(JSON_EXTRACT(" + src + ", ")
	w.Bind(jsonPath(key))
	w.WriteString(") AS DOUBLE) END)")
}

// jsonSource reads col as utf8mb4 text: a binary column (a LONGBLOB the
// library created, see Type) holds UTF-8 that MariaDB's JSON functions
// would read as Latin-1 and MySQL's refuse. For a text column it changes
// nothing.
func jsonSource(col string) string { return "CONVERT(" + col + " USING utf8mb4)" }

// Contains lowers both sides as text (a binary string has no case) and
// compares them as bytes: under the default collations LOCATE would also
// fold accents ('e' in 'é').
func (mysql) Contains(w Writer, haystack func(), needle string) {
	w.WriteString("LOCATE(CAST(LOWER(")
	w.Bind(needle)
	w.WriteString(") AS BINARY), CAST(LOWER(CONVERT(")
	haystack()
	w.WriteString(" USING utf8mb4)) AS BINARY)) > 0")
}

// CTE: MySQL has no MATERIALIZED keyword.
func (mysql) CTEAs() string { return " AS " }

func (mysql) Concat(parts ...string) string { return "concat(" + strings.Join(parts, ", ") + ")" }

func (e mysql) CreateTableAs(table, query string) string {
	return "CREATE TABLE " + e.QuoteIdent(table) + " AS " + query
}

func (e mysql) CreateTable(table string, cols []Column) string {
	return "CREATE TABLE " + tableDef(e, table, cols)
}

// CreateIndex: MySQL cannot index TEXT without a prefix length.
func (mysql) CreateIndex(_, _ string, _ []string) string { return "" }

func (e mysql) DropTable(table string) string { return "DROP TABLE IF EXISTS " + e.QuoteIdent(table) }

// Swap: MySQL commits DDL at once, but one RENAME TABLE of several pairs is
// atomic. The live table is created empty first when there is none, so the
// rename always has one to move aside.
func (e mysql) Swap(next, live string) ([]string, bool) {
	old := live + "_old"
	return []string{
		"CREATE TABLE IF NOT EXISTS " + e.QuoteIdent(live) + " LIKE " + e.QuoteIdent(next),
		e.DropTable(old),
		"RENAME TABLE " + e.QuoteIdent(live) + " TO " + e.QuoteIdent(old) + ", " + e.QuoteIdent(next) + " TO " + e.QuoteIdent(live),
		e.DropTable(old),
	}, false
}

func (mysql) GroupsInIndexOrder() bool { return false }

func (mysql) ZonedTruncation() bool { return false }

// Page is the standard wrapper. MariaDB merges a derived table into the
// outer query and drops its ORDER BY, so the run's Guard turns that merge
// off for every run (see Guard): a page keeps the query's order.
func (mysql) Page(query, limit, offset string) string { return page(query, limit, offset) }

func (mysql) StopsEarly() bool { return false }

// OneAliasSpace implements Engine.
func (mysql) OneAliasSpace() bool { return false }

// KeyType: the default collations fold case and accents and ignore
// trailing spaces, so keys are VARBINARY; 255 bytes keeps every composite
// key within InnoDB's 3072-byte limit.
func (mysql) KeyType() string { return "VARBINARY(255)" }

// LongTextType: TEXT stops at 64 KiB, too small for a long query.
func (mysql) LongTextType() string { return "MEDIUMTEXT" }

// Bytewise: key columns are VARBINARY, which compares bytes.
func (mysql) Bytewise(col string) string { return col }

func (mysql) ForUpdate() string { return " FOR UPDATE" }

// AddColumn: MySQL has no IF NOT EXISTS here, and commits DDL at once; the
// store takes the duplicate-column error for a step done before.
func (mysql) AddColumn(table, column, typ string) string { return addColumn(table, column, typ) }

func (mysql) SingleWriter() bool { return false }

// Guard: a READ ONLY transaction refuses writes to tables. MySQL and
// MariaDB commit DDL at once, which ends the transaction before the DDL
// runs, so it does not stop a DROP or ALTER; the Service's one-SELECT
// check does, and the executor's database user should have no DDL rights.
//
// The time limit is MariaDB's SET STATEMENT max_statement_time = N FOR
// (seconds), inside a /*M! */ comment that MariaDB executes and MySQL
// ignores. MySQL has no per-statement form that fits every query (its
// MAX_EXECUTION_TIME hint must follow the first SELECT keyword): set the
// session variable max_execution_time (milliseconds, SELECT only) for the
// executor's connections, for example with the go-sql-driver/mysql DSN
// parameter max_execution_time=30000. Without it MySQL stops a run only
// when the context ends and the driver closes the connection.
func (mysql) Guard(timeout time.Duration, readOnly bool) Guard {
	g := Guard{Tx: !readOnly}
	set := "optimizer_switch = 'derived_merge=off'"
	if timeout > 0 {
		set += ", max_statement_time = " + secondsText(timeout)
	}
	// MariaDB only (MySQL skips the /*M! comment): keep a derived table's
	// ORDER BY (the paging wrapper), and the time limit.
	g.Prefix = "/*M!100102 SET STATEMENT " + set + " FOR */ "
	return g
}

// Tables lists the tables of the connection's default database.
func (mysql) Tables() string {
	return "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
}

// Explain implements Engine.
func (mysql) Explain() (string, PlanForm) { return "EXPLAIN ", PlanMySQL }

// DisplayName implements Engine.
func (mysql) DisplayName() string { return "MySQL" }

// Embedded implements Engine: MySQL is a server.
func (mysql) Embedded() bool { return false }

// TypedAsDeclared implements Engine.
func (mysql) TypedAsDeclared() bool { return true }

// DecimalAggregates implements Engine: MySQL's sum of integers and avg are
// DECIMAL.
func (mysql) DecimalAggregates() bool { return true }

// IntegerCast implements Engine: MySQL's CAST knows SIGNED, not BIGINT.
func (mysql) IntegerCast() string { return "SIGNED" }

// TableBytes implements Engine: data_length + index_length of
// information_schema.tables, after ANALYZE TABLE has read the table's
// statistics again: InnoDB's sizes there are those of its last
// statistics, which a table just built may not have yet (MySQL 8 also
// caches them: set information_schema_stats_expiry to 0 for the session).
func (m mysql) TableBytes(table string) (string, string) {
	return "ANALYZE TABLE " + m.QuoteIdent(table),
		"SELECT coalesce(sum(data_length + index_length), 0) AS bytes FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = " + tableBytesLiteral(table)
}

// PartialIndexes implements Store: MySQL has no partial index.
func (mysql) PartialIndexes() bool { return false }

// UpsertReturns implements Store.
func (mysql) UpsertReturns() bool { return false }

// ResumWidens implements Engine.
func (mysql) ResumWidens() bool { return false }

// FloatLiteral implements Engine.
func (mysql) FloatLiteral(text string) bool {
	return strings.ContainsAny(text, "eE") && !hexLiteral(text)
}

// FloatDivision implements Engine.
func (mysql) FloatDivision() bool { return false }

// FloatJSON implements Engine.
func (mysql) FloatJSON() bool { return true }

// ExactSumType implements Engine.
func (mysql) ExactSumType() string { return "DECIMAL(30, 10)" }
