package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names of the tools that are not endpoints. Endpoint names start with a
// letter, so none can be one of these.
const (
	ListTool  = "_list_endpoints"
	GetTool   = "_get_endpoint"
	QueryTool = "_run_query"
)

// tools are the tools of one caller, served by one sdk.Server.
type tools struct {
	svc    *endpoint.Service
	cfg    *config
	caller caller
	srv    *sdk.Server

	mu        sync.Mutex
	endpoints map[string]string // tool name -> JSON of the tool, as last added
}

// newServer returns the server of c's tools. listChanged says whether
// the server tells its sessions that the list changed (a long-lived stdio
// session); a stateless HTTP server lives for one request.
func newServer(svc *endpoint.Service, cfg *config, c caller, listChanged bool) (*sdk.Server, *tools) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "endpointkit", Title: "endpointkit endpoints", Version: "1"}, &sdk.ServerOptions{
		Logger:       cfg.sdkLogger(),
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: listChanged}},
		Instructions: "Each tool not starting with '_' runs the saved analytics endpoint of its name; its input is the run request " +
			"({\"variables\": {...}} and options). " + ListTool + " lists them.",
	})
	t := &tools{svc: svc, cfg: cfg, caller: c, srv: srv, endpoints: map[string]string{}}
	t.addFixed()
	srv.AddReceivingMiddleware(t.middleware)
	return srv, t
}

// middleware reads the endpoints again before each tools/list, and calls
// every tool through call, so that a tool called before any list (a
// stateless request) runs as a listed one does, and a call of a tool the
// caller may not run is refused in the HTTP API's words (a tool error), not
// as an unknown tool.
func (t *tools) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "tools/list":
			if err := t.sync(ctx); err != nil {
				return nil, err
			}
		case "tools/call":
			if r, ok := req.(*sdk.CallToolRequest); ok && r.Params != nil {
				return t.call(ctx, r.Params.Name, r.Params.Arguments), nil
			}
		}
		return next(ctx, method, req)
	}
}

var emptyObject = map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}

// addFixed adds the tools that are not endpoints: the list for every
// caller, the others for API keys.
func (t *tools) addFixed() {
	handler := func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return t.call(ctx, r.Params.Name, r.Params.Arguments), nil
	}
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true}
	t.srv.AddTool(&sdk.Tool{Name: ListTool, InputSchema: emptyObject, Annotations: readOnly,
		Description: "Lists the endpoints you may run, each a tool of its name: name, description, whether it is materialized."}, handler)
	if t.caller.token != nil {
		return
	}
	t.srv.AddTool(&sdk.Tool{Name: GetTool, Annotations: readOnly,
		Description: "Reads an endpoint's definition (its query, variables, settings), its materialization verdict (can_materialize, reason) and its materialization status.",
		InputSchema: map[string]any{"type": "object", "additionalProperties": false, "required": []any{"name"},
			"properties": map[string]any{"name": map[string]any{"type": "string", "description": "The endpoint's name."}}}}, handler)
	t.srv.AddTool(&sdk.Tool{Name: QueryTool, Annotations: readOnly, Description: queryToolDescription, InputSchema: queryToolSchema()}, handler)
}

// sync makes the endpoint tools those of the endpoints the caller may run
// now: one per active endpoint (of the token's, for a token), its schema
// the OpenAPI request schema. An endpoint that cannot be described (its
// version no longer compiles, the database failed) is listed with its
// error (brokenTool) and logged.
func (t *tools) sync(ctx context.Context) error {
	list, err := t.svc.List(ctx, t.caller.project)
	if err != nil {
		t.logFailure(ctx, "listing endpoints", err)
		return fmt.Errorf("listing endpoints: %s", asError(err).Detail)
	}
	want := map[string]*sdk.Tool{}
	for _, e := range list {
		if !t.visible(e) {
			continue
		}
		tool, err := t.endpointTool(ctx, e)
		if err != nil {
			t.cfg.logger.WarnContext(ctx, "mcp: endpoint listed as unable to run", "project", t.caller.project, "endpoint", e.Name, "error", err)
			tool = brokenTool(e, err)
		}
		want[tool.Name] = tool
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var gone []string
	for name := range t.endpoints {
		if want[name] == nil {
			gone = append(gone, name)
			delete(t.endpoints, name)
		}
	}
	if len(gone) > 0 {
		t.srv.RemoveTools(gone...)
	}
	handler := func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return t.call(ctx, r.Params.Name, r.Params.Arguments), nil
	}
	for name, tool := range want {
		b, _ := json.Marshal(tool)
		if t.endpoints[name] == string(b) {
			continue // unchanged: no list_changed notice
		}
		t.endpoints[name] = string(b)
		t.srv.AddTool(tool, handler)
	}
	return nil
}

// visible reports whether the caller sees e: an active endpoint, named by
// the token when the caller has one.
func (t *tools) visible(e endpoint.Endpoint) bool {
	return e.IsActive && (t.caller.token == nil || t.caller.token.Allows(e.Name)) &&
		(t.caller.key == nil || t.caller.key.AllowsEndpoint(e.Name))
}

// endpointTool is e's tool.
func (t *tools) endpointTool(ctx context.Context, e endpoint.Endpoint) (*sdk.Tool, error) {
	rs, err := t.svc.RunSchema(ctx, t.caller.project, e.Name, 0)
	if err != nil {
		return nil, err
	}
	desc := rs.Description
	if desc == "" && rs.Kind != endpoint.KindSQL {
		desc = describeInsight(e.Query)
	}
	if desc == "" {
		desc = "Runs endpoint " + rs.Name + "."
	}
	return &sdk.Tool{
		Name:        rs.Name,
		Title:       "Endpoint " + rs.Name,
		Description: desc,
		InputSchema: t.toolSchema(rs),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, nil
}

// fixedNames are the variables the caller's token fixes, sorted.
func (t *tools) fixedNames() []string {
	if t.caller.token == nil {
		return nil
	}
	var names []string
	for n := range t.caller.token.Fixed {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// call runs tool name with args and answers its result, or its refusal
// as a tool error.
func (t *tools) call(ctx context.Context, name string, args json.RawMessage) *sdk.CallToolResult {
	var v any
	var err error
	switch name {
	case ListTool:
		v, err = t.list(ctx, args)
	case GetTool:
		v, err = t.get(ctx, args)
	case QueryTool:
		v, err = t.queryTool(ctx, args)
	default:
		v, err = t.run(ctx, name, args)
	}
	if err != nil {
		return t.toolError(ctx, name, err)
	}
	return t.toolResult(ctx, name, v)
}

// decode reads a tool's arguments as the HTTP API reads a request body;
// no arguments are an empty object.
func decode(args json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	return httpapi.DecodeJSON(args, dst)
}

// admit takes a run slot of the caller's project, as an HTTP run does.
func (t *tools) admit() (func(), error) {
	if t.cfg.limiter == nil {
		return func() {}, nil
	}
	release, err := t.cfg.limiter.Acquire(t.caller.project)
	var le *limit.Error
	if errors.As(err, &le) {
		return nil, httpapi.LimitError(le)
	}
	return release, err
}

// budgets are the counters a run through the tools is charged to: the
// token's rpm as this handler counts it, the stored key's budget, the
// project's slot.
func (t *tools) budgets() endpoint.Budgets {
	return endpoint.Budgets{
		Keys:      t.cfg.keys,
		TokenRate: httpapi.TokenRate(t.cfg.tokens),
		Slot:      func(string) (func(), error) { return t.admit() },
	}
}

// who is the caller as the one admission (endpoint.Service.Admit) takes
// it.
func (t *tools) who() endpoint.Caller {
	return endpoint.Caller{Project: t.caller.project, Key: t.caller.key, Token: t.caller.token}
}

// may checks, through the one admission, that the caller may make ask,
// which costs no budget.
func (t *tools) may(ctx context.Context, ask endpoint.Ask) error {
	ask.Act = endpoint.ActUse
	_, err := t.svc.Admit(ctx, endpoint.Budgets{}, t.who(), ask)
	return err
}

// run runs the endpoint name as POST .../endpoints/{name}/run does,
// admitted as it is: what the caller may do before its arguments are
// read, its budgets once they are known well formed.
func (t *tools) run(ctx context.Context, name string, args json.RawMessage) (any, error) {
	if err := t.may(ctx, endpoint.Ask{Scope: apikey.ScopeEndpointRead, Endpoint: name, TokenMay: true}); err != nil {
		return nil, err
	}
	var req endpoint.RunRequest
	if err := decode(args, &req); err != nil {
		return nil, err
	}
	adm, err := t.svc.Admit(ctx, t.budgets(), t.who(), endpoint.Ask{Act: endpoint.ActRun, Endpoint: name, Run: &req})
	if err != nil {
		return nil, err
	}
	defer adm.Release()
	return t.svc.Run(ctx, t.caller.project, name, req)
}

// query runs an unsaved query as POST query/ does.
func (t *tools) query(ctx context.Context, args json.RawMessage) (any, error) {
	if err := t.may(ctx, endpoint.Ask{Scope: apikey.ScopeQueryRun}); err != nil {
		return nil, err
	}
	var req endpoint.QueryRequest
	if err := decode(args, &req); err != nil {
		return nil, err
	}
	adm, err := t.svc.Admit(ctx, t.budgets(), t.who(), endpoint.Ask{Act: endpoint.ActQuery, Query: &req})
	if err != nil {
		return nil, err
	}
	defer adm.Release()
	return t.svc.RunQuery(ctx, t.caller.project, req)
}

// endpointSummary is an endpoint as _list_endpoints shows it.
type endpointSummary struct {
	Name           string `json:"name"`
	Description    string `json:"description"`
	IsMaterialized bool   `json:"is_materialized"`
	CurrentVersion int    `json:"current_version"`
}

func (t *tools) list(ctx context.Context, args json.RawMessage) (any, error) {
	if t.caller.key != nil {
		// A token sees the endpoints it names; a key needs the scope.
		if err := t.may(ctx, endpoint.Ask{Scope: apikey.ScopeEndpointRead}); err != nil {
			return nil, err
		}
	}
	var none struct{}
	if err := decode(args, &none); err != nil {
		return nil, err
	}
	list, err := t.svc.List(ctx, t.caller.project)
	if err != nil {
		return nil, err
	}
	out := []endpointSummary{}
	for _, e := range list {
		if t.visible(e) {
			out = append(out, endpointSummary{Name: e.Name, Description: e.Description, IsMaterialized: e.IsMaterialized, CurrentVersion: e.CurrentVersion})
		}
	}
	return map[string]any{"results": out}, nil
}

func (t *tools) get(ctx context.Context, args json.RawMessage) (any, error) {
	if err := t.may(ctx, endpoint.Ask{Scope: apikey.ScopeEndpointRead}); err != nil {
		return nil, err
	}
	var req struct {
		Name string `json:"name"`
	}
	if err := decode(args, &req); err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, endpoint.NewError(endpoint.ErrInvalid, endpoint.CodeInvalidInput, "name", "name is required: the endpoint's name.")
	}
	if err := t.may(ctx, endpoint.Ask{Scope: apikey.ScopeEndpointRead, Endpoint: req.Name}); err != nil {
		return nil, err
	}
	e, err := t.svc.Get(ctx, t.caller.project, req.Name)
	if err != nil {
		return nil, err
	}
	status, err := t.svc.MaterializationStatus(ctx, t.caller.project, req.Name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"endpoint": e, "materialization_status": status}, nil
}

// toolResult answers v as the HTTP API would: its JSON, as structured
// content and as text.
func (t *tools) toolResult(ctx context.Context, name string, v any) *sdk.CallToolResult {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		var unsupported *json.UnsupportedValueError
		if errors.As(err, &unsupported) {
			return t.toolError(ctx, name, &endpoint.Error{Status: http.StatusBadGateway, Code: httpapi.CodeResultNotEncodable,
				Detail: fmt.Sprintf("The query result cannot be encoded as JSON: unsupported value %s.", unsupported.Str), Err: endpoint.ErrExecution})
		}
		return t.toolError(ctx, name, err)
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}
}

// errorBodyOf is the HTTP API's error body, plus the status it would have
// answered with.
type errorBodyOf struct {
	Detail string  `json:"detail"`
	Code   string  `json:"code"`
	Attr   *string `json:"attr"`
	Status int     `json:"status"`
}

func errorBody(e *endpoint.Error) errorBodyOf {
	b := errorBodyOf{Detail: e.Detail, Code: e.Code, Status: endpoint.StatusOf(e)}
	if e.Attr != "" {
		attr := e.Attr
		b.Attr = &attr
	}
	return b
}

// asError is err as the HTTP API shows it: an *endpoint.Error as it is,
// anything else a generic 500.
func asError(err error) *endpoint.Error {
	var e *endpoint.Error
	if errors.As(err, &e) {
		return e
	}
	return &endpoint.Error{Status: http.StatusInternalServerError, Code: httpapi.CodeServerError, Detail: "Internal server error.", Err: err}
}

// toolError answers a refusal as a tool error whose text is the HTTP
// answer's detail; a 5xx is logged with its cause, as the HTTP API logs
// it.
func (t *tools) toolError(ctx context.Context, name string, err error) *sdk.CallToolResult {
	e := asError(err)
	if endpoint.StatusOf(e) >= 500 {
		t.logFailure(ctx, "tool "+name, err)
	}
	b, _ := json.Marshal(errorBody(e))
	return &sdk.CallToolResult{
		IsError:           true,
		Content:           []sdk.Content{&sdk.TextContent{Text: e.Detail}},
		StructuredContent: json.RawMessage(b),
	}
}

func (t *tools) logFailure(ctx context.Context, what string, err error) {
	e := asError(err)
	cause := err
	if e.Err != nil {
		cause = e.Err
	}
	t.cfg.logger.ErrorContext(ctx, "mcp: server error", "what", what, "project", t.caller.project,
		"status", endpoint.StatusOf(e), "code", e.Code, "detail", e.Detail, "cause", cause)
}
