package endpointtest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
)

// PostOK sends body as a JSON POST to path through h, in process and
// without a network, with key as its bearer API key, as a client of the
// API sends a run; it answers an error naming the status and body for any
// answer but 200. The request's context is cancelled when h returns, as
// net/http's server cancels every request's, so that a handler that passes
// it to database/sql pays what a cancellable query costs. It is safe to
// call from any goroutine (benchmarks and load send from many).
func PostOK(h http.Handler, path, key string, body []byte) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return fmt.Errorf("status %d: %s", rec.Code, rec.Body)
	}
	return nil
}
