package embed

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// MaxNumericDate is the latest exp, iat or nbf a token may carry:
// 9999-12-31T23:59:59Z, in seconds since 1970. Later (or negative) values
// are refused as out of range rather than read as a time that never comes.
const MaxNumericDate = 253402300799

// MaxRPM is the largest rpm a token may carry.
const MaxRPM = math.MaxInt32

// canonical is the one spelling of a token's parts (RFC 7515): base64url
// without padding, with zero trailing bits and no line breaks.
var canonical = base64.RawURLEncoding.Strict()

// decodeSegments splits token into its header, payload and signature and
// decodes each, refusing any spelling but the canonical one: otherwise
// several texts (the last character's spare bits changed, padding added,
// a line break, which the decoder skips) would carry one signature, and
// each would pass for a token of its own.
func decodeSegments(token string) ([3][]byte, error) {
	var out [3][]byte
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return out, &Error{Reason: ReasonMalformed, Detail: "the token is malformed: want three dot-separated parts"}
	}
	for i, p := range parts {
		b, err := canonical.DecodeString(p)
		if err == nil && canonical.EncodeToString(b) != p {
			err = errors.New("not the canonical spelling")
		}
		if err != nil {
			return out, &Error{Reason: ReasonMalformed, err: err,
				Detail: fmt.Sprintf("the token's %s is not canonical base64url (no padding, no line breaks, zero trailing bits)", segmentNames[i])}
		}
		out[i] = b
	}
	return out, nil
}

var segmentNames = [3]string{"header", "payload", "signature"}

// checkHeader refuses, before anything else is trusted, a header that
// names another algorithm than HS256 ("none" included) or that lists
// critical extensions (crit): none is understood here, and RFC 7515 says a
// token naming one that is not understood must be refused.
func checkHeader(raw []byte) error {
	var h map[string]json.RawMessage
	if err := json.Unmarshal(raw, &h); err != nil || h == nil {
		return &Error{Reason: ReasonMalformed, Detail: "the token's header is not a JSON object", err: err}
	}
	var alg string
	if err := json.Unmarshal(h["alg"], &alg); err != nil || alg != jwt.SigningMethodHS256.Alg() {
		if alg == "" {
			alg = string(h["alg"])
		}
		return &Error{Reason: ReasonAlgorithm, Detail: fmt.Sprintf("algorithm %q is not accepted; tokens are signed HS256", cut(alg))}
	}
	if _, ok := h["crit"]; ok {
		return &Error{Reason: ReasonMalformed, Detail: `the token's header lists critical extensions ("crit"), and this server understands none`}
	}
	return nil
}

// checkClaims refuses a payload whose claims have the wrong JSON type or a
// number out of range, naming the claim; the JWT library would read
// exp: 1e30 as a time far in the past, or an rpm of 2.5 as a malformed
// token without saying why.
func checkClaims(raw []byte) error {
	var claims map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&claims); err != nil || claims == nil {
		return &Error{Reason: ReasonMalformed, Detail: "the token's payload is not a JSON object", err: err}
	}
	for _, name := range []string{"exp", "iat", "nbf"} {
		v, ok := claims[name]
		if !ok || string(v) == "null" {
			continue
		}
		f, err := number(v)
		if err != nil || f < 0 || f > MaxNumericDate {
			return claimError(name, v, fmt.Sprintf("seconds since 1970 from 0 to %d (year 9999)", MaxNumericDate))
		}
	}
	if v, ok := claims["rpm"]; ok && string(v) != "null" {
		if n, err := strconv.ParseInt(string(v), 10, 64); err != nil || n < 0 || n > MaxRPM {
			return claimError("rpm", v, fmt.Sprintf("a whole number from 0 to %d", MaxRPM))
		}
	}
	var (
		project   string
		endpoints []string
		fixed     map[string]any
	)
	for _, c := range []struct {
		name, want string
		dst        any
	}{
		{"project", "a string", &project},
		{"endpoints", "an array of strings", &endpoints},
		{"fixed", "an object", &fixed},
	} {
		if v, ok := claims[c.name]; ok && json.Unmarshal(v, c.dst) != nil {
			return claimError(c.name, v, c.want)
		}
	}
	return nil
}

// number reads a JSON number, refusing any other JSON value and a number
// too large for a float64.
func number(v json.RawMessage) (float64, error) {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, errors.New("not a number")
	}
	return strconv.ParseFloat(string(v), 64)
}

// claimError says that the claim named name holds v where want belongs.
func claimError(name string, v json.RawMessage, want string) *Error {
	return &Error{Reason: ReasonMalformed, Detail: fmt.Sprintf("the token's claim %q must be %s, got %s", name, want, cut(string(v)))}
}
