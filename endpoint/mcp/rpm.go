package mcp

import (
	"context"
	"errors"

	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
)

// checkRPM refuses a run past the caller's embed token's rpm, in the HTTP
// API's words. The count is the Limiter's (limit.AdmitToken), under the id
// the HTTP API uses: a token given to both is counted once, in this
// process by default and across processes when the Limiter's counter store
// is shared (pass the HTTP API's Limiter with WithLimiter).
func (t *tools) checkRPM(ctx context.Context) error {
	c := t.caller.token
	if c == nil || c.RPM <= 0 {
		return nil
	}
	err := t.cfg.tokens.AdmitToken(ctx, httpapi.TokenCounterID(c), c.RPM)
	var le *limit.Error
	if errors.As(err, &le) {
		return httpapi.LimitError(le)
	}
	return err
}
