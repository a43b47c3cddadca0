package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
)

// WithEmbedTokens accepts, besides API keys, embed tokens that signer
// verifies (package embed): a Bearer credential shaped like a JWT is one. A
// token may only run the endpoints it names, of its own project, with its
// fixed variables, and read their OpenAPI documents (its own view, without
// the variables it fixes); every other route answers it 403. Minting tokens over
// HTTP (POST .../embed_tokens/) needs an API key and this option.
func WithEmbedTokens(signer *embed.Signer) Option {
	return func(c *config) { c.signer = signer }
}

// CodeTokenRefused is the Code of a request whose embed token is refused.
const CodeTokenRefused = "token_refused"

// tokenClaims carries a verified token's claims through a run's context.
type tokenClaims struct{}

// claimsOf returns the verified claims of a request authorized by a token.
func claimsOf(ctx context.Context) *embed.Claims {
	c, _ := ctx.Value(tokenClaims{}).(*embed.Claims)
	return c
}

// isToken reports whether the request's bearer credential (key, or err
// from bearerKey) is an embed token this handler checks.
func (h *handler) isToken(key string, err error) bool {
	return h.cfg.signer != nil && err == nil && embed.LooksLikeToken(key)
}

// authorizeToken verifies token for project: 401 when it cannot be
// trusted, 403 when it is genuine but for another project.
func (h *handler) authorizeToken(w http.ResponseWriter, token, project string) (*embed.Claims, error) {
	c, err := h.cfg.signer.Verify(token, project)
	if err == nil {
		return c, nil
	}
	var te *embed.Error
	if !errors.As(err, &te) {
		return nil, err
	}
	if te.Forbidden() {
		return nil, endpoint.NewError(endpoint.ErrForbidden, CodeTokenRefused, "", "Embed token refused: "+te.Detail+".")
	}
	w.Header().Set("WWW-Authenticate", invalidToken)
	e := endpoint.NewError(endpoint.ErrUnauthorized, CodeTokenRefused, "", "Embed token refused: "+te.Detail+".")
	e.Err = fmt.Errorf("%w: %w", endpoint.ErrUnauthorized, err)
	return nil, e
}

// tokenForbidden answers a token on a route that is not a run (or the
// OpenAPI document of a run).
func tokenForbidden() *endpoint.Error {
	return endpoint.NewError(endpoint.ErrForbidden, endpoint.CodeForbidden, "",
		"An embed token may only run the endpoints it names; this needs an API key.")
}

// tokenCounterID is the id a token's rpm is counted under: the SHA-256 of
// its Claims.ID, of a fixed length whatever the token carries.
func tokenCounterID(c *embed.Claims) string {
	sum := sha256.Sum256([]byte(c.ID))
	return hex.EncodeToString(sum[:])
}

// embedTokenBody is the body of POST .../embed_tokens/: the claims' names,
// and expires_in in seconds.
type embedTokenBody struct {
	Endpoints []string       `json:"endpoints"`
	Fixed     map[string]any `json:"fixed"`
	RPM       int            `json:"rpm"`
	ExpiresIn *int64         `json:"expires_in"`
}

// createEmbedToken mints a token for the project (API key only): a stored
// key's token may do no more than the key (endpoint.Service.MintEmbedTokenAs),
// and one asked without rpm gets the key's bound; the answer gives the rpm
// the token carries (0: none of its own).
func (h *handler) createEmbedToken(w http.ResponseWriter, r *http.Request, project string) error {
	if h.cfg.signer == nil {
		return endpoint.NewError(endpoint.ErrNotFound, endpoint.CodeNotFound, "", "Embed tokens are not enabled on this server.")
	}
	var body embedTokenBody
	if err := h.decode(w, r, &body, false); err != nil {
		return err
	}
	lifetime := embed.DefaultLifetime
	if body.ExpiresIn != nil {
		if *body.ExpiresIn <= 0 {
			return endpoint.NewError(endpoint.ErrInvalid, endpoint.CodeInvalidInput, "expires_in", "expires_in must be a positive number of seconds.")
		}
		lifetime = time.Duration(min(*body.ExpiresIn, int64(1<<62)/int64(time.Second))) * time.Second
	}
	token, minted, err := h.svc.MintEmbedTokenAs(r.Context(), h.cfg.signer, project, grantOf(r.Context()),
		embed.Claims{Endpoints: body.Endpoints, Fixed: body.Fixed, RPM: body.RPM}, lifetime)
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusCreated, map[string]any{"token": token, "expires_in": int64(lifetime / time.Second), "rpm": minted.RPM})
}
