package engine

import (
	"strings"
	"time"
)

// sqlite is SQLite (3.38 or later, for the JSON functions), as
// modernc.org/sqlite and mattn/go-sqlite3 drive it. Timestamps are UTC
// text "YYYY-MM-DD HH:MM:SS", which sorts and compares as time.
type sqlite struct{}

func (sqlite) Name() string { return "sqlite" }

func (sqlite) String() string { return "sqlite" }

func (sqlite) Marker(dst []byte, _ int, _ string) []byte { return appendQuestion(dst) }

func (sqlite) MarkerLen(int, string) int { return 1 }

func (sqlite) Numbered() bool { return false }

// Arg binds times as text, which compares with text columns.
func (sqlite) Arg(v any) (any, string, error) {
	s, err := reduce(v)
	if err != nil {
		return nil, "", err
	}
	if s.kind == kTime {
		return s.timeText(), "", nil
	}
	return s.native(), "", nil
}

func (sqlite) ListType() string { return "" }

func (sqlite) ArgName(int) string { return "" }

// ReadsMarker: SQLite reads ?, ?NNN, :name, @name, $name and $NNN.
func (sqlite) ReadsMarker(sigil byte, rest string) bool {
	switch sigil {
	case '?':
		return true
	case '$':
		return digits(rest) || word(rest)
	case ':', '@':
		return true
	}
	return false
}

func (sqlite) QuoteIdent(s string) string { return quote(s, '"') }

func (sqlite) AppendString(dst []byte, s string) []byte { return appendDoubled(dst, s) }

func (sqlite) Lexical() Lexical {
	return Lexical{FixedEscapes: true, BacktickNames: true, BracketNames: true}
}

func (sqlite) Type(k Kind) string { return [...]string{"TEXT", "INTEGER", "REAL"}[k] }

func (sqlite) Timestamp(col string) string { return col }

// StrictTimestamp fails the statement on a value that is not UTC text
// YYYY-MM-DD HH:MM:SS. SQLite compares such text with a bound date as
// text, which for other spellings ('2025-05-01T10:00:00Z', a bare date, a
// number) is not comparing instants, so buckets would answer otherwise
// than the inline query. json_extract is the one core function whose error
// message carries text of the query's choice: it names the value.
func (e sqlite) StrictTimestamp(col string) string {
	msg := string(e.AppendString(nil, "materialize: "+col+" is not UTC text YYYY-MM-DD HH:MM:SS: "))
	return "CASE WHEN " + col + " IS NULL OR " + col + " = strftime('%Y-%m-%d %H:%M:%S', " + col + ") THEN " +
		col + " ELSE json_extract('{}', " + msg + " || " + col + ") END"
}

func (sqlite) Truncate(u Bucket, ts string) string {
	switch u {
	case Minute:
		return "strftime('%Y-%m-%d %H:%M:00', " + ts + ")"
	case Hour:
		return "strftime('%Y-%m-%d %H:00:00', " + ts + ")"
	case Week:
		// weekday 0 moves to the coming Sunday (or stays on one); six days
		// back is that week's Monday.
		return "strftime('%Y-%m-%d 00:00:00', " + ts + ", 'weekday 0', '-6 days')"
	case Month:
		return "strftime('%Y-%m-01 00:00:00', " + ts + ")"
	}
	return "strftime('%Y-%m-%d 00:00:00', " + ts + ")"
}

func (sqlite) TimeText(ts string) string { return ts }

// JSONText writes true and false as their JSON text: json_extract gives
// them as the integers 1 and 0.
func (sqlite) JSONText(w Writer, col, key string) {
	w.WriteString("(CASE json_type(" + col + ", ")
	w.Bind(jsonPath(key))
	w.WriteString(") WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE COALESCE(CAST(json_extract(" + col + ", ")
	w.Bind(jsonPath(key))
	w.WriteString(") AS TEXT), '') END)")
}

func (sqlite) JSONNumber(w Writer, col, key string) {
	w.WriteString("(CASE WHEN json_type(" + col + ", ")
	w.Bind(jsonPath(key))
	w.WriteString(") IN ('integer', 'real') THEN json_extract(" + col + ", ")
	w.Bind(jsonPath(key))
	w.WriteString(") END)")
}

func (sqlite) Contains(w Writer, haystack func(), needle string) {
	w.WriteString("instr(lower(")
	haystack()
	w.WriteString("), lower(")
	w.Bind(needle)
	w.WriteString(")) > 0")
}

// CTE: SQLite may inline a CTE into every reference otherwise.
func (sqlite) CTEAs() string { return " AS MATERIALIZED " }

func (sqlite) Concat(parts ...string) string { return strings.Join(parts, " || ") }

func (e sqlite) CreateTableAs(table, query string) string {
	return "CREATE TABLE " + e.QuoteIdent(table) + " AS " + query
}

func (e sqlite) CreateTable(table string, cols []Column) string {
	return "CREATE TABLE " + tableDef(e, table, cols)
}

func (e sqlite) CreateIndex(index, table string, cols []string) string {
	return "CREATE INDEX IF NOT EXISTS " + e.QuoteIdent(index) + " ON " + e.QuoteIdent(table) + " (" + columnList(e, cols) + ")"
}

// GroupsInIndexOrder: SQLite groups by sorting, unless an index gives the order.
func (sqlite) GroupsInIndexOrder() bool { return true }

// ZonedTruncation: SQLite's date functions work in UTC.
func (sqlite) ZonedTruncation() bool { return false }

func (e sqlite) DropTable(table string) string { return "DROP TABLE IF EXISTS " + e.QuoteIdent(table) }

// Swap: SQLite's DDL is transactional, so a drop and a rename in one
// transaction replace the table atomically.
func (e sqlite) Swap(next, live string) ([]string, bool) {
	return []string{e.DropTable(live), "ALTER TABLE " + e.QuoteIdent(next) + " RENAME TO " + e.QuoteIdent(live)}, true
}

func (sqlite) Page(query, limit, offset string) string { return page(query, limit, offset) }

func (sqlite) StopsEarly() bool { return true }

// OneAliasSpace implements Engine.
func (sqlite) OneAliasSpace() bool { return false }

func (sqlite) KeyType() string { return "VARCHAR(255)" }

func (sqlite) LongTextType() string { return "TEXT" }

// Bytewise: SQLite's default collation, BINARY, compares bytes.
func (sqlite) Bytewise(col string) string { return col }

// ForUpdate: the store's write transactions hold SQLite's single write lock
// from their first statement.
func (sqlite) ForUpdate() string { return "" }

// AddColumn: SQLite has no IF NOT EXISTS here; the store takes the
// duplicate-column error for a step done before.
func (sqlite) AddColumn(table, column, typ string) string { return addColumn(table, column, typ) }

func (sqlite) SingleWriter() bool { return true }

// Guard: SQLite has no read-only transaction, so PRAGMA query_only makes
// the connection refuse every change to the database files, and End turns
// it off again before the connection goes back to a pool that writers
// share. The transaction (a deferred BEGIN) holds the one connection that
// Begin, the query and End must run on. A read-only pool (opened with
// _pragma=query_only(1)) needs none of it.
//
// The time limit is the context's: the drivers call sqlite3_interrupt when
// it ends, which SQLite checks at every step of a scan or loop, so WITH
// RECURSIVE and functions called once per row stop at the limit. It is not
// checked inside one call of a function: one call that builds a huge value
// (printf('%.*c', 999999999, 'x'), replace over such a value, randomblob)
// runs to its end, bounded only by SQLITE_LIMIT_LENGTH (a billion bytes by
// default: from about a second to 20 s). The access check refuses
// randomblob and zeroblob; a host that needs a tighter bound lowers
// SQLITE_LIMIT_LENGTH on the run connections (modernc.org/sqlite's Limit).
func (sqlite) Guard(_ time.Duration, readOnly bool) Guard {
	if readOnly {
		return Guard{}
	}
	return Guard{Tx: true, Begin: []string{"PRAGMA query_only = 1"}, End: []string{"PRAGMA query_only = 0"}}
}

// Tables lists the main database's tables.
func (sqlite) Tables() string { return "SELECT name FROM sqlite_master WHERE type = 'table'" }

// Explain implements Engine.
func (sqlite) Explain() (string, PlanForm) { return "EXPLAIN QUERY PLAN ", PlanSQLite }

// DisplayName implements Engine.
func (sqlite) DisplayName() string { return "SQLite" }

// Embedded implements Engine: SQLite runs in the program's process.
func (sqlite) Embedded() bool { return true }

// TypedAsDeclared implements Engine: SQLite's declared types are affinities.
func (sqlite) TypedAsDeclared() bool { return false }

// DecimalAggregates implements Engine: SQLite's sum of integers is an
// integer, its avg a double.
func (sqlite) DecimalAggregates() bool { return false }

// IntegerCast implements Engine.
func (sqlite) IntegerCast() string { return "BIGINT" }

// TableBytes implements Engine: the pages of the table and its indexes in
// the dbstat virtual table (which the SQLite build must have:
// modernc.org/sqlite has it).
func (sqlite) TableBytes(table string) (string, string) {
	return "", "SELECT coalesce(sum(pgsize), 0) AS bytes FROM dbstat WHERE name = " + tableBytesLiteral(table)
}

// PartialIndexes implements Store.
func (sqlite) PartialIndexes() bool { return true }

// UpsertReturns implements Store.
func (sqlite) UpsertReturns() bool { return true }

// ResumWidens implements Engine.
func (sqlite) ResumWidens() bool { return false }

// FloatLiteral implements Engine.
func (sqlite) FloatLiteral(text string) bool { return fractional(text) }

// FloatDivision implements Engine.
func (sqlite) FloatDivision() bool { return false }

// FloatJSON implements Engine.
func (sqlite) FloatJSON() bool { return true }

// ExactSumType implements Engine.
func (sqlite) ExactSumType() string { return "" }
