package placeholder

import (
	"errors"
	"fmt"
)

// ErrSyntax is wrapped by every *SyntaxError, for errors.Is.
var ErrSyntax = errors.New("placeholder: syntax error")

// Sentinels wrapped by *VariableError, for errors.Is.
var (
	// ErrMissingValue: the values given to Render lack a variable the
	// template uses.
	ErrMissingValue = errors.New("placeholder: missing value")
	// ErrUnsupportedValue: a value's Go type cannot be bound.
	ErrUnsupportedValue = errors.New("placeholder: unsupported value type")
	// ErrEmptyList: a multi-valued list has no element; "IN ()" is not SQL.
	ErrEmptyList = errors.New("placeholder: empty list")
	// ErrListPosition: a multi-valued list sits where only one value fits.
	ErrListPosition = errors.New("placeholder: list value outside IN")
	// ErrNoEngine: a render or a Builder was given a nil engine.
	ErrNoEngine = errors.New("placeholder: no engine")
)

// SyntaxError reports a malformed placeholder, or a quote or comment left
// open, at a position a user can find in the query editor.
type SyntaxError struct {
	// Line and Column are 1-based; Column counts runes, not bytes.
	Line, Column int
	// Offset is the byte offset in the SQL text.
	Offset int
	// Msg says what was found and what was expected.
	Msg string
}

// Error returns "placeholder: line L, column C: msg".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("placeholder: line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Unwrap returns ErrSyntax.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// VariableError reports a problem with one variable's value or position,
// found when rendering or when checking lists at definition time.
type VariableError struct {
	// Name is the variable's code name.
	Name string
	// Line and Column locate the placeholder concerned (1-based, runes).
	Line, Column int
	// Err is one of the package's sentinels (ErrMissingValue, ...).
	Err error
	// Detail adds what was received, when it helps; may be empty.
	Detail string
}

// Error names the variable, where it is used and what is wrong.
func (e *VariableError) Error() string {
	return fmt.Sprintf("placeholder: variable %q at line %d, column %d: %s", e.Name, e.Line, e.Column, e.Reason())
}

// Unwrap returns the sentinel.
func (e *VariableError) Unwrap() error { return e.Err }

// reasons word the sentinels for a user, without the package prefix.
var reasons = map[error]string{
	ErrMissingValue:     "missing value",
	ErrUnsupportedValue: "unsupported value type",
	ErrEmptyList:        "empty list",
	ErrListPosition:     "list value outside IN",
}

// Reason says what is wrong, without the package prefix or the position:
// the sentinel's wording and the Detail.
func (e *VariableError) Reason() string {
	msg, ok := reasons[e.Err]
	if !ok && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}
