package embed

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, keys.Add("1", "a", secretA))
	require.NoError(t, keys.Add("1", "b", secretB))
	require.NoError(t, keys.Add("2", "z", secret2))
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
	require.NoError(t, err)
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
	require.NoError(t, err)
	assert.True(t, LooksLikeToken(tok), "LooksLikeToken(tok) is false")
	c, err := s.Verify(tok, "1")
	require.NoError(t, err)
	assert.Equal(t, "1", c.Project)
	got, want := c.KeyID, "b"
	assert.Equal(t, want, got, "new tokens are signed with the latest key: c.KeyID")
	assert.True(t, c.Allows("weekly"), "c.Allows(\"weekly\") is false")
	assert.False(t, c.Allows("monthly"), "c.Allows(\"monthly\") is true")
	assert.Equal(t, "acme", c.Fixed["customer"])
	assert.Equal(t, 30, c.RPM)
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
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.reason, e.Reason)
		})
	}
}

// TestForgedTokens is the attack table: every token here must be refused
// with the reason given, and the valid ones accepted.
func TestForgedTokens(t *testing.T) {
	s, keys := newSigner(t)
	good, err := s.Mint("1", Claims{Endpoints: []string{"daily"}}, time.Hour)
	require.NoError(t, err)
	other, err := s.Mint("2", Claims{Endpoints: []string{"daily"}}, time.Hour)
	require.NoError(t, err)
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
				require.NoError(t, err)
				assert.Equal(t, "1", c.Project)
				return
			}
			assert.Nil(t, c)
			var e *Error
			require.ErrorAs(t, err, &e)
			got, want := e.Reason, tc.reason
			assert.Equal(t, want, got, "%v: e.Reason", e.Detail)
			if tc.token != "" {
				s, sub := e.Error(), tc.token
				assert.NotContains(t, s, sub, "the detail does not echo the token")
			}
		})
	}

	// Rotation: removing key a breaks its tokens, not those of key b.
	byA := forge(t, jwt.SigningMethodHS256, "a", secretA, claims("1", t0, t0.Add(hour)))
	keys.Remove("1", "a")
	_, err = s.Verify(byA, "1")
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ReasonUnknownKey, e.Reason)
	_, err = s.Verify(good, "1")
	assert.NoError(t, err, "a token of the current key survives the rotation")
}

func TestStaticKeysDefault(t *testing.T) {
	keys := &StaticKeys{}
	require.Error(t, keys.Add("", "default", []byte("short")))
	require.Error(t, keys.Add("", "", secretA))
	require.NoError(t, keys.Add("", "default", secretA))
	s := &Signer{Keys: keys, Now: func() time.Time { return t0 }}
	for _, p := range []string{"1", "42"} {
		tok, err := s.Mint(p, Claims{Endpoints: []string{"d"}}, time.Minute)
		require.NoError(t, err)
		c, err := s.Verify(tok, p)
		require.NoError(t, err)
		assert.Equal(t, "default", c.KeyID)
		_, err = s.Verify(tok, "7")
		var e *Error
		require.ErrorAs(t, err, &e)
		assert.True(t, e.Forbidden(), "a token of another project is forbidden, not untrusted: e.Forbidden() is false")
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
			if !assert.ErrorAs(t, err, &e) {
				return
			}
			v := e.Reason
			assert.NotEqual(t, Reason(""), v, "e.Reason is empty")
			assert.Nil(t, c)
			return
		}
		// Whatever verifies was signed with the secret: it can only be
		// the one token minted above.
		assert.Equal(t, "1", c.Project)
		assert.Equal(t, []string{"daily"}, c.Endpoints)
	})
}
