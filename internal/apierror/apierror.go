// Package apierror holds the error type of package endpoint, Error, and
// the constructors its JSON decoding of a Query or a Seconds shares with
// the Service's checks, so that an API answers that input's 400 as it
// answers every other. Hosts name it as endpoint.Error and read its
// documentation there.
package apierror

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// The sentinels of a refused or failed request; package endpoint exports
// them under the same names (endpoint.ErrInvalid and the others), and
// package apikey answers with them too.
var (
	ErrInvalid      = errors.New("endpoint: invalid request")
	ErrUnauthorized = errors.New("endpoint: unauthorized")
	ErrForbidden    = errors.New("endpoint: forbidden")
	// ErrExecution is an executor failure; its detail leaks no internals.
	ErrExecution = errors.New("endpoint: query execution failed")
	// ErrTimeout is an executor that ran out of time.
	ErrTimeout = errors.New("endpoint: query timed out")
)

// The codes the decoding of a Query or a Seconds gives; package endpoint exports
// them under the same names, with the same values.
const (
	CodeInvalidInput     = "invalid_input"
	CodeUnsupportedQuery = "unsupported_query"
)

// The codes package apikey answers with besides CodeInvalidInput; package
// endpoint exports them under the same names, with the same values.
const (
	CodeNotFound        = "not_found"
	CodeUnauthorized    = "unauthorized"
	CodeForbidden       = "forbidden"
	CodeExecutionFailed = "execution_failed"
	CodeTimeout         = "timeout"
	// CodeThrottled is the Code of a run refused by a budget (429).
	CodeThrottled = "throttled"
	// CodeBudgetUnavailable is the Code of a run refused because its
	// budget could not be counted: the counter store failed (503).
	CodeBudgetUnavailable = "budget_unavailable"
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

// WithCause keeps cause reachable through errors.Is and errors.As (a host
// may log it) while callers see only e's detail.
func WithCause(e *Error, cause error) *Error {
	if cause != nil {
		e.Err = fmt.Errorf("%w: %w", e.Err, cause)
	}
	return e
}

// StoreError turns an error of a store into an *Error. Stores return
// sentinels (possibly wrapped); anything else is a failing backend, which
// callers see as a generic 502 so that no internals leak. notFound, when
// not nil, makes the 404 of a driver.ErrNotFound.
func StoreError(err error, notFound func() *Error) error {
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e
	case errors.Is(err, driver.ErrNotFound) && notFound != nil:
		return notFound()
	case errors.Is(err, context.DeadlineExceeded):
		return WithCause(&Error{Status: http.StatusGatewayTimeout, Code: CodeTimeout, Detail: "storage timed out", Err: ErrTimeout}, err)
	default:
		return WithCause(&Error{Status: http.StatusBadGateway, Code: CodeExecutionFailed, Detail: "storage failed", Err: ErrExecution}, err)
	}
}

// ValidName reports whether name follows the rule of an endpoint's name,
// ^[a-zA-Z][a-zA-Z0-9_-]{0,127}$: it appears in URL paths, so it is kept
// to ASCII letters, digits, '-' and '_', starting with a letter.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}
