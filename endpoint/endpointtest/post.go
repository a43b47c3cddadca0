package endpointtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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

// Fetch sends a request to url, with body ("" for none) and the headers of
// header (one whose value is "" is not sent), and returns the status and
// the answer's body read whole; a failure to send or read fails t. It is
// for a server of the test's own (Env.Server, an httptest.Server), where
// Env.Do's key and project do not fit.
func Fetch(t testing.TB, method, url, body string, header map[string]string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	require.NoError(t, err)
	for name, value := range header {
		if value != "" {
			req.Header.Set(name, value)
		}
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err, "%s %s: reading the answer", method, url)
	return res.StatusCode, raw
}
