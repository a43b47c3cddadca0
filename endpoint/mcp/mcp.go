// Package mcp serves a Service's endpoints as tools for agents, over the
// Model Context Protocol (the official Go SDK,
// github.com/modelcontextprotocol/go-sdk). It is a package of its own so
// that hosts that do not serve MCP do not link the SDK.
//
// Each active endpoint the caller may run is a tool named as the endpoint
// (endpoint names are valid tool names), described by the endpoint's
// description, whose input schema is the JSON Schema of its run request,
// the one its OpenAPI document gives (endpoint/openapi.RequestSchema):
// {"variables": {...}, "limit", "offset", "refresh", "version", "debug"}.
// Three more tools, whose names start with '_' so that no endpoint name
// (which starts with a letter) can take them:
//
//   - _list_endpoints lists the endpoints the caller may run;
//   - _get_endpoint reads an endpoint's definition, its materialization
//     verdict and its materialization status (API keys only);
//   - _run_query runs a query that is not saved, through the editor's
//     sandboxed path (endpoint.Service.RunQuery: the project's access policy
//     and tenant scope, as POST query/), with test values (API keys only).
//
// A tool's answer is the HTTP API's answer to the same request: the same
// JSON as structured content, and as text. A refusal is a tool error (not
// a protocol error) whose text is the HTTP answer's detail, and whose
// structured content is the HTTP error body plus its status.
//
// Handler serves the tools over the SDK's streamable HTTP transport
// (stateless: every request carries its credential and is checked) behind
// the HTTP API's credentials: an API key of the project (Authenticator),
// a stored key (WithKeys, within its scopes, endpoints and budget), or an
// embed token (WithEmbedTokens), which sees only the endpoints it
// names, without the variables it fixes, and may call neither
// _get_endpoint nor _run_query. Server returns the tools of one project
// for a transport without credentials, such as stdio.
package mcp

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Authenticator decides whether an API key may use a project; it is
// httpapi.Authenticator (an *httpapi.Keyring is one), so that /mcp takes
// the keys the HTTP API takes.
type Authenticator interface {
	Authorize(ctx context.Context, key, project string) error
}

// Option changes how Handler and Server serve the tools.
type Option func(*config)

type config struct {
	signer     *embed.Signer
	limiter    *limit.Limiter
	limiterSet bool
	// tokens counts embed tokens' rpm: limiter, or with the limits off
	// the Service's (endpoint.Service.TokenLimiter), shared with the HTTP API.
	tokens  *limit.Limiter
	project string
	logger  *slog.Logger
	// keys holds the stored API keys (WithKeys); nil accepts none.
	keys *apikey.Keys
	// maxBody bounds a request body of Handler.
	maxBody int64
}

// WithMaxBodyBytes sets the largest request body Handler reads, as
// httpapi.WithMaxBodyBytes does for the API (the same default,
// httpapi.DefaultMaxBodyBytes); a larger one is answered 413 by the SDK's
// transport. n <= 0 keeps the default.
func WithMaxBodyBytes(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.maxBody = n
		}
	}
}

// WithEmbedTokens accepts embed tokens that signer verifies, as
// httpapi.WithEmbedTokens does: a token's tools are the endpoints it
// names, of its own project.
func WithEmbedTokens(signer *embed.Signer) Option {
	return func(c *config) { c.signer = signer }
}

// WithKeys accepts, besides the Authenticator's keys, the stored API keys
// of keys (apikey.Keys), as httpapi.WithKeys does: a Bearer credential
// shaped like one (apikey.LooksLikeKey) is looked up there, for the
// project it belongs to (?project= or WithDefaultProject, which must be
// the key's). The key sees and runs only the endpoints it may use, with
// the scope endpoint:read (_run_query needs query:run), and its runs count
// against its own budget as over the HTTP API: pass the same Keys so that
// both count against one budget.
func WithKeys(keys *apikey.Keys) Option {
	return func(c *config) { c.keys = keys }
}

// WithLimiter sets the limits every endpoint run and _run_query call takes
// a slot of, as the HTTP API's runs do; pass the HTTP API's Limiter so
// that both count against the same budgets. Without it the tools have a
// limiter of their own with limit.Config's defaults; WithLimiter(nil)
// turns the limits off.
func WithLimiter(l *limit.Limiter) Option {
	return func(c *config) { c.limiter, c.limiterSet = l, true }
}

// WithDefaultProject sets the project an API key acts for on a request to
// Handler that names none (?project=ID names one). Without it such a
// request is refused, naming the parameter.
func WithDefaultProject(project string) Option {
	return func(c *config) { c.project = project }
}

// WithLogger sets where failures of the server's own (a 5xx, a tool that
// could not be described) are logged; the default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

func newConfig(svc *endpoint.Service, opts []Option) config {
	c := config{logger: slog.Default(), maxBody: httpapi.DefaultMaxBodyBytes}
	for _, o := range opts {
		o(&c)
	}
	if !c.limiterSet {
		l, err := limit.New(limit.Config{})
		if err != nil {
			panic("mcp: default limits: " + err.Error()) // the zero Config is valid
		}
		c.limiter = l
	}
	c.tokens = c.limiter
	if c.tokens == nil {
		c.tokens = svc.TokenLimiter()
	}
	return c
}

// Server returns an MCP server of the tools of project, acting with the
// rights of an API key of the project: for a transport that carries no
// credential, such as stdio (Server(...).Run(ctx, &sdk.StdioTransport{})),
// where whoever starts the process is trusted with the project. Its tool
// list follows the endpoints: each tools/list reads them again, and
// connected clients are told when it changed.
func Server(svc *endpoint.Service, project string, opts ...Option) *sdk.Server {
	if svc == nil {
		panic("mcp: Server called with a nil *endpoint.Service")
	}
	cfg := newConfig(svc, opts)
	srv, t := newServer(svc, &cfg, caller{project: project}, true)
	// The tools of the endpoints there are now, so that a session's first
	// tools/list finds them without a list_changed notice; a failure is
	// logged, and the next tools/list tries again.
	_ = t.sync(context.Background())
	return srv
}

// Handler serves the tools over the streamable HTTP transport, behind the
// HTTP API's credentials: "Authorization: Bearer <API key>", for the
// project of the request's ?project= parameter (or WithDefaultProject), or
// an embed token, for its own project. Mount it at /mcp. It panics if svc
// or auth is nil, as httpapi.New does.
func Handler(svc *endpoint.Service, auth Authenticator, opts ...Option) http.Handler {
	if svc == nil {
		panic("mcp: Handler called with a nil *endpoint.Service")
	}
	if auth == nil {
		panic("mcp: Handler called with a nil Authenticator")
	}
	cfg := newConfig(svc, opts)
	h := &handler{svc: svc, auth: auth, cfg: &cfg}
	h.transport = sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		c, ok := r.Context().Value(callerKey{}).(caller)
		if !ok {
			return nil // not reached: ServeHTTP authenticates first
		}
		srv, _ := newServer(svc, &cfg, c, false)
		return srv
	}, &sdk.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, Logger: cfg.sdkLogger(),
		MaxRequestBodyBytes: cfg.maxBody,
		// A client that goes away cancels its run, as over the API.
		PropagateRequestCancellation: true,
	})
	return h
}

// caller is who calls the tools: a project, and the verified embed token
// or the stored key when the credential was one.
type caller struct {
	project string
	token   *embed.Claims
	key     *apikey.Key
}

type callerKey struct{}

// quiet passes on the records of h from level up: the SDK logs every
// stateless request's session at Info, which would be a log line per call.
type quiet struct {
	slog.Handler
	level slog.Level
}

func (q quiet) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= q.level && q.Handler.Enabled(ctx, l)
}

func (q quiet) WithAttrs(as []slog.Attr) slog.Handler { return quiet{q.Handler.WithAttrs(as), q.level} }
func (q quiet) WithGroup(g string) slog.Handler       { return quiet{q.Handler.WithGroup(g), q.level} }

// sdkLogger is the logger the SDK's server and transport get: warnings
// and errors of cfg's logger.
func (c *config) sdkLogger() *slog.Logger {
	return slog.New(quiet{c.logger.Handler(), slog.LevelWarn})
}
