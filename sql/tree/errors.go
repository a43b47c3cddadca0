package tree

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrSyntax is what every *Error of a query the parser cannot read wraps.
var ErrSyntax = errors.New("sql: syntax error")

// ErrTooDeep is what an *Error wraps when the query nests parentheses,
// subqueries or expressions deeper than MaxDepth.
var ErrTooDeep = errors.New("sql: the query is nested too deeply")

// ErrUnscoped is what an *Error wraps when a printer is asked to print a
// reference to a scoped table without the tenant's scope.
var ErrUnscoped = errors.New("sql: a scoped table printed without its scope")

// MaxDepth bounds how deeply a query may nest parentheses, subqueries and
// operators, so that a hostile query cannot exhaust the stack.
const MaxDepth = 200

// Error is a query the parser could not read, or a tree the printer
// could not print: what was wrong, and where.
type Error struct {
	// Offset is the byte offset in the query; Line and Column locate it
	// (1-based, Column counting characters).
	Offset, Line, Column int
	// Detail says what was wrong, in words, without the position.
	Detail string
	// Err is ErrSyntax, ErrTooDeep, ErrUnscoped or ErrUnprintable.
	Err error
}

// Error returns the detail followed by the position.
func (e *Error) Error() string {
	return fmt.Sprintf("sql: %s (line %d, column %d)", e.Detail, e.Line, e.Column)
}

// Unwrap returns ErrSyntax, ErrTooDeep, ErrUnscoped or ErrUnprintable.
func (e *Error) Unwrap() error { return e.Err }

func errorAt(src string, off int, kind error, format string, args ...any) *Error {
	line, col := position(src, off)
	return &Error{Offset: off, Line: line, Column: col, Detail: fmt.Sprintf(format, args...), Err: kind}
}

// position returns the 1-based line and character column of byte offset
// off of src.
func position(src string, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	before := src[:off]
	line = 1 + strings.Count(before, "\n")
	if nl := strings.LastIndexByte(before, '\n'); nl >= 0 {
		before = before[nl+1:]
	}
	return line, 1 + utf8.RuneCountInString(before)
}

// where returns "line L, column C" of offset off, for messages that point
// at a second place.
func where(src string, off int) string {
	l, c := position(src, off)
	return fmt.Sprintf("line %d, column %d", l, c)
}
