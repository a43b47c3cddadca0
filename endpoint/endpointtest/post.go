package endpointtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/variable"
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

// Serve builds a Service of cfg (stores in memory where cfg names none),
// saves on it the SQL endpoint name of project 1 whose query is sql, and
// returns the HTTP API over it with key allowed on project 1, no rate
// limit and no bound on an answer's bytes (opts may add to that), and the
// Service, closed when tb ends: what a benchmark or a load test of the
// runs of one endpoint sends its requests to.
func Serve(tb testing.TB, cfg endpoint.Config, name, sql, key string, opts ...httpapi.Option) (http.Handler, *endpoint.Service) {
	tb.Helper()
	if cfg.Endpoints == nil {
		cfg.Endpoints = memstore.New()
	}
	if cfg.Variables == nil {
		cfg.Variables = variable.NewMemoryStore()
	}
	svc, err := endpoint.New(cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = svc.Close(context.Background()) })
	_, err = svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: name,
		Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: sql}})
	require.NoError(tb, err)
	keys := httpapi.NewKeyring()
	require.NoError(tb, keys.Add(key, "1"))
	return httpapi.New(svc, keys, append([]httpapi.Option{httpapi.WithLimiter(nil), httpapi.WithMaxAnswerBytes(-1)}, opts...)...), svc
}

// SendSlice sends m requests with do, numbered first+1 to first+m, from c
// clients at once, each client sending body(n) of the next number until
// none is left, and returns each request's time and the slice's: the load
// loop of a benchmark that compares two handlers slice by slice. An error
// of do stops its client; the first is returned.
func SendSlice(c int, do func(body []byte) error, first, m int64, body func(n int64) []byte) ([]time.Duration, time.Duration, error) {
	times := make([][]time.Duration, c)
	errs := make([]error, c)
	var next atomic.Int64
	next.Store(first)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := next.Add(1); n <= first+m; n = next.Add(1) {
				req := body(n)
				t := time.Now()
				if err := do(req); err != nil {
					errs[i] = err
					return
				}
				times[i] = append(times[i], time.Since(t))
				if c > 1 {
					runtime.Gosched() // in process: a connection's goroutine waits on the network here
				}
			}
		}()
	}
	wg.Wait()
	return slices.Concat(times...), time.Since(start), errors.Join(errs...)
}
