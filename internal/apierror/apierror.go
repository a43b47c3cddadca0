// Package apierror holds the error type of package endpoint, Error, and
// the constructors its JSON decoding of a Query or a Seconds shares with
// the Service's checks, so that an API answers that input's 400 as it
// answers every other. Hosts name it as endpoint.Error and read its
// documentation there.
package apierror

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ErrInvalid is the sentinel of a refused request; package endpoint
// exports it as endpoint.ErrInvalid.
var ErrInvalid = errors.New("endpoint: invalid request")

// The codes the decoding of a Query or a Seconds gives; package endpoint exports
// them under the same names, with the same values.
const (
	CodeInvalidInput     = "invalid_input"
	CodeUnsupportedQuery = "unsupported_query"
)

// Error is endpoint.Error, the one error type callers of the Service see
// (its documentation is there). Status is the HTTP
// status it maps to, Code a stable machine-readable code, Detail the message
// for humans, and Attr the request field it concerns, if any.
type Error struct {
	Status int
	Code   string
	Detail string
	Attr   string
	// The fields below are set where the error arises, when they apply, so
	// that a caller reads them instead of parsing Detail.
	//
	// Variable is the code_name of the variable concerned, Type its type
	// and Value the value received, cut to MaxEcho characters.
	Variable, Type, Value string
	// Table is the table a query may not read.
	Table string
	// Line and Column locate, in the query's text, what a refusal of
	// the query is about (1-based, Column counting characters); 0 when
	// it is about no one place.
	Line, Column int
	// Limit names the limit that was hit, and LimitValue its setting.
	Limit      string
	LimitValue int64
	// Err is the sentinel (or the cause, wrapping a sentinel).
	Err error
}

// Error returns the detail text.
func (e *Error) Error() string { return e.Detail }

// Unwrap returns the sentinel, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }

// MaxEcho is the most characters of a client's input an error detail
// repeats; longer input is cut with "...".
const MaxEcho = 200

// Cut shortens a client's input for an error detail (see MaxEcho), on a
// character boundary.
func Cut(s string) string {
	n := 0
	for i := range s {
		if n == MaxEcho {
			return s[:i] + "..."
		}
		n++
	}
	return s
}

// Invalidf is a 400 of code about the request field attr.
func Invalidf(code, attr, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Attr: attr, Detail: fmt.Sprintf(format, args...), Err: ErrInvalid}
}

// Required is the answer to a missing mandatory field, worded as the
// reference system words it.
func Required(attr string) *Error {
	return Invalidf(CodeInvalidInput, attr, "This field is required.")
}

// UnsupportedKind refuses a query of a kind other than supported.
func UnsupportedKind(kind string, supported ...string) *Error {
	return Invalidf(CodeUnsupportedQuery, "query", "Unsupported query kind '%s'. Supported kinds: %s.", kind, strings.Join(supported, ", "))
}
