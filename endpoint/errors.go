package endpoint

import (
	"errors"
	"net/http"
)

// Sentinel errors, compared with errors.Is. Every *Error wraps one of them.
var (
	ErrInvalid      = errors.New("endpoint: invalid request")
	ErrNotFound     = errors.New("endpoint: not found")
	ErrConflict     = errors.New("endpoint: conflict")
	ErrUnauthorized = errors.New("endpoint: unauthorized")
	ErrForbidden    = errors.New("endpoint: forbidden")
	// ErrExecution is an executor failure; its detail leaks no internals.
	ErrExecution = errors.New("endpoint: query execution failed")
	// ErrTimeout is an executor that ran out of time.
	ErrTimeout = errors.New("endpoint: query timed out")
)

// Error is the one error type callers of the Service see. Status is the HTTP
// status it maps to, Code a stable machine-readable code, Detail the message
// for humans, and Attr the request field it concerns, if any.
type Error struct {
	Status int
	Code   string
	Detail string
	Attr   string
	// Err is the sentinel (or the cause, wrapping a sentinel).
	Err error
}

// Error returns the detail text.
func (e *Error) Error() string { return e.Detail }

// Unwrap returns the sentinel, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }

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
