package embed

// Reason says which check a token failed.
type Reason string

// The reasons. Malformed, Signature, Algorithm, UnknownKey, Expired,
// NotYetValid and Lifetime mean the token cannot be trusted (401);
// Project and Endpoint mean a valid token asks for what it does not grant
// (403).
const (
	ReasonMalformed   Reason = "malformed"
	ReasonSignature   Reason = "bad_signature"
	ReasonAlgorithm   Reason = "bad_algorithm"
	ReasonUnknownKey  Reason = "unknown_key"
	ReasonExpired     Reason = "expired"
	ReasonNotYetValid Reason = "not_yet_valid"
	ReasonLifetime    Reason = "lifetime_too_long"
	ReasonProject     Reason = "wrong_project"
	ReasonEndpoint    Reason = "endpoint_not_allowed"
)

// Error is a token refused, or one that cannot be minted.
type Error struct {
	Reason Reason
	// Detail says what was wrong, for the client; it never repeats the
	// token or a secret.
	Detail string
	err    error
}

// Error returns "embed token: <detail>".
func (e *Error) Error() string { return "embed token: " + e.Detail }

// Unwrap returns the JWT library's error, if any.
func (e *Error) Unwrap() error { return e.err }

// Forbidden reports whether the token is genuine but does not grant what
// was asked (403), rather than untrusted (401).
func (e *Error) Forbidden() bool { return e.Reason == ReasonProject || e.Reason == ReasonEndpoint }
