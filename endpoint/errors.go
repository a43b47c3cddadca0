package endpoint

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/apierror"
)

// Sentinel errors, compared with errors.Is. Every *Error wraps one of them.
var (
	ErrInvalid      = apierror.ErrInvalid
	ErrNotFound     = driver.ErrNotFound
	ErrConflict     = driver.ErrConflict
	ErrUnauthorized = errors.New("endpoint: unauthorized")
	ErrForbidden    = errors.New("endpoint: forbidden")
	// ErrExecution is an executor failure; its detail leaks no internals.
	ErrExecution = errors.New("endpoint: query execution failed")
	// ErrTimeout is an executor that ran out of time.
	ErrTimeout = errors.New("endpoint: query timed out")
)

// Stable error codes, the Code of an *Error. Clients may switch on them; the
// Detail text is for humans and may be reworded.
const (
	CodeInvalidInput            = "invalid_input"
	CodeNotFound                = "not_found"
	CodeConflict                = "conflict"
	CodeUnauthorized            = "unauthorized"
	CodeForbidden               = "forbidden"
	CodeRequiredVariableMissing = "required_variable_missing"
	CodeUnknownVariable         = "unknown_variable"
	CodeInvalidVariableValue    = "invalid_variable_value"
	CodeUndefinedVariable       = "undefined_variable"
	CodeInvalidVariableID       = "invalid_variable_id"
	CodeVariableNotFound        = "variable_not_found"
	CodeVariableInUse           = "variable_in_use"
	CodeUnsupportedQuery        = "unsupported_query"
	CodeCannotMaterialize       = "cannot_materialize"
	CodeMaterializationFailed   = "materialization_failed"
	CodeExecutionFailed         = "execution_failed"
	CodeTimeout                 = "timeout"
	// CodeResultTooLarge is a run whose rows weigh more than
	// Config.MaxResultBytes.
	CodeResultTooLarge = "result_too_large"
	// CodeQueryTooLarge is a query refused at save for its length
	// (Config.MaxQueryLength) or its placeholders (Config.MaxPlaceholders).
	CodeQueryTooLarge = "query_too_large"
)

// The limits an *Error names in its Limit field, each a Config setting.
// LimitValue is the setting in the limit's unit: milliseconds for times,
// rows, bytes or placeholders otherwise.
const (
	LimitRunTimeout          = "run_timeout"
	LimitMaxLimit            = "max_limit"
	LimitMaxResultBytes      = "max_result_bytes"
	LimitMaxQueryLength      = "max_query_length"
	LimitMaxPlaceholders     = "max_placeholders"
	LimitRefreshTimeout      = "refresh_timeout"
	LimitMaxMaterializedRows = "max_materialized_rows"
	// LimitMaxBreakdownLimit is Config.MaxBreakdownLimit, in breakdown
	// values.
	LimitMaxBreakdownLimit = "max_breakdown_limit"
)

// Error is the one error type callers of the Service see, *Error in an
// errors.As. Status is the HTTP status it maps to (see StatusOf), Code a
// stable machine-readable code (the Code constants), Detail the message for
// humans, and Attr the request field it concerns, if any. Where they apply,
// Variable, Type and Value name the variable concerned, its type and the
// value received (cut to 200 characters), Table a table a query may not
// read, and Limit and LimitValue the limit that was hit (the Limit
// constants) and its setting. Err is the sentinel (ErrInvalid, ErrNotFound,
// ...) or a cause wrapping it, for errors.Is.
//
// The decoding of a Query or a Seconds from JSON returns it too.
type Error = apierror.Error

// statusOf maps sentinels to HTTP statuses.
var statusOf = map[error]int{
	ErrInvalid:      http.StatusBadRequest,
	ErrNotFound:     http.StatusNotFound,
	ErrConflict:     http.StatusConflict,
	ErrUnauthorized: http.StatusUnauthorized,
	ErrForbidden:    http.StatusForbidden,
	ErrExecution:    http.StatusBadGateway,
	ErrTimeout:      http.StatusGatewayTimeout,
}

// StatusOf is the one place an error's HTTP status is decided: the Status
// an *Error carries, else that of the sentinel it wraps; 500 for anything
// else, which the Service itself never returns.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) && e.Status != 0 {
		return e.Status
	}
	for sentinel, status := range statusOf {
		if errors.Is(err, sentinel) {
			return status
		}
	}
	return http.StatusInternalServerError
}

// NewError returns an *Error wrapping sentinel, one of the package's Err
// values, with the HTTP status that sentinel maps to (see StatusOf).
func NewError(sentinel error, code, attr, detail string) *Error {
	return &Error{Status: StatusOf(sentinel), Code: code, Detail: detail, Attr: attr, Err: sentinel}
}

// maxEcho is the most characters of a client's input an error detail
// repeats; longer input is cut with "...".
const maxEcho = apierror.MaxEcho

// cut shortens a client's input for an error detail (see maxEcho), on a
// character boundary.
func cut(s string) string { return apierror.Cut(s) }

// limited marks e as the refusal of limit, whose setting is value.
func limited(e *Error, limit string, value int64) *Error {
	e.Limit, e.LimitValue = limit, value
	return e
}

// invalidf is the common 400.
func invalidf(code, attr, format string, args ...any) *Error {
	return NewError(ErrInvalid, code, attr, fmt.Sprintf(format, args...))
}

// notFoundf is the common 404.
func notFoundf(format string, args ...any) *Error {
	return NewError(ErrNotFound, CodeNotFound, "", fmt.Sprintf(format, args...))
}

// conflictf is the common 409.
func conflictf(code, attr, format string, args ...any) *Error {
	return NewError(ErrConflict, code, attr, fmt.Sprintf(format, args...))
}

// required is the answer to a missing mandatory field, worded as the
// reference system words it.
func required(attr string) *Error {
	return NewError(ErrInvalid, CodeInvalidInput, attr, "This field is required.")
}

// withCause keeps cause reachable through errors.Is and errors.As (a host may
// log it) while callers see only e's detail.
func withCause(e *Error, cause error) *Error {
	if cause != nil {
		e.Err = fmt.Errorf("%w: %w", e.Err, cause)
	}
	return e
}

// storeError turns an error of a Store into an *Error. Stores return
// sentinels (possibly wrapped); anything else is a failing backend, which
// callers see as a generic 502 so that no internals leak.
func storeError(err error, notFound func() *Error) error {
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e
	case errors.Is(err, ErrNotFound) && notFound != nil:
		return notFound()
	case errors.Is(err, context.DeadlineExceeded):
		return withCause(NewError(ErrTimeout, CodeTimeout, "", "storage timed out"), err)
	default:
		return withCause(NewError(ErrExecution, CodeExecutionFailed, "", "storage failed"), err)
	}
}
