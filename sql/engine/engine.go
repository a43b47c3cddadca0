// Package engine holds everything that differs between the SQL engines
// endpointkit runs on: bind markers and argument encoding, identifier and
// string quoting, timestamps and their buckets, JSON property extraction,
// type names, the DDL of materialized tables and their swap, and the paging
// wrapper. Each engine is one file (sqlite.go, postgres.go, mysql.go,
// clickhouse.go) holding one value; nothing else in the library asks which
// engine it runs on.
//
// A host only names an engine: pass SQLite, PostgreSQL, MySQL or ClickHouse
// to the executor and store constructors, or look one up with ByName. The
// methods serve the library's own SQL generators (packages placeholder,
// insight and materialize) and implementers of an Executor; they return SQL
// text and never touch a database.
package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Engine is one SQL engine's way of writing the SQL endpointkit generates.
// Every method is pure and safe for concurrent use. Expressions passed in
// (col, ts) are SQL text the caller already wrote safely (a quoted
// identifier or generated SQL); values always travel through a Writer's
// Bind, never in the text.
//
// Adding an engine means adding one file with a value that implements
// Engine and passing the shared suite in engine_test.go (and the
// executor and equivalence suites on a real server).
type Engine interface {
	// Name is the canonical name, as ByName accepts it.
	Name() string
	// String returns Name, for fmt.
	String() string

	// Marker appends the bind marker of argument n (1-based) whose
	// parameter type is typ (see Arg).
	Marker(dst []byte, n int, typ string) []byte
	// MarkerLen is the length of that marker, so that a render sizes its
	// text once.
	MarkerLen(n int, typ string) int
	// Numbered reports whether markers carry the argument's number, so that
	// a value used twice is bound once.
	Numbered() bool
	// Arg converts a value (string, bool, int64, float64, time.Time, a
	// variable.Timestamp, or another Go integer or float) to the argument the engine's drivers take, with the
	// parameter type a typed marker needs ("" where markers are untyped).
	// A value the engine cannot compare faithfully is an *ArgError.
	Arg(v any) (arg any, typ string, err error)
	// ArgName is the name under which a driver must receive argument n
	// (1-based), "" where arguments are positional.
	ArgName(n int) string
	// ListType is the parameter type of one element of a bound list.
	ListType() string
	// ReadsMarker reports whether the engine's drivers read sigil followed
	// by rest (digits, or a word) as a bind marker.
	ReadsMarker(sigil byte, rest string) bool

	// QuoteIdent returns s as a quoted identifier.
	QuoteIdent(s string) string
	// AppendString appends s as a string literal. It serves SQL text that
	// must repeat the user's own query text, never run-time values.
	AppendString(dst []byte, s string) []byte
	// Lexical describes how the engine reads string literals and comments,
	// for the library's tokenizers.
	Lexical() Lexical

	// Type is the column type of a stored value of kind k.
	Type(k Kind) string

	// Timestamp reads col, a timestamp stored as UTC text
	// "YYYY-MM-DD HH:MM:SS" or as the engine's own time type, as a value
	// that Truncate takes and that compares with a bound date-time.
	Timestamp(col string) string
	// StrictTimestamp is Timestamp for building stored tables: on an engine
	// that compares timestamps as text it fails the statement on a value
	// that is not in the canonical layout, instead of bucketing it wrongly.
	StrictTimestamp(col string) string
	// Truncate truncates the timestamp ts (from Timestamp) to the start of
	// its bucket, UTC, weeks starting on Monday; the result compares with a
	// bound date-time as ts does.
	Truncate(u Bucket, ts string) string
	// TimeText formats a timestamp (from Timestamp or Truncate) as UTC text
	// "YYYY-MM-DD HH:MM:SS".
	TimeText(ts string) string

	// JSONText writes the text of the top-level key of the JSON object in
	// col: "" when the key is missing, JSON null or "" (the library's one
	// JSON rule: an absent value and an empty one select the same rows).
	// Numbers are written as their JSON text.
	JSONText(w Writer, col, key string)
	// JSONNumber writes the value of the key when it is a JSON number, else
	// NULL; a number stored as JSON text ("12") is text, not a number.
	JSONNumber(w Writer, col, key string)
	// Contains writes a case-insensitive substring test: whether the text
	// that haystack writes contains needle (bound).
	Contains(w Writer, haystack func(), needle string)
	// CTEAs is the text between a common table expression's name and its
	// parenthesized body: " AS MATERIALIZED " where the engine would
	// otherwise inline the expression into every reference (asking it to
	// compute it once), " AS " where it has no such keyword.
	CTEAs() string
	// Concat is the expression that joins the texts of the expressions
	// parts, as a user writes it in a query on the engine: a || b where
	// || concatenates, concat(a, b) where it does not (MySQL, where || is
	// OR) or where a function is the usual spelling (ClickHouse). The
	// Service shows it in messages about a query.
	Concat(parts ...string) string

	// CreateTableAs is the DDL that builds table from query.
	CreateTableAs(table, query string) string
	// CreateTable is the DDL of an empty table of the given columns; the
	// columns but the last are its sort key where the engine wants one.
	CreateTable(table string, cols []Column) string
	// CreateIndex is the DDL of an index on the columns cols of table,
	// "" when the engine needs none or cannot index them.
	CreateIndex(index, table string, cols []string) string
	// GroupsInIndexOrder reports whether the engine aggregates rows fastest
	// as it reads them in an index's order, and sorts them otherwise (it
	// has no hash aggregation): a stored table's index then also holds the
	// columns its reads group and take, so that a read streams.
	GroupsInIndexOrder() bool
	// ZonedTruncation reports whether the engine's own date functions
	// (toDate, toStartOfDay, dateTrunc and their aliases) truncate a time
	// in the zone of its column's type or of the server, not the
	// session's, as Truncate's stored buckets (UTC) do; a query's
	// truncation agrees with them only where it names 'UTC'.
	ZonedTruncation() bool
	// DropTable is the DDL that drops table if it exists.
	DropTable(table string) string
	// Swap returns the statements that replace table live by table next
	// (which then no longer exists), and whether they must run in one
	// transaction to be atomic. A reader sees the old or the new table,
	// never none.
	Swap(next, live string) (stmts []string, inTx bool)

	// Page wraps a query so that it returns at most the rows from offset on,
	// up to limit; limit and offset are markers or placeholders.
	Page(query, limit, offset string) string
	// StopsEarly reports whether closing a result after its first rows
	// ends the engine's work, as a LIMIT would (an in-process engine that
	// computes rows as they are read); a client-server engine sends, or its
	// driver drains, the rest.
	StopsEarly() bool
	// OneAliasSpace reports whether a column's alias and a table
	// expression's name may not be the same in one SELECT (ClickHouse
	// refuses "Duplicate aliases"): a stored column named like a scoped
	// table, which the tenant scope reads as (SELECT ...) AS <table>,
	// then takes a generated name.
	OneAliasSpace() bool
	// ResumWidens reports whether the sum of an integer column's sums is
	// of another type than the sum of the column (PostgreSQL: sum(bigint)
	// is numeric), so that a division or remainder of a sum that a stored
	// table's read adds up again would keep a fraction that the inline
	// query's integer division drops.
	ResumWidens() bool
	// Embedded reports whether the engine is a library in the program's
	// own process, reached through its database/sql driver (SQLite), not
	// a server: what a connection keeps (its prepared statements) costs
	// the program, and its limits are the program's to set.
	Embedded() bool

	// Explain is how the engine shows its plan of a query without running
	// it: the prefix written before the query, and the form of the plan
	// it answers (PlanNone, with no prefix, where the library does not
	// read the engine's plans).
	Explain() (prefix string, form PlanForm)

	// DisplayName is the engine's name as its makers write it, for
	// messages to people: "SQLite", "PostgreSQL", "MySQL", "ClickHouse".
	DisplayName() string
	// TypedAsDeclared reports whether a column holds values of its
	// declared type: false where the declared type is an affinity only
	// (SQLite: a NUMERIC or DECIMAL column holds doubles, and an
	// expression has no declared type at all).
	TypedAsDeclared() bool

	// DecimalAggregates reports whether sum of integers and avg of
	// integers or decimals are decimals (PostgreSQL's numeric, MySQL's
	// DECIMAL, which their drivers answer as text), so that a read of
	// stored partial sums divides decimals, and casts a sum of counts back
	// to IntegerCast; elsewhere (SQLite, ClickHouse) a sum of integers is
	// an integer and avg a double.
	DecimalAggregates() bool
	// FloatLiteral reports whether the engine reads the number literal
	// text, as written (42, 0.1, 1e3), as a floating-point value:
	// SQLite's REAL and ClickHouse's Float64 for a fraction or an
	// exponent, MySQL's DOUBLE for an exponent (0.1 is a DECIMAL there),
	// never PostgreSQL (numeric). A sum of floating-point values depends
	// on the order it adds them in.
	FloatLiteral(text string) bool
	// FloatDivision reports whether / divides in floating point whatever
	// its operands (ClickHouse); elsewhere integers divide as integers
	// and decimals as decimals.
	FloatDivision() bool
	// FloatJSON reports whether a number taken out of JSON (json_extract,
	// -> and ->> on SQLite; JSON_EXTRACT, JSON_VALUE, -> and ->> on MySQL,
	// whose arithmetic reads a JSON value or a string as a DOUBLE) is
	// floating point when it has a fraction; elsewhere such a value is
	// text or JSON until a cast or a typed extraction says its type.
	FloatJSON() bool
	// ExactSumType is the type CAST(x AS ...) takes to make x a decimal,
	// whose sums are the same in any order; "" where the engine has none
	// (SQLite, where a DECIMAL is a REAL when it has a fraction).
	ExactSumType() string
	// IntegerCast is the type CAST(x AS ...) takes to make x a 64-bit
	// integer.
	IntegerCast() string
	// TableBytes returns the statements that measure the bytes a stored
	// table takes on disk, indexes included: prepare, when not "", runs
	// first (it refreshes the statistics measure reads), and measure is a
	// query whose one row and column is the size. table is the library's
	// own name (letters, digits and underscores). measure is "" for an
	// engine that cannot be measured.
	TableBytes(table string) (prepare, measure string)

	// Guard is how an executor runs a saved query read-only and within
	// timeout (0: no limit but the context's) on this engine. readOnly
	// tells that the connection is read-only already (a pool the host
	// opened so), so that only the time limit is left to apply.
	Guard(timeout time.Duration, readOnly bool) Guard
	// Tables is a query whose one column is the name of every table of the
	// current database or schema, where the library creates its stored
	// tables; a caller filters the names by prefix.
	Tables() string
}

// Guard is what an executor does around one run of a saved query so that
// it cannot write and stops at its time limit on the engine's side, not
// only when the context ends (a client-server engine may go on computing
// after its client gave up). Each field that is set applies; the zero
// Guard runs the query as it is.
type Guard struct {
	// Tx: the query runs in a transaction begun read-only (database/sql's
	// TxOptions{ReadOnly: true}, which drivers send as PostgreSQL's BEGIN
	// READ ONLY and MySQL's START TRANSACTION READ ONLY), rolled back once
	// its rows are read.
	Tx bool
	// Begin are statements run first, in that transaction (PostgreSQL's
	// SET LOCAL statement_timeout, SQLite's PRAGMA query_only = 1).
	Begin []string
	// End are statements run on the connection once the transaction is
	// over, however it ended, to undo what Begin changed beyond it
	// (SQLite's PRAGMA query_only = 0). A connection on which they fail
	// must not be used again.
	End []string
	// Prefix is written before the query's text (MariaDB's SET STATEMENT
	// max_statement_time = N FOR).
	Prefix string
	// Settings are sent with the query, in order, by executors whose
	// drivers take settings per query (ClickHouse's max_execution_time and
	// readonly).
	Settings []Setting
}

// Setting is a setting sent with a query.
type Setting struct {
	Name, Value string
}

// IsZero reports whether g asks for nothing: the query runs as it is.
func (g Guard) IsZero() bool {
	return !g.Tx && len(g.Begin) == 0 && len(g.End) == 0 && g.Prefix == "" && len(g.Settings) == 0
}

// Writer is where an Engine writes generated SQL with bound values
// (placeholder.Builder is one).
type Writer interface {
	// WriteString appends SQL text as it is.
	WriteString(s string)
	// Bind appends a bind marker and its argument.
	Bind(v any)
}

// Lexical is how an engine reads string literals and comments.
type Lexical struct {
	// BackslashEscapes: a backslash escapes the next character in a string
	// literal (MySQL, ClickHouse).
	BackslashEscapes bool
	// HashComments: '#' starts a comment that runs to the end of the line
	// (MySQL, ClickHouse).
	HashComments bool
	// DoubleQuoteStrings: "..." is a string literal, not an identifier
	// (MySQL without ANSI_QUOTES).
	DoubleQuoteStrings bool
	// PipesOr: || is a logical OR, not string concatenation (MySQL).
	PipesOr bool
	// IntDiv: the operator DIV divides integers (MySQL).
	IntDiv bool
	// NullSafeEqual: the operator <=> compares with NULL as a value (MySQL).
	NullSafeEqual bool

	// The fields below serve package sql/sqltoken, which reads a
	// query as its engine does: where a token starts and ends.

	// FixedEscapes: no setting of the server or the session changes
	// whether a backslash escapes in a string literal (SQLite: never;
	// ClickHouse: always). PostgreSQL's standard_conforming_strings and
	// MySQL's NO_BACKSLASH_ESCAPES do change it, so a reader that must
	// agree with the engine cannot rely on BackslashEscapes there.
	FixedEscapes bool
	// BacktickNames: `...` quotes a name (SQLite, MySQL, ClickHouse).
	// Elsewhere a backtick is a character the engine refuses.
	BacktickNames bool
	// BracketNames: [...] quotes a name, up to the first ']' (SQLite).
	// Elsewhere '[' opens a subscript or an array.
	BracketNames bool
	// NameEscapes: a backslash escapes the next character in a quoted
	// name too, not only in a string literal (ClickHouse).
	NameEscapes bool
	// EscapeStrings: E'...' is a string literal in which a backslash
	// escapes the next character, whatever BackslashEscapes says
	// (PostgreSQL).
	EscapeStrings bool
	// DollarQuotes: $$...$$ and $tag$...$tag$ are string literals whose
	// text is taken as it is (PostgreSQL's dollar quotes). A tag is a
	// letter or '_' followed by letters, digits and '_'.
	DollarQuotes bool
	// NestedComments: a "/*" inside a block comment opens a nested one,
	// which needs its own "*/" (PostgreSQL, ClickHouse).
	NestedComments bool
	// DashCommentSpace: "--" opens a comment only when a space, a control
	// character or the end of the text follows it; "--1" is two minus
	// signs (MySQL).
	DashCommentSpace bool
	// ReturnEndsComment: a carriage return ends a "--" comment as a
	// newline does (PostgreSQL).
	ReturnEndsComment bool
	// DigitWords: a word may start with digits, so "1x" is one name, not a
	// number and a name (MySQL).
	DigitWords bool
	// ASCIIWords: only ASCII letters, digits, '_' and '$' make a word;
	// a character outside ASCII is not part of one (ClickHouse). The other
	// engines read every character outside ASCII as a letter.
	ASCIIWords bool
}

// Kind is the kind of a stored column.
type Kind int

// The kinds of stored columns.
const (
	Text Kind = iota
	Int
	Float
)

// Column is a column of a table the library creates.
type Column struct {
	Name string
	Kind Kind
}

// ArgError is a value an engine cannot bind.
type ArgError struct {
	// Detail says what was refused: the Go type, or the value that cannot
	// be compared faithfully.
	Detail string
}

func (e *ArgError) Error() string { return "engine: cannot bind: " + e.Detail }

// ErrUnknown is returned by ByName for a name that is no engine.
var ErrUnknown = errors.New("engine: unknown engine")

// The engines. SQLite, PostgreSQL and MySQL can also hold the library's
// own tables (see Store).
var (
	SQLite     Store  = sqlite{}
	PostgreSQL Store  = postgres{}
	MySQL      Store  = mysql{}
	ClickHouse Engine = clickhouse{}
)

// All lists every engine, for tests that sweep them.
func All() []Engine { return []Engine{SQLite, PostgreSQL, MySQL, ClickHouse} }

// ByName returns the engine of a configuration name, matched without
// regard to case: "sqlite" (or "sqlite3"), "postgresql" (or "postgres",
// "pgx"), "mysql" (or "mariadb"), "clickhouse". Other names wrap
// ErrUnknown.
func ByName(name string) (Engine, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "sqlite", "sqlite3":
		return SQLite, nil
	case "postgresql", "postgres", "pgx":
		return PostgreSQL, nil
	case "mysql", "mariadb":
		return MySQL, nil
	case "clickhouse":
		return ClickHouse, nil
	}
	return nil, fmt.Errorf("%w %q (want sqlite, postgresql, mysql or clickhouse)", ErrUnknown, name)
}

// tableBytesLiteral is table as a string literal, for TableBytes.
func tableBytesLiteral(table string) string { return "'" + strings.ReplaceAll(table, "'", "''") + "'" }

// PlanForm is the form of the plan an engine answers to its Explain
// prefix, which a reader of plans reads.
type PlanForm string

// The forms of plans (Engine.Explain).
const (
	// PlanNone: the library does not read the engine's plans.
	PlanNone PlanForm = ""
	// PlanSQLite: SQLite's EXPLAIN QUERY PLAN rows (id, parent, notused,
	// detail), SCAN or SEARCH per table.
	PlanSQLite PlanForm = "sqlite"
	// PlanPostgresJSON: PostgreSQL's EXPLAIN (FORMAT JSON), one row whose
	// value is the plan tree.
	PlanPostgresJSON PlanForm = "postgresql-json"
	// PlanMySQL: MySQL's and MariaDB's EXPLAIN rows, one per table with
	// its access type.
	PlanMySQL PlanForm = "mysql"
)

// hexLiteral reports whether the number literal text is hexadecimal or
// binary (0x1F, 0b101), an integer.
func hexLiteral(text string) bool {
	return len(text) > 1 && text[0] == '0' && strings.ContainsAny(text[1:2], "xXbB")
}

// fractional reports whether the number literal text has a fraction or
// an exponent.
func fractional(text string) bool {
	return !hexLiteral(text) && strings.ContainsAny(text, ".eE")
}

// isNonFinite reports whether text is ClickHouse's inf or nan.
func isNonFinite(text string) bool {
	t := strings.ToLower(strings.TrimLeft(text, "+-"))
	return t == "inf" || t == "nan" || t == "infinity"
}
