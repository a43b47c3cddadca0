package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint"
)

// Codes of the errors that only the HTTP layer raises. Errors it shares
// with the Service (invalid input, not found, unauthorized, forbidden) use
// the endpoint package's codes.
const (
	CodeParseError           = "parse_error"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeRequestTooLarge      = "request_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeResultNotEncodable   = "result_not_encodable"
	CodeServerError          = "server_error"
	// CodeThrottled is a run refused by a limit of its project (429):
	// endpoint.CodeThrottled, the code of every budget's refusal.
	CodeThrottled = endpoint.CodeThrottled
	// CodeOverloaded is a run refused by the global cap on runs (503).
	CodeOverloaded = "overloaded"
)

// errorBody is the JSON of every failure. Attr is null when the error
// concerns no single field.
type errorBody struct {
	Detail string  `json:"detail"`
	Code   string  `json:"code"`
	Attr   *string `json:"attr"`
}

// fail writes err as the JSON error body. An *endpoint.Error is shown as it
// is; anything else is a fault of the server or its dependencies, answered
// with a generic 500 so that no internal detail leaks. Every detail passes
// guardDetail, which cuts long echoes of the request. Every 5xx is logged
// with its cause and the request id, which its detail names too, so that
// whoever reads the answer can find the cause in the server's log.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	h.failLogging(w, r, err)
}

// failLogging is fail with extra attributes for the log of a 5xx.
func (h *handler) failLogging(w http.ResponseWriter, r *http.Request, err error, extra ...any) {
	var e *endpoint.Error
	cause := err
	if errors.As(err, &e) {
		if e.Err != nil {
			// e.Error() is the detail only; the cause is what it wraps.
			cause = e.Err
			if error(e) != err {
				extra = append(extra, "error", err)
			}
		}
	} else {
		e = &endpoint.Error{
			Status: http.StatusInternalServerError,
			Code:   CodeServerError,
			Detail: "Internal server error.",
		}
	}
	status := endpoint.StatusOf(e)
	var body []byte
	if rw, ok := w.(*responseWriter); ok {
		body = rw.body
	}
	detail := guardDetail(e.Detail, r, body)
	if status >= 500 {
		h.logServerError(r, status, e.Code, detail, cause, extra)
		detail = withRequestID(detail, RequestID(r.Context()))
	}
	if status == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", challenge)
	}
	eb := errorBody{Detail: detail, Code: e.Code}
	if e.Attr != "" {
		attr := clipPath(e.Attr)
		eb.Attr = &attr
	}
	b, mErr := encodeJSON(eb)
	if mErr != nil {
		// Strings always marshal; this cannot happen, but a reply is owed.
		b = []byte(`{"detail":"Internal server error.","code":"server_error","attr":null}`)
		status = http.StatusInternalServerError
	}
	writeBytes(w, status, b)
}

// withRequestID appends the request id to the detail of a 5xx.
func withRequestID(detail, id string) string {
	if id == "" {
		return detail
	}
	if d, ok := strings.CutSuffix(detail, "."); ok {
		return d + " (request id " + id + ")."
	}
	return detail + " (request id " + id + ")"
}

// logServerError logs a 5xx answer. A 503 is an overload the server
// refused on purpose, not a fault: it is a warning, the rest are errors.
func (h *handler) logServerError(r *http.Request, status int, code, detail string, cause error, extra []any) {
	level := slog.LevelError
	if status == http.StatusServiceUnavailable {
		level = slog.LevelWarn
	}
	attrs := append([]any{
		"status", status,
		"code", code,
		"detail", detail,
		"cause", cause,
		"request_id", RequestID(r.Context()),
		"method", r.Method,
		"path", r.URL.Path,
	}, extra...)
	h.cfg.logger.Log(r.Context(), level, "httpapi: server error", attrs...)
}

// reply writes v as JSON with status. A value that cannot be encoded (a
// query that produced +Inf or NaN) is the query's doing, not the server's,
// so it is answered 502 like any other bad answer from the query engine.
func (h *handler) reply(w http.ResponseWriter, r *http.Request, status int, v any) error {
	b, err := encodeJSON(v)
	if err != nil {
		var unsupported *json.UnsupportedValueError
		if errors.As(err, &unsupported) {
			return &endpoint.Error{
				Status: http.StatusBadGateway,
				Code:   CodeResultNotEncodable,
				Detail: fmt.Sprintf("The query result cannot be encoded as JSON: unsupported value %s.", unsupported.Str),
				Err:    endpoint.ErrExecution,
			}
		}
		// A json.Number from the engine that is not a number: encoding/json
		// says so with an error of no type of its own, wrapped when a
		// MarshalJSON (a RunResult's) met it.
		inner := err
		for u := errors.Unwrap(inner); u != nil; u = errors.Unwrap(inner) {
			inner = u
		}
		if msg, ok := strings.CutPrefix(inner.Error(), "json: invalid number literal "); ok {
			return &endpoint.Error{
				Status: http.StatusBadGateway,
				Code:   CodeResultNotEncodable,
				Detail: "The query result cannot be encoded as JSON: invalid number literal " + msg + ".",
				Err:    endpoint.ErrExecution,
			}
		}
		return fmt.Errorf("httpapi: encode response: %w", err)
	}
	writeBytes(w, status, b)
	return nil
}

// encodeJSON is json.Marshal plus a final newline, without HTML escaping:
// SQL is full of < and >, and the API is JSON, never HTML, so they stay
// readable instead of becoming \u003c and \u003e.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeBytes(w http.ResponseWriter, status int, b []byte) {
	setJSONHeaders(w)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// setJSONHeaders sets the headers of a JSON answer on w: its
// Content-Type, and X-Content-Type-Options: nosniff. It is Header.Set
// without its canonicalization (the keys are canonical), and without an
// allocation per value when w is the handler's own writer, which holds
// them: each response's values are its own, so that a host's code that
// changes one in place changes no other response's.
func setJSONHeaders(w http.ResponseWriter) {
	h := w.Header()
	if rw, ok := w.(*responseWriter); ok {
		rw.jsonHeaders = [2]string{"application/json", "nosniff"}
		// Each of capacity 1, so that an append copies.
		h["Content-Type"] = rw.jsonHeaders[0:1:1]
		h["X-Content-Type-Options"] = rw.jsonHeaders[1:2:2]
		return
	}
	h["Content-Type"] = []string{"application/json"}
	h["X-Content-Type-Options"] = []string{"nosniff"}
}

// noContent answers a successful DELETE.
func noContent(w http.ResponseWriter) {
	w.WriteHeader(http.StatusNoContent)
}

// challenge is the WWW-Authenticate of a 401 (RFC 6750).
const challenge = `Bearer realm="endpointkit"`

func errRouteNotFound() error {
	return &endpoint.Error{Status: http.StatusNotFound, Code: endpoint.CodeNotFound, Detail: "Not found.", Err: endpoint.ErrNotFound}
}

func errMethodNotAllowed(method string) error {
	return &endpoint.Error{
		Status: http.StatusMethodNotAllowed,
		Code:   CodeMethodNotAllowed,
		Detail: fmt.Sprintf("Method %q not allowed.", clip(method, maxEchoRunes)),
	}
}
