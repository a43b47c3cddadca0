// Package embed mints and checks signed embed tokens: JWTs (HS256) that a
// host's backend signs with a per-project secret and hands to its own
// customer, whose browser may then run the endpoints the token names, with
// the variables the token fixes.
//
// The claims, for a host that mints tokens with its own JWT library:
//
//	{
//	  "project":   "1",                     // the project id, as in the API path
//	  "endpoints": ["daily_revenue"],         // the endpoint names it may run
//	  "fixed":     {"customer_id": "acme"},   // code_name -> value the caller cannot change
//	  "rpm":       60,                        // optional: runs per minute for this token
//	  "exp": 1767225600, "iat": 1767222000    // required exp; lifetime at most Signer.MaxLifetime
//	}
//
// signed HS256 with the project's secret, whose key id is the header's
// "kid". Several secrets per project (each with its kid) let a host rotate
// a secret without breaking the tokens already handed out.
package embed

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Defaults of a Signer.
const (
	// DefaultMaxLifetime is the longest a token may live (exp - iat).
	DefaultMaxLifetime = 24 * time.Hour
	// DefaultLifetime is the lifetime of a token minted without one.
	DefaultLifetime = time.Hour
	// Leeway is the clock skew allowed between the minting host and the
	// checking server.
	Leeway = 30 * time.Second
	// MaxTokenBytes bounds the token text Verify reads.
	MaxTokenBytes = 8 << 10
)

// Claims are what a token grants.
type Claims struct {
	// Project is the project the token belongs to.
	Project string `json:"project"`
	// Endpoints are the names of the endpoints it may run.
	Endpoints []string `json:"endpoints"`
	// Fixed holds the value of each variable (by code_name) that the token
	// sets; a run may repeat the value but never change it.
	Fixed map[string]any `json:"fixed,omitempty"`
	// RPM caps this token's runs per minute; 0 means the project's limits
	// only, which only the host itself may give: a token minted on behalf
	// of a credential with a budget (Service.MintEmbedTokenAs in package
	// endpoint) gets one within it.
	RPM int `json:"rpm,omitempty"`
	// ExpiresAt and IssuedAt are the token's exp and iat.
	ExpiresAt time.Time `json:"-"`
	IssuedAt  time.Time `json:"-"`
	// KeyID is the kid of the secret that signed the token.
	KeyID string `json:"-"`
	// ID identifies the verified token, for what is counted per token (its
	// rpm): the kid and a hash of the signature's bytes. Tokens verify only
	// in their one canonical spelling, and even two spellings would share
	// the ID, since it is taken from the bytes, not from the text.
	ID string `json:"-"`
}

// Allows reports whether the token may run the endpoint named name.
func (c *Claims) Allows(name string) bool {
	for _, n := range c.Endpoints {
		if n == name {
			return true
		}
	}
	return false
}

// Keys gives the secrets that sign a project's tokens.
type Keys interface {
	// Secret returns the secret of key kid of project, false if there is
	// none (an unknown or rotated-out kid).
	Secret(project, kid string) ([]byte, bool)
	// Current returns the kid and secret that new tokens of project are
	// signed with, false if the project has none.
	Current(project string) (kid string, secret []byte, ok bool)
}

// StaticKeys is a fixed set of secrets: per project, or for every project
// (Project ""), each under its kid. The last key added for a project is the
// one new tokens are signed with; older ones still verify until removed.
type StaticKeys struct {
	keys    map[string]map[string][]byte
	current map[string]string
}

// MinSecretBytes is the shortest secret StaticKeys accepts: HS256 is only
// as strong as its secret.
const MinSecretBytes = 16

// Add adds secret under kid for project ("" for every project without
// keys of its own); a short secret or an empty kid is refused.
func (k *StaticKeys) Add(project, kid string, secret []byte) error {
	if kid == "" {
		return errors.New("embed: empty key id")
	}
	if len(secret) < MinSecretBytes {
		return fmt.Errorf("embed: secret of key %q is %d bytes; want at least %d", kid, len(secret), MinSecretBytes)
	}
	if k.keys == nil {
		k.keys, k.current = map[string]map[string][]byte{}, map[string]string{}
	}
	if k.keys[project] == nil {
		k.keys[project] = map[string][]byte{}
	}
	k.keys[project][kid] = append([]byte(nil), secret...)
	k.current[project] = kid
	return nil
}

// Remove rotates kid of project out: tokens it signed no longer verify.
func (k *StaticKeys) Remove(project, kid string) {
	delete(k.keys[project], kid)
	if k.current[project] == kid {
		delete(k.current, project)
		for other := range k.keys[project] {
			k.current[project] = other
			break
		}
	}
}

func (k *StaticKeys) set(project string) (string, map[string][]byte) {
	if ks, ok := k.keys[project]; ok && len(ks) > 0 {
		return project, ks
	}
	return "", k.keys[""]
}

// Secret implements Keys.
func (k *StaticKeys) Secret(project, kid string) ([]byte, bool) {
	_, ks := k.set(project)
	s, ok := ks[kid]
	return s, ok
}

// Current implements Keys.
func (k *StaticKeys) Current(project string) (string, []byte, bool) {
	p, ks := k.set(project)
	kid, ok := k.current[p]
	if !ok {
		return "", nil, false
	}
	return kid, ks[kid], true
}

// Signer mints and verifies tokens with Keys.
type Signer struct {
	Keys Keys
	// MaxLifetime is the longest lifetime accepted; 0 means
	// DefaultMaxLifetime.
	MaxLifetime time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (s *Signer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Signer) maxLifetime() time.Duration {
	if s.MaxLifetime > 0 {
		return s.MaxLifetime
	}
	return DefaultMaxLifetime
}

// wire is the JWT payload.
type wire struct {
	Project   string         `json:"project"`
	Endpoints []string       `json:"endpoints"`
	Fixed     map[string]any `json:"fixed,omitempty"`
	RPM       int            `json:"rpm,omitempty"`
	jwt.RegisteredClaims
}

// Mint signs a token of project granting c (its Project is set to project)
// for lifetime (0 means DefaultLifetime), with the project's current key.
// The caller checks that the endpoints exist and that fixed values fit
// their variables (the Service's MintEmbedToken does).
func (s *Signer) Mint(project string, c Claims, lifetime time.Duration) (string, error) {
	if lifetime == 0 {
		lifetime = DefaultLifetime
	}
	switch {
	case lifetime < 0:
		return "", &Error{Reason: ReasonLifetime, Detail: "expires_in must be positive"}
	case lifetime > s.maxLifetime():
		return "", &Error{Reason: ReasonLifetime, Detail: fmt.Sprintf("lifetime %s exceeds the maximum of %s", lifetime, s.maxLifetime())}
	case len(c.Endpoints) == 0:
		return "", &Error{Reason: ReasonEndpoint, Detail: "a token must name at least one endpoint"}
	case c.RPM < 0:
		return "", &Error{Reason: ReasonMalformed, Detail: "rpm must not be negative"}
	case c.RPM > MaxRPM:
		return "", &Error{Reason: ReasonMalformed, Detail: fmt.Sprintf("rpm must be at most %d", MaxRPM)}
	}
	kid, secret, ok := s.Keys.Current(project)
	if !ok {
		return "", &Error{Reason: ReasonUnknownKey, Detail: fmt.Sprintf("project %q has no embed secret", project)}
	}
	now := s.now()
	w := wire{Project: project, Endpoints: c.Endpoints, Fixed: c.Fixed, RPM: c.RPM,
		RegisteredClaims: jwt.RegisteredClaims{IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(lifetime))}}
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, w)
	t.Header["kid"] = kid
	signed, err := t.SignedString(secret)
	if err != nil {
		return "", fmt.Errorf("embed: sign: %w", err)
	}
	return signed, nil
}

// LooksLikeToken reports whether a bearer credential has a JWT's shape
// (three dot-separated parts), so that an authenticator tells tokens from
// API keys.
func LooksLikeToken(s string) bool { return strings.Count(s, ".") == 2 && strings.HasPrefix(s, "eyJ") }

// Verify checks token for project: each part in its one canonical
// base64url spelling (no padding, no line breaks, zero trailing bits), no
// crit header, exp, iat and nbf numbers from 0 to MaxNumericDate, rpm a
// whole number from 0 to MaxRPM (an *Error naming the claim otherwise),
// signature with the key its kid names, HS256 only, exp present and not
// past, iat and nbf not in the future (with Leeway), a lifetime within
// MaxLifetime, and the project. It returns the claims, or an *Error whose
// Reason says which check failed.
func (s *Signer) Verify(token, project string) (*Claims, error) {
	if len(token) > MaxTokenBytes {
		return nil, &Error{Reason: ReasonMalformed, Detail: fmt.Sprintf("token longer than %d bytes", MaxTokenBytes)}
	}
	segments, err := decodeSegments(token)
	if err != nil {
		return nil, err
	}
	if err := checkHeader(segments[0]); err != nil {
		return nil, err
	}
	if err := checkClaims(segments[1]); err != nil {
		return nil, err
	}
	var w wire
	var kid string
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(Leeway),
		jwt.WithTimeFunc(s.now),
		jwt.WithJSONNumber(),
		jwt.WithStrictDecoding(),
	)
	_, err = parser.ParseWithClaims(token, &w, func(t *jwt.Token) (any, error) {
		kid, _ = t.Header["kid"].(string)
		if kid == "" {
			return nil, &Error{Reason: ReasonUnknownKey, Detail: "the token names no key (kid)"}
		}
		claimed := w.Project
		secret, ok := s.Keys.Secret(claimed, kid)
		if !ok {
			return nil, &Error{Reason: ReasonUnknownKey, Detail: fmt.Sprintf("unknown or rotated key %q", cut(kid))}
		}
		return secret, nil
	})
	if err != nil {
		return nil, verifyError(err)
	}
	if w.Project != project {
		return nil, &Error{Reason: ReasonProject, Detail: "the token belongs to another project"}
	}
	if w.IssuedAt == nil {
		return nil, &Error{Reason: ReasonMalformed, Detail: "the token has no iat"}
	}
	if life := w.ExpiresAt.Sub(w.IssuedAt.Time); life > s.maxLifetime() {
		return nil, &Error{Reason: ReasonLifetime, Detail: fmt.Sprintf("the token lives %s, more than the maximum of %s", life, s.maxLifetime())}
	}
	if w.RPM < 0 {
		return nil, &Error{Reason: ReasonMalformed, Detail: "rpm must not be negative"}
	}
	return &Claims{Project: w.Project, Endpoints: w.Endpoints, Fixed: w.Fixed, RPM: w.RPM,
		ExpiresAt: w.ExpiresAt.UTC(), IssuedAt: w.IssuedAt.UTC(), KeyID: kid, ID: tokenID(kid, segments[2])}, nil
}

// tokenID is the ID of a token signed by kid with signature sig.
func tokenID(kid string, sig []byte) string {
	sum := sha256.Sum256(sig)
	return kid + ":" + hex.EncodeToString(sum[:16])
}

// verifyError turns the JWT library's error into an *Error.
func verifyError(err error) error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, jwt.ErrTokenExpired):
		return &Error{Reason: ReasonExpired, Detail: "the token has expired", err: err}
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return &Error{Reason: ReasonNotYetValid, Detail: "the token is not valid yet", err: err}
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return &Error{Reason: ReasonMalformed, Detail: "the token has no exp", err: err}
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return &Error{Reason: ReasonSignature, Detail: "the token's signature does not match", err: err}
	case errors.Is(err, jwt.ErrTokenUnverifiable), errors.Is(err, jwt.ErrSignatureInvalid):
		return &Error{Reason: ReasonAlgorithm, Detail: "the token is not signed with HS256", err: err}
	}
	return &Error{Reason: ReasonMalformed, Detail: "the token is malformed", err: err}
}

// cut keeps text from a token short in messages.
func cut(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
