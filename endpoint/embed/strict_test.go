package embed

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// respell returns s with its last base64url character replaced by another
// that decodes to the same bytes: the bits after the last whole byte are
// changed. ok is false when s has no such bits (its length is a multiple
// of 4).
func respell(s string) (string, bool) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	spare := map[int]int{2: 4, 3: 2}[len(s)%4] // unused low bits of the last character
	if spare == 0 {
		return "", false
	}
	last := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[last^1]), true
}

// TestNonCanonicalTokenRefused: a token spelt otherwise than its one
// canonical base64url text (trailing bits set, padding, a line break) is
// refused, even though the bytes it decodes to carry a valid signature.
// Each spelling would otherwise be a token of its own, with an rpm budget
// of its own.
func TestNonCanonicalTokenRefused(t *testing.T) {
	s, _ := newSigner(t)
	good, err := s.Mint("1", Claims{Endpoints: []string{"daily"}, RPM: 2}, time.Hour)
	require.NoError(t, err)
	parts := strings.Split(good, ".")
	spellings := map[string]string{}
	for i, name := range []string{"header", "payload", "signature"} {
		if re, ok := respell(parts[i]); ok {
			p := append([]string(nil), parts...)
			p[i] = re
			spellings[name+": trailing bits set"] = strings.Join(p, ".")
		}
		p := append([]string(nil), parts...)
		p[i] += strings.Repeat("=", (4-len(p[i])%4)%4)
		if p[i] != parts[i] {
			spellings[name+": padded"] = strings.Join(p, ".")
		}
		p = append([]string(nil), parts...)
		p[i] = p[i][:4] + "\n" + p[i][4:]
		spellings[name+": a line break"] = strings.Join(p, ".")
	}
	_, ok := spellings["signature: trailing bits set"]
	require.True(t, ok, "a 32-byte signature has 2 spare bits: no key %v in %v", "signature: trailing bits set", spellings)
	for name, tok := range spellings {
		// The spelling decodes to the very bytes of the good token.
		require.NotEqual(t, good, tok)
		c, err := s.Verify(tok, "1")
		v := c
		assert.Nil(t, v, "%v: c", name)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: err = %v (%T), want an *Error", name, err, err)
		} else {
			got, want := e.Reason, ReasonMalformed
			assert.Equal(t, want, got, "%s: %s: e.Reason", name, e.Detail)
			assert.Contains(t, e.Detail, "base64url", "%v", name)
		}
	}
	c1, err := s.Verify(good, "1")
	require.NoError(t, err)
	c2, err := s.Verify(good, "1")
	require.NoError(t, err)
	got, want := c2.ID, c1.ID
	assert.Equal(t, want, got, "one token, one id: c2.ID")
	other, err := s.Mint("1", Claims{Endpoints: []string{"daily"}, RPM: 2}, 2*time.Hour)
	require.NoError(t, err)
	c3, err := s.Verify(other, "1")
	require.NoError(t, err)
	if got, want := c3.ID, c1.ID; got == want {
		t.Errorf("two tokens, two ids: c3.ID = %q, want anything else", got)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	assert.NotContains(t, c1.ID, parts[2], "the id is not the signature text")
	v := sig
	assert.NotEmpty(t, v, "sig is empty")
}

// TestCritRefused: a header naming critical extensions (crit) is refused,
// since this server understands none (RFC 7515, 4.1.11).
func TestCritRefused(t *testing.T) {
	s, _ := newSigner(t)
	for _, crit := range []any{[]string{"exp"}, []string{"b64"}, []string{}, "x"} {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims("1", t0, t0.Add(time.Hour)))
		tok.Header["kid"] = "a"
		tok.Header["crit"] = crit
		signed, err := tok.SignedString(secretA)
		require.NoError(t, err)
		c, err := s.Verify(signed, "1")
		assert.Nil(t, c)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%v: err = %v (%T), want an *Error", crit, err, err)
		} else {
			assert.Equal(t, ReasonMalformed, e.Reason)
			assert.Contains(t, e.Detail, "crit")
		}
	}
}

// TestOutOfRangeClaims: a number a claim cannot hold is refused with a
// message naming the claim, not read as a far future or past.
func TestOutOfRangeClaims(t *testing.T) {
	s, _ := newSigner(t)
	valid := func() jwt.MapClaims { return claims("1", t0, t0.Add(time.Hour)) }
	for _, tc := range []struct {
		claim string
		value any
	}{
		{"exp", 1e30},
		{"exp", -1},
		{"exp", "1767225600"},
		{"exp", 253402300800.0}, // one second after 9999-12-31T23:59:59Z
		{"iat", 1e30},
		{"iat", -5},
		{"iat", true},
		{"nbf", -1e300},
		{"nbf", "soon"},
		{"rpm", 1e30},
		{"rpm", 2.5},
		{"rpm", -1},
		{"rpm", "60"},
		{"rpm", 1 << 40},
		{"project", 1},
		{"endpoints", "daily"},
		{"endpoints", []any{"daily", 3}},
		{"fixed", []any{"x"}},
	} {
		c := valid()
		c[tc.claim] = tc.value
		tok := forge(t, jwt.SigningMethodHS256, "a", secretA, c)
		got, err := s.Verify(tok, "1")
		assert.Nil(t, got, "%s: %v", tc.claim, tc.value)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v: err = %v (%T), want an *Error", tc.claim, tc.value, err, err)
		} else {
			got, want := e.Reason, ReasonMalformed
			assert.Equal(t, want, got, "%s: %v: %s: e.Reason", tc.claim, tc.value, e.Detail)
			s, sub := e.Detail, `"`+tc.claim+`"`
			assert.Contains(t, s, sub, "%s: %v", tc.claim, tc.value)
		}
	}
	// In range: a fractional exp (RFC 7519 allows one) and a large rpm.
	c := valid()
	c["exp"] = float64(t0.Add(time.Hour).Unix()) + 0.5
	c["rpm"] = 1000000
	got, err := s.Verify(forge(t, jwt.SigningMethodHS256, "a", secretA, c), "1")
	require.NoError(t, err)
	assert.Equal(t, 1000000, got.RPM)
}
