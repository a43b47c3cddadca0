package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/openapi"
)

// WithKeys accepts, besides the Authenticator's keys, the stored API keys
// of keys (apikey.Keys): a Bearer credential shaped like one
// (apikey.LooksLikeKey) is looked up there. A stored key may use its own
// project only, and on every route only what its scopes and endpoint list
// allow (see keyRules); its runs, queries and refreshes count against its
// own budget as well as the project's limits: the materialized budget for
// a run the stored table answers, the inline one otherwise
// (endpoint.Service.Admit). The routes .../keys/ create (POST, the secret shown
// once), list (GET) and revoke (DELETE .../keys/{key_id}) keys; they need
// the scope key:admin or one of the Authenticator's keys, which keep full
// access. A stored key never creates a key, nor mints an embed token, that
// may do more than itself, nor revokes one that may (apikey.Grant): 403
// naming the field.
func WithKeys(keys *apikey.Keys) Option {
	return func(c *config) { c.keys = keys }
}

// keyCtx carries the stored key that authenticated a request.
type keyCtx struct{}

// keyOf returns the stored key a request was authenticated with, nil for
// another credential.
func keyOf(ctx context.Context) *apikey.Key {
	k, _ := ctx.Value(keyCtx{}).(*apikey.Key)
	return k
}

// keyRule is what a route asks of a stored key: a scope; named, that the
// key may use the endpoint of the path's {name}; whole, that the key is
// not limited to named endpoints (a write of the project's variables
// concerns every endpoint).
type keyRule struct {
	scope string
	named bool
	whole bool
}

// keyRules maps each route ("METHOD path", the path relative to the
// project root) to what it asks of a stored key. A route missing here is
// refused to every stored key (403): a new route is closed until it is
// given a rule.
var keyRules = map[string]keyRule{
	"POST insight_variables":                      {scope: apikey.ScopeEndpointWrite, whole: true},
	"GET insight_variables":                       {scope: apikey.ScopeEndpointRead},
	"GET insight_variables/{id}":                  {scope: apikey.ScopeEndpointRead},
	"PATCH insight_variables/{id}":                {scope: apikey.ScopeEndpointWrite, whole: true},
	"DELETE insight_variables/{id}":               {scope: apikey.ScopeEndpointWrite, whole: true},
	"POST endpoints":                              {scope: apikey.ScopeEndpointWrite}, // the body's name: createEndpoint
	"GET endpoints":                               {scope: apikey.ScopeEndpointRead},  // filtered: listEndpoints
	"GET endpoints/{name}":                        {scope: apikey.ScopeEndpointRead, named: true},
	"PATCH endpoints/{name}":                      {scope: apikey.ScopeEndpointWrite, named: true}, // and a new name
	"DELETE endpoints/{name}":                     {scope: apikey.ScopeEndpointWrite, named: true},
	"POST endpoints/{name}/run":                   {scope: apikey.ScopeEndpointRead, named: true},
	"POST endpoints/{name}/materialize":           {scope: apikey.ScopeEndpointWrite, named: true},
	"POST embed_tokens":                           {scope: apikey.ScopeKeyAdmin}, // the token's endpoints: createEmbedToken
	"POST query":                                  {scope: apikey.ScopeQueryRun},
	"GET schema":                                  {scope: apikey.ScopeQueryRun},
	"GET endpoints/{name}/versions":               {scope: apikey.ScopeEndpointRead, named: true},
	"GET endpoints/{name}/versions/{version}":     {scope: apikey.ScopeEndpointRead, named: true},
	"GET endpoints/{name}/openapi.json":           {scope: apikey.ScopeEndpointRead, named: true},
	"GET endpoints/{name}/logs":                   {scope: apikey.ScopeEndpointRead, named: true},
	"GET endpoints/{name}/materialization_status": {scope: apikey.ScopeEndpointRead, named: true},
	"POST keys":                                   {scope: apikey.ScopeKeyAdmin},
	"GET keys":                                    {scope: apikey.ScopeKeyAdmin},
	"DELETE keys/{key_id}":                        {scope: apikey.ScopeKeyAdmin},
	"GET keys/openapi.json":                       {scope: apikey.ScopeKeyAdmin},
}

// keyRoutes registers the routes of keys.
func (h *handler) keyRoutes() {
	h.handle(http.MethodPost, "keys", h.createKey)
	h.handle(http.MethodGet, "keys", h.listKeys)
	h.handle(http.MethodDelete, "keys/{key_id}", h.revokeKey)
	h.handle(http.MethodGet, "keys/openapi.json", h.keysOpenAPI)
}

// keysOpenAPI answers the OpenAPI document of the key routes.
func (h *handler) keysOpenAPI(w http.ResponseWriter, r *http.Request, _ string) error {
	if h.cfg.keys == nil {
		return keysDisabled()
	}
	return h.reply(w, r, http.StatusOK, openapi.KeysDocument(h.cfg.prefix))
}

// isStoredKey reports whether the request's bearer credential (key, or
// err from bearerKey) is to be looked up among the stored keys.
func (h *handler) isStoredKey(key string, err error) bool {
	return h.cfg.keys != nil && err == nil && apikey.LooksLikeKey(key)
}

// routeOf is the route of r as keyRoutes names it: its method and its
// pattern without the prefix, the project root and a trailing slash.
func (h *handler) routeOf(r *http.Request) string {
	method, path, _ := strings.Cut(r.Pattern, " ")
	path = strings.TrimPrefix(path, h.cfg.prefix+"/api/projects/{project_id}/")
	path = strings.TrimSuffix(path, "/{$}")
	return method + " " + path
}

// authorizeStoredKey authenticates secret, checks that it is a key of
// project and that the route allows it, and returns the request with the
// key in its context.
func (h *handler) authorizeStoredKey(w http.ResponseWriter, r *http.Request, secret, project string) (*http.Request, error) {
	key, err := h.cfg.keys.Authenticate(r.Context(), secret)
	if err != nil {
		if errors.Is(err, endpoint.ErrUnauthorized) {
			w.Header().Set("WWW-Authenticate", invalidToken)
		}
		return nil, err
	}
	// Who the key is and what it may do, in the one admission
	// (endpoint.Service.Admit); a route without a rule is checked for the
	// project only, then refused.
	rule, ok := keyRules[h.routeOf(r)]
	ask := endpoint.Ask{Act: endpoint.ActUse, Scope: rule.scope, Whole: rule.whole}
	if rule.named {
		ask.Endpoint = r.PathValue("name")
	}
	if _, err := h.svc.Admit(r.Context(), endpoint.Budgets{}, endpoint.Caller{Project: project, Key: &key}, ask); err != nil {
		return nil, err
	}
	if !ok {
		return nil, endpoint.NewError(endpoint.ErrForbidden, endpoint.CodeForbidden, "",
			"This route is not open to stored API keys; it needs one of the server's own keys.")
	}
	return r.WithContext(context.WithValue(r.Context(), keyCtx{}, &key)), nil
}

// grantOf is the Grant of the stored key a request was authenticated
// with, the most it may give (a key it creates, a token it mints) or
// revoke; nil for the server's own keys, which may give anything.
func grantOf(ctx context.Context) *apikey.Grant {
	k := keyOf(ctx)
	if k == nil {
		return nil
	}
	g := k.Grant()
	return &g
}

// keyAllowsName refuses a key limited to named endpoints the endpoint
// name; nil key (another credential) is allowed everything.
func keyAllowsName(key *apikey.Key, name string) error {
	if key == nil || key.AllowsEndpoint(name) {
		return nil
	}
	return endpoint.NewError(endpoint.ErrForbidden, endpoint.CodeForbidden, "",
		fmt.Sprintf("This API key may not use endpoint '%s'.", clip(name, maxEchoRunes)))
}

// visibleTo keeps of list the endpoints key may use.
func visibleTo(key *apikey.Key, list []endpoint.Endpoint) []endpoint.Endpoint {
	if key == nil || !key.Restricted() {
		return list
	}
	return slices.DeleteFunc(list, func(e endpoint.Endpoint) bool { return !key.AllowsEndpoint(e.Name) })
}

// admitRun admits what r asks (a run, a query or a refresh) through the
// one admission, endpoint.Service.Admit: the caller's credential from r's
// context, the budgets of this handler (the token's rpm, the stored key's
// budget, the project's slot). A refusal by a budget sets Retry-After on
// w. The caller releases the Admission once the answer is computed.
func (h *handler) admitRun(w http.ResponseWriter, r *http.Request, project string, ask endpoint.Ask) (endpoint.Admission, error) {
	c := endpoint.Caller{Project: project, Key: keyOf(r.Context()), Token: claimsOf(r.Context())}
	b := endpoint.Budgets{
		Keys:      h.cfg.keys,
		TokenRate: TokenRate(h.tokens),
		Slot:      func(project string) (func(), error) { return h.admit(w, project) },
	}
	adm, err := h.svc.Admit(r.Context(), b, c, ask)
	if err != nil {
		// Declared here, not before the check: errors.As moves it to
		// the heap, an allocation an admitted run need not make.
		var le *limit.Error
		if errors.As(err, &le) && w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(le.RetryAfter)))
		}
	}
	return adm, err
}

// keysDisabled answers the key routes of a server without WithKeys.
func keysDisabled() error {
	return endpoint.NewError(endpoint.ErrNotFound, endpoint.CodeNotFound, "", "Stored API keys are not enabled on this server.")
}

// createdKey is the answer of POST .../keys/: the key and, this once, its
// secret.
type createdKey struct {
	apikey.Key
	Secret string `json:"key"`
}

func (h *handler) createKey(w http.ResponseWriter, r *http.Request, project string) error {
	if h.cfg.keys == nil {
		return keysDisabled()
	}
	var req apikey.CreateRequest
	if err := h.decode(w, r, &req, false); err != nil {
		return err
	}
	k, secret, err := h.cfg.keys.CreateAs(r.Context(), grantOf(r.Context()), project, req)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return h.reply(w, r, http.StatusCreated, createdKey{Key: k, Secret: secret})
}

func (h *handler) listKeys(w http.ResponseWriter, r *http.Request, project string) error {
	if h.cfg.keys == nil {
		return keysDisabled()
	}
	list, err := h.cfg.keys.List(r.Context(), project)
	if err != nil {
		return err
	}
	return h.reply(w, r, http.StatusOK, listBody[apikey.Key]{Results: list})
}

func (h *handler) revokeKey(w http.ResponseWriter, r *http.Request, project string) error {
	if h.cfg.keys == nil {
		return keysDisabled()
	}
	if err := h.cfg.keys.RevokeAs(r.Context(), grantOf(r.Context()), project, r.PathValue("key_id")); err != nil {
		return err
	}
	noContent(w)
	return nil
}
