package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// routeMCP serves the endpoints as MCP tools at /mcp of mux (package
// endpoint/mcp), behind the API's keys, stored keys (the API's Keys, so
// that a key has one budget on both) and embed tokens. An API key acts for
// ?project=ID, or for -project when the URL names none.
func routeMCP(mux *http.ServeMux, svc *endpoint.Service, keys mcp.Authenticator, stored *apikey.Keys, signer *embed.Signer, limiter *limit.Limiter, cfg config, logger *slog.Logger) {
	mux.Handle("/mcp", mcp.Handler(svc, keys, mcp.WithEmbedTokens(signer), mcp.WithLimiter(limiter),
		mcp.WithKeys(stored), mcp.WithDefaultProject(cfg.project), mcp.WithLogger(logger)))
}

// serveMCPStdio serves the tools of -project over stdin and out (the
// protocol's stream; everything else the server prints goes to stderr)
// until stdin closes or ctx is done. Whoever starts the process acts as
// the API key of -project: stdio carries no credential.
func serveMCPStdio(ctx context.Context, cfg config, svc *endpoint.Service, load *demoLoad, logger *slog.Logger, out io.Writer) error {
	srv := mcp.Server(svc, cfg.project, mcp.WithLogger(logger))
	srv.AddReceivingMiddleware(load.gate(cfg.mcpLoadWait, logger))
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

// defaultMCPLoadWait is -mcp-load-wait's default: how long a stdio tool
// call that reads the events waits for the demo data's background load.
// MCP clients commonly give up on a request after 60 s.
const defaultMCPLoadWait = 30 * time.Second

// errDemoLoading is the answer of a tool call that reads the events while
// the demo data is still loading after -mcp-load-wait.
var errDemoLoading = errors.New("demo data still loading")

// demoLoad is the demo data's load, run in the background while the stdio
// server already answers: the handshake and the tools that read only the
// endpoints (_list_endpoints, _get_endpoint) do not wait for it.
type demoLoad struct {
	events  int // per project
	started time.Time
	done    chan struct{}

	mu  sync.Mutex
	err error
}

// startDemoLoad runs load in the background; done closes when it returns.
func startDemoLoad(events int, load func() error) *demoLoad {
	l := &demoLoad{events: events, started: time.Now(), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		err := load()
		l.mu.Lock()
		l.err = err
		l.mu.Unlock()
	}()
	return l
}

// wait waits for the load, at most d and while ctx lasts: nil once it
// has loaded, its error if it failed, errDemoLoading (with how long it has
// run) when it is still loading.
func (l *demoLoad) wait(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-l.done: // first, so that a finished load never answers "still loading"
		return l.result()
	default:
	}
	select {
	case <-l.done:
		return l.result()
	case <-ctx.Done():
	case <-timer.C:
	}
	return fmt.Errorf("%w (%d events, loading for %s): call this tool again in a few seconds",
		errDemoLoading, l.events, time.Since(l.started).Round(time.Second))
}

// result is the finished load's answer: nil, or its error.
func (l *demoLoad) result() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return fmt.Errorf("the demo data failed to load: %w", l.err)
	}
	return nil
}

// gate holds each tool call that reads the events (an endpoint's tool,
// _run_query) until the demo data has loaded, at most wait and while the
// request lasts, then answers it as a tool error saying the data is still
// loading, which an agent reads and can act on (a protocol error would
// read as a broken server). Other requests pass at once.
func (l *demoLoad) gate(wait time.Duration, logger *slog.Logger) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			r, ok := req.(*sdk.CallToolRequest)
			if method != "tools/call" || !ok || r.Params == nil || r.Params.Name == mcp.ListTool || r.Params.Name == mcp.GetTool {
				return next(ctx, method, req)
			}
			if err := l.wait(ctx, wait); err != nil {
				logger.WarnContext(ctx, "mcp: tool call answered before the demo data loaded", "tool", r.Params.Name, "error", err)
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
			}
			return next(ctx, method, req)
		}
	}
}
