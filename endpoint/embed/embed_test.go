package embed

import (
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var (
	t0      = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	secretA = []byte("project-one-secret-a")
	secretB = []byte("project-one-secret-b")
	secret2 = []byte("project-two-secret-0")
)

func newSigner(t *testing.T) (*Signer, *StaticKeys) {
	t.Helper()
	keys := &StaticKeys{}
	if err := keys.Add("1", "a", secretA); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := keys.Add("1", "b", secretB); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := keys.Add("2", "z", secret2); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	return &Signer{Keys: keys, Now: func() time.Time { return t0 }}, keys
}

// forge signs claims with method and key under a header kid of our choice.
func forge(t *testing.T, method jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	return s
}

func claims(project string, iat, exp time.Time) jwt.MapClaims {
	return jwt.MapClaims{"project": project, "endpoints": []string{"daily"}, "iat": iat.Unix(), "exp": exp.Unix()}
}

// editPayload swaps the payload of a signed token for another, keeping the
// signature: what a customer editing their token would send.
func editPayload(token, from, to string) string {
	parts := strings.Split(token, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	parts[1] = base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), from, to, 1)))
	return strings.Join(parts, ".")
}

func TestMintVerifyRoundTrip(t *testing.T) {
	s, _ := newSigner(t)
	tok, err := s.Mint("1", Claims{Endpoints: []string{"daily", "weekly"}, Fixed: map[string]any{"customer": "acme"}, RPM: 30}, 0)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if !LooksLikeToken(tok) {
		t.Errorf("LooksLikeToken(tok) is false")
	}
	c, err := s.Verify(tok, "1")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := c.Project, "1"; got != want {
		t.Errorf("c.Project = %q, want %q", got, want)
	}
	if got, want := c.KeyID, "b"; got != want {
		t.Errorf("new tokens are signed with the latest key: c.KeyID = %q, want %q", got, want)
	}
	if !c.Allows("weekly") {
		t.Errorf("c.Allows(\"weekly\") is false")
	}
	if c.Allows("monthly") {
		t.Errorf("c.Allows(\"monthly\") is true")
	}
	if got, want := c.Fixed["customer"], "acme"; !reflect.DeepEqual(got, want) {
		t.Errorf("c.Fixed[\"customer\"] = %q, want %q", got, want)
	}
	if got, want := c.RPM, 30; got != want {
		t.Errorf("c.RPM = %v, want %v", got, want)
	}
	if got, want := c.ExpiresAt, t0.Add(DefaultLifetime); !reflect.DeepEqual(got, want) {
		t.Errorf("c.ExpiresAt = %+v, want %+v", got, want)
	}
}

func TestMintRefuses(t *testing.T) {
	s, _ := newSigner(t)
	for _, tc := range []struct {
		name     string
		project  string
		c        Claims
		lifetime time.Duration
		reason   Reason
	}{
		{"lifetime over the maximum", "1", Claims{Endpoints: []string{"d"}}, 25 * time.Hour, ReasonLifetime},
		{"negative lifetime", "1", Claims{Endpoints: []string{"d"}}, -time.Second, ReasonLifetime},
		{"no endpoint", "1", Claims{}, time.Hour, ReasonEndpoint},
		{"negative rpm", "1", Claims{Endpoints: []string{"d"}, RPM: -1}, time.Hour, ReasonMalformed},
		{"rpm over MaxRPM, which Verify would refuse", "1", Claims{Endpoints: []string{"d"}, RPM: MaxRPM + 1}, time.Hour, ReasonMalformed},
		{"project without a secret", "3", Claims{Endpoints: []string{"d"}}, time.Hour, ReasonUnknownKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Mint(tc.project, tc.c, tc.lifetime)
			var e *Error
			if err := err; !errors.As(err, &e) {
				t.Fatalf("error %v is not a %T", err, &e)
			}
			if got, want := e.Reason, tc.reason; got != want {
				t.Errorf("e.Reason = %q, want %q", got, want)
			}
		})
	}
}

// TestForgedTokens is the attack table: every token here must be refused
// with the reason given, and the valid ones accepted.
func TestForgedTokens(t *testing.T) {
	s, keys := newSigner(t)
	good, err := s.Mint("1", Claims{Endpoints: []string{"daily"}}, time.Hour)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	other, err := s.Mint("2", Claims{Endpoints: []string{"daily"}}, time.Hour)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	hour := time.Hour
	tests := []struct {
		name   string
		token  string
		reason Reason // "" = accepted
	}{
		{"valid", good, ""},
		{"valid, an older key still listed", forge(t, jwt.SigningMethodHS256, "a", secretA, claims("1", t0, t0.Add(hour))), ""},
		{"expired within the leeway", forge(t, jwt.SigningMethodHS256, "a", secretA, claims("1", t0.Add(-hour), t0.Add(-20*time.Second))), ""},
		{"payload edited: another project", editPayload(good, `"project":"1"`, `"project":"2"`), ReasonUnknownKey},
		{"payload edited: another endpoint", editPayload(good, `"daily"`, `"admin"`), ReasonSignature},
		{"payload edited: longer life", editPayload(good, `"exp":`, `"exp":9`), ReasonSignature},
		{"signed with a wrong secret", forge(t, jwt.SigningMethodHS256, "a", []byte("not-the-right-secret"), claims("1", t0, t0.Add(hour))), ReasonSignature},
		{"signed with project 2's secret under project 1's kid", forge(t, jwt.SigningMethodHS256, "a", secret2, claims("1", t0, t0.Add(hour))), ReasonSignature},
		{"alg none", forge(t, jwt.SigningMethodNone, "a", jwt.UnsafeAllowNoneSignatureType, claims("1", t0, t0.Add(hour))), ReasonAlgorithm},
		{"alg HS512 with the right secret", forge(t, jwt.SigningMethodHS512, "a", secretA, claims("1", t0, t0.Add(hour))), ReasonAlgorithm},
		{"alg HS384 with the right secret", forge(t, jwt.SigningMethodHS384, "a", secretA, claims("1", t0, t0.Add(hour))), ReasonAlgorithm},
		{"unknown kid", forge(t, jwt.SigningMethodHS256, "nope", secretA, claims("1", t0, t0.Add(hour))), ReasonUnknownKey},
		{"no kid", forge(t, jwt.SigningMethodHS256, "", secretA, claims("1", t0, t0.Add(hour))), ReasonUnknownKey},
		{"another project's kid", forge(t, jwt.SigningMethodHS256, "z", secret2, claims("1", t0, t0.Add(hour))), ReasonUnknownKey},
		{"expired", forge(t, jwt.SigningMethodHS256, "a", secretA, claims("1", t0.Add(-2*hour), t0.Add(-hour))), ReasonExpired},
		{"issued in the future", forge(t, jwt.SigningMethodHS256, "a", secretA, claims("1", t0.Add(hour), t0.Add(2*hour))), ReasonNotYetValid},
		{"not before in the future", forge(t, jwt.SigningMethodHS256, "a", secretA, jwt.MapClaims{"project": "1", "endpoints": []string{"d"}, "iat": t0.Unix(), "nbf": t0.Add(hour).Unix(), "exp": t0.Add(2 * hour).Unix()}), ReasonNotYetValid},
		{"no exp", forge(t, jwt.SigningMethodHS256, "a", secretA, jwt.MapClaims{"project": "1", "endpoints": []string{"d"}, "iat": t0.Unix()}), ReasonMalformed},
		{"no iat", forge(t, jwt.SigningMethodHS256, "a", secretA, jwt.MapClaims{"project": "1", "endpoints": []string{"d"}, "exp": t0.Add(hour).Unix()}), ReasonMalformed},
		{"lifetime over the maximum", forge(t, jwt.SigningMethodHS256, "a", secretA, claims("1", t0, t0.Add(48*hour))), ReasonLifetime},
		{"negative rpm", forge(t, jwt.SigningMethodHS256, "a", secretA, jwt.MapClaims{"project": "1", "endpoints": []string{"d"}, "rpm": -5, "iat": t0.Unix(), "exp": t0.Add(hour).Unix()}), ReasonMalformed},
		{"another project's token", other, ReasonProject},
		{"garbage", "eyJhbGciOi.not.a-token", ReasonMalformed},
		{"empty", "", ReasonMalformed},
		{"too long", good + strings.Repeat("A", MaxTokenBytes), ReasonMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := s.Verify(tc.token, "1")
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if got, want := c.Project, "1"; got != want {
					t.Errorf("c.Project = %q, want %q", got, want)
				}
				return
			}
			if v := c; v != nil {
				t.Errorf("c = %v, want nil", v)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want an *Error", err, err)
			}
			if got, want := e.Reason, tc.reason; got != want {
				t.Errorf("%v: e.Reason = %q, want %q", e.Detail, got, want)
			}
			if tc.token != "" {
				if s, sub := e.Error(), tc.token; strings.Contains(s, sub) {
					t.Errorf("the detail does not echo the token: %q contains %q", s, sub)
				}
			}
		})
	}

	// Rotation: removing key a breaks its tokens, not those of key b.
	byA := forge(t, jwt.SigningMethodHS256, "a", secretA, claims("1", t0, t0.Add(hour)))
	keys.Remove("1", "a")
	_, err = s.Verify(byA, "1")
	var e *Error
	if err := err; !errors.As(err, &e) {
		t.Fatalf("error %v is not a %T", err, &e)
	}
	if got, want := e.Reason, ReasonUnknownKey; got != want {
		t.Errorf("e.Reason = %q, want %q", got, want)
	}
	_, err = s.Verify(good, "1")
	if err != nil {
		t.Errorf("a token of the current key survives the rotation: unexpected error: %v", err)
	}
}

func TestStaticKeysDefault(t *testing.T) {
	keys := &StaticKeys{}
	if err := keys.Add("", "default", []byte("short")); err == nil {
		t.Fatalf("got no error, want one")
	}
	if err := keys.Add("", "", secretA); err == nil {
		t.Fatalf("got no error, want one")
	}
	if err := keys.Add("", "default", secretA); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	s := &Signer{Keys: keys, Now: func() time.Time { return t0 }}
	for _, p := range []string{"1", "42"} {
		tok, err := s.Mint(p, Claims{Endpoints: []string{"d"}}, time.Minute)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		c, err := s.Verify(tok, p)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := c.KeyID, "default"; got != want {
			t.Errorf("c.KeyID = %q, want %q", got, want)
		}
		_, err = s.Verify(tok, "7")
		var e *Error
		if err := err; !errors.As(err, &e) {
			t.Fatalf("error %v is not a %T", err, &e)
		}
		if !e.Forbidden() {
			t.Errorf("a token of another project is forbidden, not untrusted: e.Forbidden() is false")
		}
	}
}

func FuzzVerify(f *testing.F) {
	keys := &StaticKeys{}
	_ = keys.Add("1", "a", secretA)
	s := &Signer{Keys: keys, Now: func() time.Time { return t0 }}
	good, _ := s.Mint("1", Claims{Endpoints: []string{"daily"}, Fixed: map[string]any{"x": 1}}, time.Hour)
	f.Add(good)
	f.Add(editPayload(good, `"daily"`, `"other"`))
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		c, err := s.Verify(token, "1")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("err = %v (%T), want an *Error", err, err)
				return
			}
			if v := e.Reason; v == "" {
				t.Errorf("e.Reason is empty")
			}
			if v := c; v != nil {
				t.Errorf("c = %v, want nil", v)
			}
			return
		}
		// Whatever verifies was signed with the secret: it can only be
		// the one token minted above.
		if got, want := c.Project, "1"; got != want {
			t.Errorf("c.Project = %q, want %q", got, want)
		}
		if got, want := c.Endpoints, ([]string{"daily"}); !reflect.DeepEqual(got, want) {
			t.Errorf("c.Endpoints = %+v, want %+v", got, want)
		}
	})
}
