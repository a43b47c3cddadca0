package httpapi_test

import (
	"context"
	"errors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"net/http"
	"testing"
)

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
	defer func() {
		if got, want := recover(), any(http.ErrAbortHandler); got != want {
			t.Errorf("recovered %v, want the panic %v", got, want)
		}
	}()
	serveWith(t, authFunc(func(context.Context, string, string) error { panic(http.ErrAbortHandler) }))
}

func TestInternalErrorIsGeneric(t *testing.T) {
	r, logs := serveWith(t, authFunc(func(context.Context, string, string) error {
		return errors.New("key database unreachable at 10.0.0.7")
	}))
	require.Equal(t, http.StatusInternalServerError, r.Status)
	checkErrorBody(t, r)
	got, want := r.detail(), "Internal server error (request id "+r.Header.Get("X-Request-Id")+")."
	assert.Equal(t, want, got, "r.detail()")
	assert.NotContains(t, string(r.Raw), "10.0.0.7")
	assert.Contains(t, logs, "10.0.0.7")
}
