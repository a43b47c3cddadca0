package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestPanicIsA500(t *testing.T) {
	r, logs := serveWith(t, authFunc(func(context.Context, string, string) error {
		panic("authenticator bug: secret-state")
	}))
	if got, want := r.Status, http.StatusInternalServerError; got != want {
		t.Fatalf("r.Status = %v, want %v", got, want)
	}
	checkErrorBody(t, r)
	if got, want := r.Body["code"], "server_error"; !reflect.DeepEqual(got, want) {
		t.Errorf("r.Body[\"code\"] = %q, want %q", got, want)
	}
	if s, sub := string(r.Raw), "secret-state"; strings.Contains(s, sub) {
		t.Errorf("panic values are logged, not shown: %q contains %q", s, sub)
	}
	if s, sub := logs, "secret-state"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
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
	if got, want := r.Status, http.StatusInternalServerError; got != want {
		t.Fatalf("r.Status = %v, want %v", got, want)
	}
	checkErrorBody(t, r)
	if got, want := r.detail(), "Internal server error (request id "+r.Header.Get("X-Request-Id")+")."; got != want {
		t.Errorf("r.detail() = %q, want %q", got, want)
	}
	if s, sub := string(r.Raw), "10.0.0.7"; strings.Contains(s, sub) {
		t.Errorf("%q contains %q", s, sub)
	}
	if s, sub := logs, "10.0.0.7"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}
