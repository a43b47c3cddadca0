package httpapi

import (
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

// TokenCounterID is the id an embed token's rpm is counted under in a
// limit.Limiter (limit.AdmitToken), the same for the HTTP API and /mcp.
func TokenCounterID(c *embed.Claims) string { return tokenCounterID(c) }
