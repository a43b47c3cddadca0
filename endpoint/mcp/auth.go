package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// handler checks every request's credential, then hands it to the SDK's
// stateless streamable transport with the caller in its context.
type handler struct {
	svc       *endpoint.Service
	auth      Authenticator
	cfg       *config
	transport *sdk.StreamableHTTPHandler
}

// challenge is the WWW-Authenticate of a 401, as the HTTP API's.
const (
	challenge    = `Bearer realm="endpointkit"`
	invalidToken = challenge + `, error="invalid_token"`
)

// CodeTokenRefused is the Code of a request whose embed token is refused,
// as httpapi.CodeTokenRefused.
const CodeTokenRefused = "token_refused"

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := h.authenticate(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	h.transport.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
}

// authenticate finds who the request acts as, in the words of the HTTP
// API: 401 for a missing or unknown credential, 403 for one that may not
// use the project, 404 for a project that does not exist.
func (h *handler) authenticate(w http.ResponseWriter, r *http.Request) (caller, error) {
	key, err := bearerKey(r.Header)
	if err != nil {
		if !errors.Is(err, errNoCredential) {
			w.Header().Set("WWW-Authenticate", invalidToken)
		}
		return caller{}, err
	}
	if h.cfg.signer != nil && embed.LooksLikeToken(key) {
		return h.authenticateToken(w, key)
	}
	project := r.URL.Query().Get("project")
	if project == "" {
		project = h.cfg.project
	}
	if project == "" {
		return caller{}, endpoint.NewError(endpoint.ErrInvalid, endpoint.CodeInvalidInput, "project",
			"Name the project the API key acts for: /mcp?project=<project id>.")
	}
	if h.cfg.keys != nil && apikey.LooksLikeKey(key) {
		return h.authenticateKey(w, r, key, project)
	}
	err = h.auth.Authorize(r.Context(), key, project)
	var e *endpoint.Error
	switch {
	case err == nil:
		return caller{project: project}, nil
	case errors.As(err, &e):
		if e.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", invalidToken)
		}
		return caller{}, e
	case errors.Is(err, endpoint.ErrUnauthorized):
		w.Header().Set("WWW-Authenticate", invalidToken)
		return caller{}, &endpoint.Error{Status: http.StatusUnauthorized, Code: endpoint.CodeUnauthorized, Detail: "Invalid API key.", Err: err}
	case errors.Is(err, endpoint.ErrForbidden):
		return caller{}, &endpoint.Error{Status: http.StatusForbidden, Code: endpoint.CodeForbidden,
			Detail: fmt.Sprintf("This API key does not give access to project '%s'.", clip(project)), Err: err}
	case errors.Is(err, endpoint.ErrNotFound):
		return caller{}, &endpoint.Error{Status: http.StatusNotFound, Code: endpoint.CodeNotFound,
			Detail: fmt.Sprintf("Project '%s' not found.", clip(project)), Err: err}
	}
	return caller{}, err
}

// authenticateKey authenticates a stored key for project, in the HTTP
// API's words: 401 for an unknown or revoked key, 403 for a key of
// another project (the one admission's check, endpoint.Service.Admit).
func (h *handler) authenticateKey(w http.ResponseWriter, r *http.Request, secret, project string) (caller, error) {
	k, err := h.cfg.keys.Authenticate(r.Context(), secret)
	if err != nil {
		if errors.Is(err, endpoint.ErrUnauthorized) {
			w.Header().Set("WWW-Authenticate", invalidToken)
		}
		return caller{}, err
	}
	c := caller{project: project, key: &k}
	if _, err := h.svc.Admit(r.Context(), endpoint.Budgets{}, endpoint.Caller{Project: project, Key: &k}, endpoint.Ask{Act: endpoint.ActUse}); err != nil {
		return caller{}, err
	}
	return c, nil
}

// authenticateToken verifies an embed token for the project it claims
// (the signature check covers the claim: a token claiming another project
// fails it, or names a key of that project's only).
func (h *handler) authenticateToken(w http.ResponseWriter, token string) (caller, error) {
	project := claimedProject(token)
	c, err := h.cfg.signer.Verify(token, project)
	if err == nil {
		return caller{project: project, token: c}, nil
	}
	var te *embed.Error
	if !errors.As(err, &te) {
		return caller{}, err
	}
	if te.Forbidden() {
		return caller{}, endpoint.NewError(endpoint.ErrForbidden, CodeTokenRefused, "", "Embed token refused: "+te.Detail+".")
	}
	w.Header().Set("WWW-Authenticate", invalidToken)
	e := endpoint.NewError(endpoint.ErrUnauthorized, CodeTokenRefused, "", "Embed token refused: "+te.Detail+".")
	e.Err = fmt.Errorf("%w: %w", endpoint.ErrUnauthorized, err)
	return caller{}, e
}

// claimedProject reads the project a token claims, before it is verified;
// "" when it cannot be read (Verify then refuses the token).
func claimedProject(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(parts[1]) > embed.MaxTokenBytes {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Project string `json:"project"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	return claims.Project
}

var errNoCredential = errors.New("mcp: no credential")

// bearerKey returns the key of the one "Authorization: Bearer <key>"
// header, refusing others in the HTTP API's words.
func bearerKey(header http.Header) (string, error) {
	values := header.Values("Authorization")
	if len(values) == 0 {
		return "", &endpoint.Error{Status: http.StatusUnauthorized, Code: endpoint.CodeUnauthorized,
			Detail: "Authentication credentials were not provided: send 'Authorization: Bearer <API key>'.",
			Err:    fmt.Errorf("%w: %w", errNoCredential, endpoint.ErrUnauthorized)}
	}
	malformed := &endpoint.Error{Status: http.StatusUnauthorized, Code: endpoint.CodeUnauthorized,
		Detail: "Malformed Authorization header: expected 'Bearer <API key>'.", Err: endpoint.ErrUnauthorized}
	if len(values) > 1 {
		return "", malformed
	}
	scheme, key, ok := strings.Cut(strings.TrimSpace(values[0]), " ")
	key = strings.TrimLeft(key, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" || strings.ContainsAny(key, " \t") {
		return "", malformed
	}
	return key, nil
}

// writeError answers a request refused before the MCP transport, with the
// HTTP API's error body.
func writeError(w http.ResponseWriter, err error) {
	e := asError(err)
	status := endpoint.StatusOf(e)
	if status == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", challenge)
	}
	b, _ := json.Marshal(errorBody(e))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// maxEcho bounds how much of a request a message repeats, as the HTTP
// API's.
const maxEcho = 64

func clip(s string) string {
	r := []rune(s)
	if len(r) <= maxEcho {
		return s
	}
	return string(r[:maxEcho]) + "…"
}
