package endpoint

import (
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
	ErrUnauthorized = apierror.ErrUnauthorized
	ErrForbidden    = apierror.ErrForbidden
	// ErrExecution is an executor failure; its detail leaks no internals.
	ErrExecution = apierror.ErrExecution
	// ErrTimeout is an executor that ran out of time.
	ErrTimeout = apierror.ErrTimeout
)

// Stable error codes, the Code of an *Error. Clients may switch on them; the
// Detail text is for humans and may be reworded.
const (
	CodeInvalidInput            = apierror.CodeInvalidInput
	CodeNotFound                = apierror.CodeNotFound
	CodeConflict                = "conflict"
	CodeUnauthorized            = apierror.CodeUnauthorized
	CodeForbidden               = apierror.CodeForbidden
	CodeRequiredVariableMissing = "required_variable_missing"
	CodeUnknownVariable         = "unknown_variable"
	CodeInvalidVariableValue    = "invalid_variable_value"
	CodeUndefinedVariable       = "undefined_variable"
	CodeInvalidVariableID       = "invalid_variable_id"
	CodeVariableNotFound        = "variable_not_found"
	CodeVariableInUse           = "variable_in_use"
	CodeUnsupportedQuery        = apierror.CodeUnsupportedQuery
	CodeCannotMaterialize       = "cannot_materialize"
	CodeMaterializationFailed   = "materialization_failed"
	CodeExecutionFailed         = apierror.CodeExecutionFailed
	CodeTimeout                 = apierror.CodeTimeout
	// CodeResultTooLarge is a run whose rows weigh more than
	// Config.MaxResultBytes.
	CodeResultTooLarge = "result_too_large"
	// CodeQueryTooLarge is a query refused at save for its length
	// (Config.MaxQueryLength) or its placeholders (Config.MaxPlaceholders).
	CodeQueryTooLarge = "query_too_large"
	// CodeThrottled is the Code of a run refused by a budget (429): an
	// API key's, an embed token's or the project's.
	CodeThrottled = apierror.CodeThrottled
	// CodeBudgetUnavailable is the Code of a run refused because its
	// budget could not be counted: the counter store failed (503).
	CodeBudgetUnavailable = apierror.CodeBudgetUnavailable
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
func withCause(e *Error, cause error) *Error { return apierror.WithCause(e, cause) }

// storeError turns an error of a Store into an *Error. Stores return
// sentinels (possibly wrapped); anything else is a failing backend, which
// callers see as a generic 502 so that no internals leak.
func storeError(err error, notFound func() *Error) error { return apierror.StoreError(err, notFound) }
