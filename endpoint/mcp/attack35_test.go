package mcp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/embed"
)

// TestEmbedTokenRPMOneCountLimitsOff: a host that turns the limits off on
// both surfaces (WithLimiter(nil) on the HTTP API and on /mcp) still holds
// an embed token to its rpm once across them: a token of rpm 3 runs three
// times in all (each surface had a token count of its own: it ran 6
// times).
func TestEmbedTokenRPMOneCountLimitsOff(t *testing.T) {
	f := newFixture(t) // WithLimiter(nil) on both
	tok, err := f.env.Service.MintEmbedToken(context.Background(), f.signer, "1",
		embed.Claims{Endpoints: []string{"by_event"}, Fixed: map[string]any{"event": "limits-off"}, RPM: 3}, 97*time.Minute)
	require.NoError(t, err)
	s := f.connectHTTP(t, tok, "")
	run := "/api/projects/1/endpoints/by_event/run"
	for i := range 3 {
		if i%2 == 0 {
			status, body := f.httpDo(t, "POST", run, tok, `{}`)
			require.Equal(t, http.StatusOK, status, "run %d over HTTP: %v", i+1, body)
		} else {
			res := call(t, s, "by_event", `{}`)
			require.False(t, res.IsError, "run %d over /mcp: %v", i+1, text(res))
		}
	}
	status, body := f.httpDo(t, "POST", run, tok, `{}`)
	require.Equal(t, http.StatusTooManyRequests, status, "a fourth run over HTTP: %v", body)
	got := toolRefusal(t, call(t, s, "by_event", `{}`))
	require.Equal(t, http.StatusTooManyRequests, got.Status, "a fourth run over /mcp: %+v", got)
}
