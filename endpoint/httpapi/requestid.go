package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"net/http"
	"sync/atomic"
	"unsafe"

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

// requestIDOf returns the id for r: the client's X-Request-Id when there
// is exactly one, of 1 to maxRequestIDLen printable ASCII characters
// without spaces; otherwise a new one (newRequestID), whose text is held
// in w's own allocation (w.newID) rather than in one of its own.
func (w *responseWriter) requestIDOf(r *http.Request) string {
	if v := r.Header.Values(RequestIDHeader); len(v) == 1 && usableRequestID(v[0]) {
		return v[0]
	}
	putRequestID(&w.newID)
	return unsafe.String(&w.newID[0], len(w.newID)) // w.newID is not written again
}

// requestIDs are the parts of a new request id: 64 random bits drawn once
// per process, and a count of the ids made since.
var requestIDs struct {
	prefix [8]byte
	n      atomic.Uint64
}

func init() { _, _ = rand.Read(requestIDs.prefix[:]) }

// requestIDEncoding writes an id in the letters of crypto/rand.Text.
var requestIDEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// newRequestID returns an id no other request of this process has had, nor
// (but by a chance of 2^-64 per pair of processes) of another: 128 bits,
// 26 base32 letters, as crypto/rand.Text. An id needs to be unique, not
// secret (a client may choose its own), so it costs a count, not the
// system's random source, per request.
func newRequestID() string {
	var out [requestIDLen]byte
	putRequestID(&out)
	return string(out[:])
}

// requestIDLen is the length of a new request id: 128 bits in base32.
const requestIDLen = 26

// putRequestID writes a new request id (newRequestID) into out.
func putRequestID(out *[requestIDLen]byte) {
	var b [16]byte
	copy(b[:8], requestIDs.prefix[:])
	binary.BigEndian.PutUint64(b[8:], requestIDs.n.Add(1))
	requestIDEncoding.Encode(out[:], b[:])
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
