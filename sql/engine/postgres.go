package engine

import (
	"strconv"
	"strings"
	"time"
)

// postgres is PostgreSQL (12 or later), as pgx and lib/pq drive it.
// Timestamps may be text, timestamp or timestamptz columns; they are read
// as timestamp, which for timestamptz is UTC in a session whose time zone
// is UTC (see Session).
type postgres struct{}

// Session sets the time zone: a timestamptz column reads as timestamp, and
// text compares with it, in the session's zone.
func (postgres) Session() []string { return []string{"SET TIME ZONE 'UTC'"} }

func (postgres) Name() string { return "postgresql" }

func (postgres) String() string { return "postgresql" }

func (postgres) Marker(dst []byte, n int, _ string) []byte { return appendNumbered(dst, '$', n) }

func (postgres) MarkerLen(n int, _ string) int { return 1 + decimalLen(n) }

func (postgres) Numbered() bool { return true }

// Arg binds times as UTC text "YYYY-MM-DD HH:MM:SS" ("YYYY-MM-DD" for a
// whole day), as SQLite and MySQL do. The untyped marker takes the type of
// what it is compared with: a text column compares it as text, which for
// timestamps stored as UTC text is comparing instants; a timestamp or
// timestamptz column reads it as a time (timestamptz in the session's
// zone, UTC: see Session). A time.Time would be sent as a timestamp to
// timestamp columns but as its Go text ("2025-05-01 00:00:00 +0000 UTC")
// to text ones, which then compare wrongly.
func (postgres) Arg(v any) (any, string, error) {
	s, err := reduce(v)
	if err != nil {
		return nil, "", err
	}
	if s.kind == kTime {
		return s.timeText(), "", nil
	}
	return s.native(), "", nil
}

func (postgres) ListType() string { return "" }

func (postgres) ArgName(int) string { return "" }

// ReadsMarker: PostgreSQL's drivers read $NNN only.
func (postgres) ReadsMarker(sigil byte, rest string) bool { return sigil == '$' && digits(rest) }

func (postgres) QuoteIdent(s string) string { return quote(s, '"') }

// AppendString relies on standard_conforming_strings (on by default).
func (postgres) AppendString(dst []byte, s string) []byte { return appendDoubled(dst, s) }

func (postgres) Lexical() Lexical {
	return Lexical{EscapeStrings: true, DollarQuotes: true, NestedComments: true, ReturnEndsComment: true}
}

func (postgres) Type(k Kind) string { return [...]string{"text", "bigint", "double precision"}[k] }

// Timestamp casts, so that text columns and timestamp columns read alike.
func (postgres) Timestamp(col string) string { return "(" + col + ")::timestamp" }

func (e postgres) StrictTimestamp(col string) string { return e.Timestamp(col) }

func (postgres) Truncate(u Bucket, ts string) string {
	return "date_trunc('" + string(u) + "', " + ts + ")"
}

func (postgres) TimeText(ts string) string { return "to_char(" + ts + ", 'YYYY-MM-DD HH24:MI:SS')" }

func (postgres) JSONText(w Writer, col, key string) {
	w.WriteString("COALESCE((" + col + "::jsonb) ->> ")
	w.Bind(key)
	w.WriteString("::text, '')")
}

func (postgres) JSONNumber(w Writer, col, key string) {
	w.WriteString("(CASE WHEN jsonb_typeof((" + col + "::jsonb) -> ")
	w.Bind(key)
	w.WriteString("::text) = 'number' THEN ((" + col + "::jsonb) ->> ")
	w.Bind(key)
	w.WriteString("::text)::double precision END)")
}

// Contains folds case with ICU's root locale (the collation "und-x-icu"),
// whatever the database's LC_CTYPE: lower() follows the collation of its
// argument, which is the database's default for JSON text and bound
// values, and a cluster initialised with --locale=C folds ASCII letters
// only ('Ü' stays 'Ü') where one with C.UTF-8 folds every letter. ICU
// folds every letter on every cluster, as MySQL's utf8mb4 and ClickHouse's
// UTF-8 functions do. It needs a server built with ICU (Debian's, Ubuntu's,
// the PGDG packages and the official images are).
func (postgres) Contains(w Writer, haystack func(), needle string) {
	w.WriteString("strpos(lower((")
	haystack()
	w.WriteString(") COLLATE \"und-x-icu\"), lower(")
	w.Bind(needle)
	w.WriteString("::text COLLATE \"und-x-icu\")) > 0")
}

// CTE: PostgreSQL 12+ may inline a CTE into every reference otherwise.
func (postgres) CTEAs() string { return " AS MATERIALIZED " }

func (postgres) Concat(parts ...string) string { return strings.Join(parts, " || ") }

func (e postgres) CreateTableAs(table, query string) string {
	return "CREATE TABLE " + e.QuoteIdent(table) + " AS " + query
}

func (e postgres) CreateTable(table string, cols []Column) string {
	return "CREATE TABLE " + tableDef(e, table, cols)
}

func (e postgres) CreateIndex(index, table string, cols []string) string {
	return "CREATE INDEX IF NOT EXISTS " + e.QuoteIdent(index) + " ON " + e.QuoteIdent(table) + " (" + columnList(e, cols) + ")"
}

// GroupsInIndexOrder: PostgreSQL hashes, and reads the table for visibility.
func (postgres) GroupsInIndexOrder() bool { return false }

func (postgres) ZonedTruncation() bool { return false }

func (e postgres) DropTable(table string) string {
	return "DROP TABLE IF EXISTS " + e.QuoteIdent(table)
}

// Swap: PostgreSQL's DDL is transactional.
func (e postgres) Swap(next, live string) ([]string, bool) {
	return []string{e.DropTable(live), "ALTER TABLE " + e.QuoteIdent(next) + " RENAME TO " + e.QuoteIdent(live)}, true
}

func (postgres) Page(query, limit, offset string) string { return page(query, limit, offset) }

func (postgres) StopsEarly() bool { return false }

// OneAliasSpace implements Engine.
func (postgres) OneAliasSpace() bool { return false }

func (postgres) KeyType() string { return "VARCHAR(255)" }

func (postgres) LongTextType() string { return "TEXT" }

// Bytewise: PostgreSQL's default collation is usually a locale's.
func (postgres) Bytewise(col string) string { return col + ` COLLATE "C"` }

func (postgres) ForUpdate() string { return " FOR UPDATE" }

func (postgres) AddColumn(table, column, typ string) string {
	return "ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS " + column + " " + typ
}

func (postgres) SingleWriter() bool { return false }

// Guard: a READ ONLY transaction, in which SET LOCAL statement_timeout
// bounds the query on the server (whole milliseconds, rounded up) and ends
// with the transaction. A read-only pool still needs the transaction for
// the timeout.
func (postgres) Guard(timeout time.Duration, readOnly bool) Guard {
	g := Guard{Tx: !readOnly || timeout > 0}
	if timeout > 0 {
		g.Begin = []string{"SET LOCAL statement_timeout = " + strconv.FormatInt(ceilMillis(timeout), 10)}
	}
	return g
}

// Tables lists the tables of the current schema, the first of the
// search_path, where unqualified CREATE TABLE puts them.
func (postgres) Tables() string {
	return "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
}

// Explain implements Engine.
func (postgres) Explain() (string, PlanForm) { return "EXPLAIN (FORMAT JSON) ", PlanPostgresJSON }

// DisplayName implements Engine.
func (postgres) DisplayName() string { return "PostgreSQL" }

// Embedded implements Engine: PostgreSQL is a server.
func (postgres) Embedded() bool { return false }

// TypedAsDeclared implements Engine.
func (postgres) TypedAsDeclared() bool { return true }

// DecimalAggregates implements Engine: PostgreSQL's sum of bigints and avg
// of integers are numeric.
func (postgres) DecimalAggregates() bool { return true }

// IntegerCast implements Engine.
func (postgres) IntegerCast() string { return "bigint" }

// TableBytes implements Engine: pg_total_relation_size (heap, TOAST and
// indexes).
func (postgres) TableBytes(table string) (string, string) {
	return "", "SELECT pg_total_relation_size(" + tableBytesLiteral(table) + "::regclass) AS bytes"
}

// PartialIndexes implements Store.
func (postgres) PartialIndexes() bool { return true }

// UpsertReturns implements Store.
func (postgres) UpsertReturns() bool { return true }

// ResumWidens implements Engine.
func (postgres) ResumWidens() bool { return true }

// FloatLiteral implements Engine.
func (postgres) FloatLiteral(text string) bool { return false }

// FloatDivision implements Engine.
func (postgres) FloatDivision() bool { return false }

// FloatJSON implements Engine.
func (postgres) FloatJSON() bool { return false }

// ExactSumType implements Engine.
func (postgres) ExactSumType() string { return "numeric" }
