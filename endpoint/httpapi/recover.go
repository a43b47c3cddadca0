package httpapi

import (
	"fmt"
	"net/http"
	"runtime/debug"
)

// responseWriter remembers whether the status line went out, so that a panic
// after it is not answered with a second one, and the request body as
// decode read it, so that an error detail can be checked for echoes of it.
type responseWriter struct {
	http.ResponseWriter
	wrote bool
	body  []byte
	// requestID is the X-Request-Id header's value, allocated with the
	// writer rather than on its own.
	requestID [1]string
	// jsonHeaders are the values of a JSON answer's Content-Type and
	// X-Content-Type-Options (setJSONHeaders), allocated with the writer
	// too.
	jsonHeaders [2]string
	// newID holds the text of a request id made for the request
	// (requestIDOf), which requestID[0] then is.
	newID [requestIDLen]byte
}

func (w *responseWriter) WriteHeader(status int) {
	w.wrote = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// recoverPanic turns a panic in a route into a logged 500, so that one bad
// request never takes the connection (or, without net/http's own recovery,
// the process) down with it. http.ErrAbortHandler is net/http's deliberate
// abort and goes on up.
func (h *handler) recoverPanic(w *responseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler { //nolint:errorlint // the sentinel is panicked as is
		panic(v)
	}
	err := fmt.Errorf("httpapi: panic: %v", v)
	stack := string(debug.Stack())
	if w.wrote {
		// Too late for a status: cut the response so the client sees it
		// is incomplete rather than a truncated success.
		h.cfg.logger.ErrorContext(r.Context(), "httpapi: panic after the response began",
			"cause", err, "request_id", RequestID(r.Context()), "method", r.Method, "path", r.URL.Path, "stack", stack)
		panic(http.ErrAbortHandler)
	}
	h.failLogging(w, r, err, "stack", stack)
}
