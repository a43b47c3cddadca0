package insight

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, compared with errors.Is.
var (
	// ErrInvalid is wrapped by every *Error: the query is outside the
	// supported subset or malformed.
	ErrInvalid = errors.New("insight: invalid query")
	// ErrUnknownVariable is wrapped by every *UnknownVariablesError.
	ErrUnknownVariable = errors.New("insight: unknown variable")
	// ErrInvalidValue is wrapped by every *ValueError.
	ErrInvalidValue = errors.New("insight: invalid variable value")
)

// Error reports a query that Decode or Compile refused. Field is the JSON
// path of the offending part ("series[1].math"), so that an API can point
// at it; Reason says what is wrong and what would be accepted.
type Error struct {
	Field  string
	Reason string
}

// Error returns a message such as
// `insight: series[0].math: unsupported math "median" (supported: total, dau, sum, avg, min, max)`.
func (e *Error) Error() string {
	if e.Field == "" {
		return "insight: " + e.Reason
	}
	return "insight: " + e.Field + ": " + e.Reason
}

// Unwrap returns ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }

func errorf(field, format string, args ...any) *Error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// UnknownVariablesError reports run-time keys that are not variables of the
// query. Its message is the one the HTTP API answers with.
type UnknownVariablesError struct {
	// Keys are the unknown keys, sorted.
	Keys []string
}

// Error returns `Unknown variable(s): a, b`.
func (e *UnknownVariablesError) Error() string {
	return "Unknown variable(s): " + strings.Join(e.Keys, ", ")
}

// Unwrap returns ErrUnknownVariable.
func (e *UnknownVariablesError) Unwrap() error { return ErrUnknownVariable }

// ValueError reports a run-time value that a variable cannot take.
type ValueError struct {
	Variable string
	Value    any
	Reason   string
}

// Error returns a message such as
// `Variable 'date_to' must be a day from 01 to 28 (2025-02 has 28 days), got "2025-02-30"`.
func (e *ValueError) Error() string {
	return fmt.Sprintf("Variable '%s' %s, got %s", e.Variable, e.Reason, describe(e.Value))
}

// Unwrap returns ErrInvalidValue.
func (e *ValueError) Unwrap() error { return ErrInvalidValue }

// describe prints a value the way a JSON client wrote it.
func describe(v any) string {
	if raw, ok := v.(json.RawMessage); ok {
		return string(raw)
	}
	if b, err := json.Marshal(v); err == nil && len(b) <= 80 {
		return string(b)
	}
	return fmt.Sprintf("a value of Go type %T", v)
}
