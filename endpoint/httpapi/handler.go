// Package httpapi serves an endpoint.Service over HTTP: the JSON API of a
// project's variables, endpoints and endpoint runs, and of queries run
// before they are saved (POST query/), under /api/projects/{project_id}/,
// behind API-key authentication.
//
// New returns an http.Handler that a host mounts in its own server. Every
// answer is JSON, but the rows of a run or a query, which a client may ask
// for in CSV, NDJSON or a format the host registers (Format, WithFormat);
// every failure is {"detail", "code", "attr"} with the status
// of the *endpoint.Error behind it, so a client sees the same messages the Go
// API returns.
//
// Every response carries an X-Request-Id (the client's, when short and
// printable), and every 5xx is logged (WithLogger) with its cause and that
// id. Request bodies with invalid UTF-8 or a key given twice are refused,
// and no error detail repeats more than 200 characters of the request. Runs
// are bounded per project and overall by a limit.Limiter (WithLimiter),
// answered 429 or 503 with Retry-After past a limit.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/limit"
)

// DefaultMaxBodyBytes is the largest request body New accepts unless
// WithMaxBodyBytes says otherwise: 1 MiB, far above any real query
// definition or run request, small enough that a client cannot make the
// server buffer much.
const DefaultMaxBodyBytes = 1 << 20

// DefaultWriteTimeout is how long writing a run's answer may take once it
// is computed (WithWriteTimeout).
const DefaultWriteTimeout = 30 * time.Second

// Option changes how New builds its handler.
type Option func(*config)

type config struct {
	prefix  string
	maxBody int64
	logger  *slog.Logger
	// limiter admits runs; nil admits all. limiterSet tells a WithLimiter(nil)
	// from no WithLimiter at all, which gets the default limits.
	limiter    *limit.Limiter
	limiterSet bool
	// signer verifies embed tokens; nil accepts API keys only.
	signer *embed.Signer
	// writeTimeout bounds the writing of a computed answer.
	writeTimeout time.Duration
	// keys holds the stored API keys (WithKeys); nil accepts none.
	keys *apikey.Keys
	// formats are the answer formats beside JSON (format.go).
	formats formatConfig
	// baseURL is WithBaseURL's.
	baseURL string
}

// WithWriteTimeout sets how long writing an answer may take once it is
// computed (DefaultWriteTimeout when d <= 0): a client that stops reading
// is cut off then. The answer no longer holds a run slot while it is
// written, so a slow reader costs the project nothing but its connection.
func WithWriteTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.writeTimeout = d
		}
	}
}

// WithPrefix serves the API under prefix (for example "/analytics", giving
// /analytics/api/projects/...). Mount the handler at prefix+"/" in the host's
// mux without http.StripPrefix; endpoint_path then shows the full path.
func WithPrefix(prefix string) Option {
	return func(c *config) { c.prefix = strings.TrimSuffix(prefix, "/") }
}

// WithBaseURL names the URL the host serves the API at, as its clients
// reach it (scheme, host and port: "https://api.example.com"; WithPrefix
// is added to it). The OpenAPI documents then name it in their servers
// entry, so that a generated client needs no base URL of its own; without
// it they have none, the host not knowing how it is reached.
func WithBaseURL(u string) Option {
	return func(c *config) { c.baseURL = strings.TrimSuffix(u, "/") }
}

// WithMaxBodyBytes sets the largest request body accepted; a larger one is
// answered 413. n <= 0 keeps DefaultMaxBodyBytes.
func WithMaxBodyBytes(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.maxBody = n
		}
	}
}

// WithLogger sets where every 5xx answer is logged, with its cause (the
// wrapped error, engine detail included, that the client never sees), its
// request id, method and path. The default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithLimiter sets the limits on runs: every POST .../endpoints/{name}/run,
// every POST .../query/ (a query run before it is saved) and every POST
// .../materialize (a refresh computes the query) first takes a slot of l
// for its project, and is answered 429 (a limit of
// the project) or 503 (the global cap) with Retry-After when l refuses. One
// Limiter may serve several handlers, which then share its counts. Without
// this option the handler has its own limiter with limit.Config's defaults
// (3 runs in flight, 240 per minute and 2,400 per hour per project; 64 in
// flight in all); WithLimiter(nil) turns the limits off.
func WithLimiter(l *limit.Limiter) Option {
	return func(c *config) { c.limiter, c.limiterSet = l, true }
}

type handler struct {
	svc  *endpoint.Service
	auth Authenticator
	cfg  config
	mux  *http.ServeMux
	// tokens counts embed tokens' rpm: the limiter, or with the limits
	// off the Service's (endpoint.Service.TokenLimiter), shared with /mcp.
	tokens *limit.Limiter
}

// fallback is the pattern of every method and path, so that unknown routes
// and wrong methods reach notRouted and are answered in JSON rather than by
// the mux's text.
const fallback = "/"

// New returns the HTTP API of svc. Every request must carry an API key that
// auth accepts for the project in its path. It panics if svc or auth is nil,
// as http.Handle does for a nil handler: that is a wiring mistake, not a
// request-time condition.
func New(svc *endpoint.Service, auth Authenticator, opts ...Option) http.Handler {
	if svc == nil {
		panic("httpapi: New called with a nil *endpoint.Service")
	}
	if auth == nil {
		panic("httpapi: New called with a nil Authenticator")
	}
	h := &handler{svc: svc, auth: auth, cfg: config{maxBody: DefaultMaxBodyBytes, logger: slog.Default(), writeTimeout: DefaultWriteTimeout}}
	for _, o := range opts {
		o(&h.cfg)
	}
	if !h.cfg.limiterSet {
		h.cfg.limiter = defaultLimiter()
	}
	h.tokens = h.cfg.limiter
	if h.tokens == nil {
		h.tokens = svc.TokenLimiter()
	}
	h.mux = http.NewServeMux()
	h.routes()
	h.mux.HandleFunc(fallback, h.notRouted)
	return h
}

// apiFunc serves one route for an authorized project; a returned error is
// written as the JSON error body.
type apiFunc func(w http.ResponseWriter, r *http.Request, project string) error

// tokenUse says what an embed token may do on a route.
type tokenUse int

const (
	// tokenRefused: API keys only (403 for a token).
	tokenRefused tokenUse = iota
	// tokenRuns: a token may call the route for the endpoints it names,
	// within its rpm.
	tokenRuns
	// tokenReads: a token may read the route for the endpoints it names;
	// it does not count towards its rpm.
	tokenReads
)

// handle registers fn for method and path (relative to the project root,
// without a trailing slash), with and without the trailing slash.
func (h *handler) handle(method, path string, fn apiFunc) {
	h.register(method, path, h.authorized(fn, tokenRefused))
}

// handleRun is handle for the run route, which embed tokens may call too.
func (h *handler) handleRun(method, path string, fn apiFunc) {
	h.register(method, path, h.authorized(fn, tokenRuns))
}

func (h *handler) register(method, path string, hf http.Handler) {
	full := h.cfg.prefix + "/api/projects/{project_id}/" + path
	h.mux.Handle(method+" "+full, hf)
	h.mux.Handle(method+" "+full+"/{$}", hf)
}

func (h *handler) routes() {
	h.handle(http.MethodPost, "insight_variables", h.createVariable)
	h.handle(http.MethodGet, "insight_variables", h.listVariables)
	h.handle(http.MethodGet, "insight_variables/{id}", h.getVariable)
	h.handle(http.MethodPatch, "insight_variables/{id}", h.updateVariable)
	h.handle(http.MethodDelete, "insight_variables/{id}", h.deleteVariable)

	h.handle(http.MethodPost, "endpoints", h.createEndpoint)
	h.handle(http.MethodGet, "endpoints", h.listEndpoints)
	h.handle(http.MethodGet, "endpoints/{name}", h.getEndpoint)
	h.handle(http.MethodPatch, "endpoints/{name}", h.updateEndpoint)
	h.handle(http.MethodDelete, "endpoints/{name}", h.deleteEndpoint)
	h.handleRun(http.MethodPost, "endpoints/{name}/run", h.runEndpoint)
	h.handle(http.MethodPost, "embed_tokens", h.createEmbedToken)
	h.handle(http.MethodPost, "endpoints/{name}/materialize", h.materializeEndpoint)
	h.handle(http.MethodPost, "query", h.runQuery)
	h.handle(http.MethodGet, "schema", h.getSchema)
	h.opsRoutes()
	h.keyRoutes()
}

// ServeHTTP gives every request an id (sent back in X-Request-Id, logged
// with every 5xx) and answers a panic anywhere below with a 500 JSON body
// instead of a dropped connection.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rw := &responseWriter{ResponseWriter: w}
	id := rw.requestIDOf(r)
	rw.requestID[0] = id
	w.Header()[RequestIDHeader] = rw.requestID[:] // Set, without canonicalizing a canonical key
	r = r.WithContext(endpoint.WithRequestID(r.Context(), id))
	defer h.recoverPanic(rw, r)
	h.mux.ServeHTTP(rw, r)
}

// authorized checks the API key for the path's project before fn runs, so
// that nothing of a project, not even whether a name exists in it, reaches a
// key that may not use it.
func (h *handler) authorized(fn apiFunc, tokens tokenUse) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		project := r.PathValue("project_id")
		// The bearer credential, read once: whether it is a token, a
		// stored key or the Authenticator's is told by its form.
		key, keyErr := bearerKey(r.Header)
		if h.isToken(key, keyErr) {
			if tokens == tokenRefused {
				h.fail(w, r, tokenForbidden())
				return
			}
			c, err := h.authorizeToken(w, key, project)
			if err != nil {
				h.fail(w, r, err)
				return
			}
			// What the token may do; a run's rpm is counted by its
			// admission (admitRun), once the request is known well formed.
			if _, err := h.svc.Admit(r.Context(), endpoint.Budgets{}, endpoint.Caller{Project: project, Token: c},
				endpoint.Ask{Act: endpoint.ActUse, Endpoint: r.PathValue("name"), TokenMay: true}); err != nil {
				h.fail(w, r, err)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), tokenClaims{}, c))
		} else if h.isStoredKey(key, keyErr) {
			kr, err := h.authorizeStoredKey(w, r, key, project)
			if err != nil {
				h.fail(w, r, err)
				return
			}
			r = kr
		} else if err := h.authorize(w, r, key, keyErr, project); err != nil {
			h.fail(w, r, err)
			return
		}
		if err := fn(w, r, project); err != nil {
			h.fail(w, r, err)
		}
	})
}

// probeMethods are the methods tried to tell a wrong method (405) from an
// unknown path (404).
var probeMethods = []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodPut}

// notRouted answers requests that no route takes: 405 with Allow when the
// path exists under another method, 404 otherwise.
func (h *handler) notRouted(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range probeMethods {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		if _, pattern := h.mux.Handler(probe); pattern != fallback {
			allowed = append(allowed, m)
			if m == http.MethodGet {
				allowed = append(allowed, http.MethodHead)
			}
		}
	}
	if len(allowed) == 0 {
		h.fail(w, r, errRouteNotFound())
		return
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	h.fail(w, r, errMethodNotAllowed(r.Method))
}
