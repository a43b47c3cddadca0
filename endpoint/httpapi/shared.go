package httpapi

import (
	"context"
	"errors"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/limit"
)

// DecodeJSON decodes body, a whole non-empty JSON request, into dst (a
// pointer to a struct) exactly as the API decodes its request bodies: a
// JSON object whose keys are json names of dst's fields, without invalid
// UTF-8 or repeated keys, numbers kept as json.Number. Its errors are the
// API's 400s, so that another transport of the same requests (package
// endpoint/mcp) refuses them in the same words.
func DecodeJSON(body []byte, dst any) error { return decodeJSON(body, dst) }

// LimitError is the API's answer to a run that a limit of l refused (429
// for a project's limit, 503 for the global cap), naming the limit by its
// setting.
func LimitError(le *limit.Error) *endpoint.Error {
	return limitError(le, retrySeconds(le.RetryAfter))
}

// TokenRate is the count of an embed token's runs against its rpm, the
// Budgets.TokenRate of endpoint.Service.Admit for the HTTP API and /mcp:
// a run of a token with an rpm is counted per verified token (its
// Claims.ID, never its text) in tokens (limit.Limiter.AdmitToken), and
// one past it refused in the API's words (LimitError: 429 naming rpm, or
// 503 when the count failed), its Err the *limit.Error that says when to
// retry. Given one Limiter (the handler's, or with the limits off the
// Service's, endpoint.Service.TokenLimiter), a token given to both
// surfaces is counted once, and across processes when its counter store
// is shared.
func TokenRate(tokens *limit.Limiter) func(context.Context, *embed.Claims) error {
	return func(ctx context.Context, c *embed.Claims) error {
		if c == nil || c.RPM <= 0 {
			return nil
		}
		err := tokens.AdmitToken(ctx, tokenCounterID(c), c.RPM)
		var le *limit.Error
		if errors.As(err, &le) {
			return LimitError(le)
		}
		return err
	}
}
