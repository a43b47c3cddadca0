package access

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrRefused is what every *Error wraps: errors.Is(err, ErrRefused) tells a
// query the analyzer refused (a 400 for the query's author) from a fault of
// the host's configuration, which is a plain error.
var ErrRefused = errors.New("access: query refused")

// Reason says why a query was refused. The values are stable, so a caller
// may switch on them or show them as codes.
type Reason string

const (
	// ReasonTable: the query reads a table the rules do not list.
	ReasonTable Reason = "table_not_allowed"
	// ReasonColumn: the query reads a column of a table whose rules list
	// the columns that can be read, and this one is not listed.
	ReasonColumn Reason = "column_not_allowed"
	// ReasonProtected: the query reads one of the library's own tables
	// (prefix endpointkit_), which no rules can allow.
	ReasonProtected Reason = "protected_table"
	// ReasonCatalog: the query reads a system catalog (sqlite_master,
	// pg_catalog.*, information_schema.*, system.*, ...), which no rules
	// can allow.
	ReasonCatalog Reason = "system_catalog"
	// ReasonFunction: the query calls a function that is not allowed.
	ReasonFunction Reason = "function_not_allowed"
	// ReasonTableFunction: the query reads from a table function
	// (read_csv, file(), url(), pragma_table_info(), ...) that is not
	// allowed.
	ReasonTableFunction Reason = "table_function_not_allowed"
	// ReasonStatement: the text is not exactly one read-only SELECT: a
	// second statement, another kind of statement, SELECT ... INTO, FOR
	// UPDATE, a data-modifying CTE, engine settings.
	ReasonStatement Reason = "not_a_single_select"
	// ReasonAmbiguous: engines could read the text differently (a
	// backslash before a quote, a MySQL version comment, nested comments,
	// '#', '$', characters outside ASCII outside quotes, a name that could
	// be a CTE or a table), so no single reading can be checked.
	ReasonAmbiguous Reason = "ambiguous"
	// ReasonUnsupported: the query cannot be read (package sql/tree's
	// parser does not read it: a syntax no engine runs, unbalanced
	// parentheses, a placeholder where a name belongs), or holds a form
	// engines read as a table where a value was meant (x IN t). It refuses
	// rather than guess.
	ReasonUnsupported Reason = "unsupported_syntax"
)

// Error is a query refused by Check or Confine. It names what was refused
// and where. It wraps ErrRefused.
type Error struct {
	Reason Reason
	// Table is the table as written, its parts joined by '.' without
	// quotes, when a table was refused.
	Table string
	// Function is the function's name as written, when a function or a
	// table function was refused.
	Function string
	// Offset is the byte offset in the query of the token refused; Line
	// and Column locate it (1-based, Column counting runes).
	Offset, Line, Column int
	// Detail says what was wrong in words, without the position.
	Detail string
}

// Error returns the detail followed by the position.
func (e *Error) Error() string {
	return fmt.Sprintf("access: %s (line %d, column %d)", e.Detail, e.Line, e.Column)
}

// Unwrap returns ErrRefused.
func (e *Error) Unwrap() error { return ErrRefused }

// maxEcho is how many bytes of a name from the query an error repeats: a
// name can be a quoted identifier of any length, and an answer should not
// echo the client's input back at length.
const maxEcho = 64

// echo returns s cut to maxEcho bytes on a rune boundary, marked when cut.
func echo(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// errorAt builds an *Error located at byte offset off of src.
func errorAt(src string, off int, reason Reason, format string, args ...any) *Error {
	line, col := position(src, off)
	return &Error{Reason: reason, Offset: off, Line: line, Column: col, Detail: fmt.Sprintf(format, args...)}
}

// position returns the 1-based line and rune column of byte offset off.
func position(src string, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	before := src[:off]
	line = 1 + strings.Count(before, "\n")
	if nl := strings.LastIndexByte(before, '\n'); nl >= 0 {
		before = before[nl+1:]
	}
	return line, 1 + utf8.RuneCountInString(before)
}
