package httpapi

import (
	"context"
	"crypto/rand"
	"net/http"

	"github.com/endpointkit/endpointkit/endpoint"
)

// RequestIDHeader is the header that carries a request's id, in the request
// (a client's or a proxy's own id, kept when usable) and in every response.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLen is the longest client-supplied request id kept; a longer
// one is replaced, so that an id cannot carry a payload into logs.
const maxRequestIDLen = 128

// RequestID returns the id of the request whose context ctx is (or derives
// from), as sent in the X-Request-Id response header and logged with every
// 5xx; "" outside the handler. An Executor or Store may log it to tie its
// own records to the request.
func RequestID(ctx context.Context) string {
	return endpoint.RequestID(ctx)
}

// requestID returns the id for r: the client's X-Request-Id when there is
// exactly one, of 1 to maxRequestIDLen printable ASCII characters without
// spaces; otherwise a new random one (128 bits, base32).
func requestID(r *http.Request) string {
	if v := r.Header.Values(RequestIDHeader); len(v) == 1 && usableRequestID(v[0]) {
		return v[0]
	}
	return rand.Text()
}

func usableRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := range len(id) {
		if c := id[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}
