package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// withMCP serves the endpoints as MCP tools at /mcp (package endpoint/mcp),
// behind the API's keys, stored keys (the API's Keys, so that a key has one
// budget on both) and embed tokens, and the rest as next does. An API key
// acts for ?project=ID, or for -project when the URL names none.
func withMCP(next http.Handler, svc *endpoint.Service, keys mcp.Authenticator, stored *endpoint.Keys, signer *embed.Signer, limiter *limit.Limiter, cfg config, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.Handler(svc, keys, mcp.WithEmbedTokens(signer), mcp.WithLimiter(limiter),
		mcp.WithKeys(stored), mcp.WithDefaultProject(cfg.project), mcp.WithLogger(logger)))
	mux.Handle("/", next)
	return mux
}

// serveMCPStdio serves the tools of -project over stdin and out (the
// protocol's stream; everything else the server prints goes to stderr)
// until stdin closes or ctx is done. Whoever starts the process acts as
// the API key of -project: stdio carries no credential.
func serveMCPStdio(ctx context.Context, cfg config, svc *endpoint.Service, logger *slog.Logger, out io.Writer) error {
	srv := mcp.Server(svc, cfg.project, mcp.WithLogger(logger))
	err := srv.Run(ctx, &sdk.IOTransport{Reader: os.Stdin, Writer: nopCloser{out}})
	if ctx.Err() != nil {
		err = nil // a stop asked for
	}
	cctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if cerr := svc.Close(cctx); cerr != nil && err == nil {
		err = fmt.Errorf("closing the service: %w", cerr)
	}
	return err
}

// nopCloser leaves the process's stdout open when the transport closes.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
