package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
)

// authFunc adapts a function to Authenticator.
type authFunc func(ctx context.Context, key, project string) error

func (f authFunc) Authorize(ctx context.Context, key, project string) error {
	return f(ctx, key, project)
}

// serveWith answers one GET of the endpoint list through a handler whose
// Authenticator is auth, and returns the answer and what was logged.
func serveWith(t *testing.T, auth httpapi.Authenticator) (response, string) {
	t.Helper()
	logs := &bytes.Buffer{}
	h := httpapi.New(newService(t, newExecutor(openEvents(t, 10))), auth,
		httpapi.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	req := httptest.NewRequest("GET", "/api/projects/1/endpoints/", nil)
	req.Header.Set("Authorization", "Bearer k")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return decodeResponse(t, rec.Code, rec.Header(), rec.Body.Bytes()), logs.String()
}

func TestPanicIsA500(t *testing.T) {
	r, logs := serveWith(t, authFunc(func(context.Context, string, string) error {
		panic("authenticator bug: secret-state")
	}))
	require.Equal(t, http.StatusInternalServerError, r.Status)
	checkErrorBody(t, r)
	assert.Equal(t, "server_error", r.Body["code"])
	assert.NotContains(t, string(r.Raw), "secret-state", "panic values are logged, not shown")
	assert.Contains(t, logs, "secret-state")
}

func TestAbortHandlerPanicPassesThrough(t *testing.T) {
	// net/http's own abort must still abort, not become a 500 body.
	assert.PanicsWithValue(t, http.ErrAbortHandler, func() {
		serveWith(t, authFunc(func(context.Context, string, string) error { panic(http.ErrAbortHandler) }))
	})
}

func TestInternalErrorIsGeneric(t *testing.T) {
	r, logs := serveWith(t, authFunc(func(context.Context, string, string) error {
		return errors.New("key database unreachable at 10.0.0.7")
	}))
	require.Equal(t, http.StatusInternalServerError, r.Status)
	checkErrorBody(t, r)
	assert.Equal(t, "Internal server error.", r.detail())
	assert.NotContains(t, string(r.Raw), "10.0.0.7")
	assert.Contains(t, logs, "10.0.0.7")
}

func TestAuthenticatorErrors(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"wrapped unauthorized", fmt.Errorf("revoked key k: %w", endpoint.ErrUnauthorized), 401, "unauthorized"},
		{"wrapped forbidden", fmt.Errorf("no: %w", endpoint.ErrForbidden), 403, "forbidden"},
		{"unknown project", fmt.Errorf("no project: %w", endpoint.ErrNotFound), 404, "not_found"},
		{"own *Error", endpoint.NewError(endpoint.ErrForbidden, "suspended", "", "This key is suspended."), 403, "suspended"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, logs := serveWith(t, authFunc(func(context.Context, string, string) error { return c.err }))
			require.Equal(t, c.status, r.Status)
			checkErrorBody(t, r)
			assert.Equal(t, c.code, r.Body["code"])
			assert.NotContains(t, r.detail(), "revoked key", "a sentinel-wrapping message is not shown")
			assert.Empty(t, logs)
			if c.status == 401 {
				assert.Contains(t, r.Header.Get("WWW-Authenticate"), `error="invalid_token"`)
			}
		})
	}
}

func TestNewPanicsOnNil(t *testing.T) {
	svc := newService(t, newExecutor(openEvents(t, 1)))
	assert.Panics(t, func() { httpapi.New(nil, httpapi.NewKeyring()) })
	assert.Panics(t, func() { httpapi.New(svc, nil) })
}
