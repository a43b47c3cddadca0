package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint"
)

// Authenticator decides whether an API key may use a project.
//
// Guidelines for implementers: Authorize is called once per request, before
// the body is read, with the key taken from "Authorization: Bearer <key>"
// and the project_id of the path. Return nil when the key may use the
// project; an error wrapping endpoint.ErrUnauthorized when the key is not
// known (answered 401); one wrapping endpoint.ErrForbidden when the key is
// known but not for this project (403); one wrapping endpoint.ErrNotFound
// when the project does not exist (404). An *endpoint.Error is shown to the
// client as it is; the detail of any other error is never shown, and one
// that wraps none of these sentinels is logged and answered with a generic
// 500. Compare keys in constant time (crypto/subtle) and keep only their
// hashes at rest. Authorize is called concurrently and must honour ctx if it
// does I/O.
type Authenticator interface {
	Authorize(ctx context.Context, key, project string) error
}

// authorize checks r's API key for project: key and err are what
// bearerKey found in r's header, read once for every credential the route
// takes (an embed token, a stored key, the Authenticator's).
func (h *handler) authorize(w http.ResponseWriter, r *http.Request, key string, err error, project string) error {
	if err != nil {
		if errors.Is(err, errMalformedAuth) {
			w.Header().Set("WWW-Authenticate", invalidToken)
		}
		return err
	}
	err = h.auth.Authorize(r.Context(), key, project)
	if err == nil {
		return nil
	}
	var e *endpoint.Error
	switch {
	case errors.As(err, &e):
		if e.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", invalidToken)
		}
		return e
	case errors.Is(err, endpoint.ErrUnauthorized):
		w.Header().Set("WWW-Authenticate", invalidToken)
		return &endpoint.Error{
			Status: http.StatusUnauthorized,
			Code:   endpoint.CodeUnauthorized,
			Detail: "Invalid API key.",
			Err:    err,
		}
	case errors.Is(err, endpoint.ErrForbidden):
		return &endpoint.Error{
			Status: http.StatusForbidden,
			Code:   endpoint.CodeForbidden,
			Detail: fmt.Sprintf("This API key does not give access to project '%s'.", clip(project, maxEchoRunes)),
			Err:    err,
		}
	case errors.Is(err, endpoint.ErrNotFound):
		return &endpoint.Error{
			Status: http.StatusNotFound,
			Code:   endpoint.CodeNotFound,
			Detail: fmt.Sprintf("Project '%s' not found.", clip(project, maxEchoRunes)),
			Err:    err,
		}
	}
	return err
}

// invalidToken is the challenge of RFC 6750 for a key that was sent but is
// not accepted (a bare challenge means none was sent).
const invalidToken = challenge + `, error="invalid_token"`

// bearerKey returns the key of the one "Authorization: Bearer <key>" header.
func bearerKey(header http.Header) (string, error) {
	values := header.Values("Authorization")
	if len(values) == 0 {
		return "", &endpoint.Error{
			Status: http.StatusUnauthorized,
			Code:   endpoint.CodeUnauthorized,
			Detail: "Authentication credentials were not provided: send 'Authorization: Bearer <API key>'.",
			Err:    endpoint.ErrUnauthorized,
		}
	}
	if len(values) > 1 {
		return "", malformedAuth()
	}
	scheme, key, ok := strings.Cut(strings.TrimSpace(values[0]), " ")
	key = strings.TrimLeft(key, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" || strings.ContainsAny(key, " \t") {
		return "", malformedAuth()
	}
	return key, nil
}

// malformedAuth is the 401 of an Authorization header that is not one
// bearer key.
func malformedAuth() error {
	return &endpoint.Error{
		Status: http.StatusUnauthorized,
		Code:   endpoint.CodeUnauthorized,
		Detail: "Malformed Authorization header: expected 'Bearer <API key>'.",
		Err:    errMalformedAuth,
	}
}

// errMalformedAuth marks a 401 for an Authorization header that is present
// but unusable, which RFC 6750 answers with invalid_token.
var errMalformedAuth = fmt.Errorf("httpapi: malformed Authorization header: %w", endpoint.ErrUnauthorized)
