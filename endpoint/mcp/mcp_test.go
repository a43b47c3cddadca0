package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/mcp"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	keyP2  = "mcp-key-project-2"
	marker = "p2mark"
	// secretSQL reads a table the access policy does not list.
	secretSQL = "SELECT amount FROM salaries"
)

// fixture is the HTTP API (env.Server) and /mcp over one Service on
// SQLite, behind the same keys and embed tokens: project 1 with the
// endpoints by_event (one String variable) and totals (none), project 2
// with marked rows and the endpoint secret.
type fixture struct {
	env    *endpointtest.Env
	mcp    *httptest.Server
	signer *embed.Signer
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixtureLimiter(t, nil)
}

// newFixtureLimiter is newFixture whose HTTP API and /mcp share the limits
// of lim (nil: none).
func newFixtureLimiter(t testing.TB, lim *limit.Limiter) *fixture {
	t.Helper()
	tokenKeys := &embed.StaticKeys{}
	require.NoError(t, tokenKeys.Add("", "k1", []byte("0123456789abcdef-mcp")))
	signer := &embed.Signer{Keys: tokenKeys}
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	require.NoError(t, err)
	env := endpointtest.New(t, endpointtest.WithDemoEvents(400),
		endpointtest.WithConfig(func(c *endpoint.Config) { c.Access = policy }),
		endpointtest.WithHTTPOptions(httpapi.WithEmbedTokens(signer), httpapi.WithLimiter(lim)))
	ctx := context.Background()
	_, err = env.DB.Exec("CREATE TABLE salaries (amount INTEGER); INSERT INTO salaries VALUES (100)")
	require.NoError(t, err)
	for i := range 30 {
		_, err = env.DB.Exec("INSERT INTO events (project_id, uuid, event, distinct_id, timestamp, properties) VALUES ('2', ?, '$pageview', ?, '2025-01-01 00:00:00', '{}')",
			marker+"-"+string(rune('a'+i%26))+string(rune('a'+i/26)), marker)
		require.NoError(t, err)
	}
	v, err := env.Service.CreateVariable(ctx, "1", variable.Variable{Name: "Event", Type: variable.String})
	require.NoError(t, err)
	_, err = env.Service.Create(ctx, "1", endpoint.CreateRequest{Name: "by_event", Description: "Events and users of one event name.",
		Query: &endpoint.Query{Kind: endpoint.KindSQL,
			SQL:       "SELECT event, count(*) AS events, count(DISTINCT distinct_id) AS users FROM events WHERE event = {variables.event} GROUP BY event",
			Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "event"}}}})
	require.NoError(t, err)
	_, err = env.Service.Create(ctx, "1", endpoint.CreateRequest{Name: "totals",
		Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT count(*) AS events, min(distinct_id) AS first_user, max(uuid) AS last_uuid FROM events"}})
	require.NoError(t, err)
	_, err = env.Service.Create(ctx, "2", endpoint.CreateRequest{Name: "secret",
		Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT distinct_id FROM events"}})
	require.NoError(t, err)

	keys := httpapi.NewKeyring()
	require.NoError(t, keys.Add(env.Key, "1"))
	require.NoError(t, keys.Add(keyP2, "2"))
	srv := httptest.NewServer(mcp.Handler(env.Service, keys, mcp.WithEmbedTokens(signer), mcp.WithLimiter(lim), mcp.WithDefaultProject("1")))
	t.Cleanup(srv.Close)
	return &fixture{env: env, mcp: srv, signer: signer}
}

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connectHTTP opens an SDK client session to /mcp with credential cred.
func (f *fixture) connectHTTP(t *testing.T, cred, query string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint: f.mcp.URL + "/mcp" + query, HTTPClient: &http.Client{Transport: bearer{cred, http.DefaultTransport}}, MaxRetries: -1,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// connectMemory opens an SDK client session to Server over the SDK's
// in-memory transport, as a stdio host serves it.
func (f *fixture) connectMemory(t *testing.T, project string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	srv := mcp.Server(f.env.Service, project, mcp.WithLimiter(nil))
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	c := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, nil)
	s, err := c.Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(); ss.Close(); cancel() })
	return s
}

// token mints an embed token of project 1.
func (f *fixture) token(t *testing.T, endpoints []string, fixed map[string]any) string {
	t.Helper()
	tok, err := f.env.Service.MintEmbedToken(context.Background(), f.signer, "1", embed.Claims{Endpoints: endpoints, Fixed: fixed}, time.Hour)
	require.NoError(t, err)
	return tok
}

// httpDo sends a request to the HTTP API and decodes its JSON answer.
func (f *fixture) httpDo(t *testing.T, method, path, cred, body string) (int, map[string]any) {
	t.Helper()
	status, raw := endpointtest.Fetch(t, method, f.env.Server.URL+path, body, map[string]string{
		"Content-Type": "application/json", "Authorization": "Bearer " + cred})
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	return status, out
}

// call calls a tool with args given as JSON text.
func call(t *testing.T, s *sdk.ClientSession, name, args string) *sdk.CallToolResult {
	t.Helper()
	var a any
	require.NoError(t, json.Unmarshal([]byte(args), &a))
	res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: a})
	require.NoError(t, err, "a tool's refusal is a tool error, never a protocol")
	return res
}

// structured is a tool result's structured content as a JSON object.
func structured(t *testing.T, r *sdk.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func text(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// stable drops what differs between two runs of the same request.
func stable(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "execution_id", "is_cached", "last_refresh", "statistics":
		default:
			out[k] = v
		}
	}
	return out
}

func toolNames(t *testing.T, s *sdk.ClientSession) map[string]*sdk.Tool {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	require.NoError(t, err)
	out := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

func keys[M ~map[string]V, V any](m M) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// sameNames reports whether got and want hold the same names, each as many
// times, in any order.
func sameNames(got, want []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want)))
}

// transports are the two ways an agent reaches the tools of project 1
// with its API key.
func (f *fixture) transports(t *testing.T) map[string]*sdk.ClientSession {
	return map[string]*sdk.ClientSession{
		"streamable HTTP":            f.connectHTTP(t, f.env.Key, ""),
		"in-memory (stdio's server)": f.connectMemory(t, "1"),
	}
}

func TestToolsPerCredential(t *testing.T) {
	f := newFixture(t)
	for name, s := range f.transports(t) {
		got, want := keys(toolNames(t, s)), []string{"by_event", "totals", mcp.ListTool, mcp.GetTool, mcp.QueryTool}
		assert.True(t, sameNames(got, want), "%s: tools %q, want %q in any order", name, got, want)
	}
	got, want := keys(toolNames(t, f.connectHTTP(t, keyP2, "?project=2"))), []string{"secret", mcp.ListTool, mcp.GetTool, mcp.QueryTool}
	assert.True(t, sameNames(got, want), "project 2 over HTTP: tools %q, want %q in any order", got, want)
	if got, want := keys(toolNames(t, f.connectMemory(t, "2"))), []string{"secret", mcp.ListTool, mcp.GetTool, mcp.QueryTool}; !sameNames(got, want) {
		t.Errorf("project 2 in memory: tools %q, want %q in any order", got, want)
	}

	tok := f.token(t, []string{"by_event"}, map[string]any{"event": "purchase"})
	tools := toolNames(t, f.connectHTTP(t, tok, ""))
	if got, want := keys(tools), []string{"by_event", mcp.ListTool}; !sameNames(got, want) {
		t.Errorf("embed token: tools %q, want %q in any order", got, want)
	}
	vars := tools["by_event"].InputSchema.(map[string]any)["properties"].(map[string]any)["variables"].(map[string]any)
	if got, _ := vars["properties"].(map[string]any); vars["properties"] != nil && (got == nil || len(got) != 0) {
		t.Errorf("the token's fixed variable is not in its schema: properties = %v, want none", vars["properties"])
	}
	_, ok := vars["required"]
	assert.False(t, ok, "key %v in %v", "required", vars)
	assert.Equal(t, "Events and users of one event name.", tools["by_event"].Description)
}

func TestSchemasAreTheOpenAPIRequestSchemas(t *testing.T) {
	f := newFixture(t)
	tok := f.token(t, []string{"by_event"}, map[string]any{"event": "purchase"})
	for _, c := range []struct {
		cred string
		s    *sdk.ClientSession
	}{{f.env.Key, f.connectHTTP(t, f.env.Key, "")}, {f.env.Key, f.connectMemory(t, "1")}, {tok, f.connectHTTP(t, tok, "")}} {
		for name, tool := range toolNames(t, c.s) {
			b, err := json.Marshal(tool.InputSchema)
			require.NoError(t, err)
			var schema jsonschema.Schema
			require.NoError(t, json.Unmarshal(b, &schema), "%v", name)
			_, err = schema.Resolve(nil)
			require.NoError(t, err, "%s: a valid JSON Schema", name)
			if strings.HasPrefix(name, "_") {
				continue
			}
			status, doc := f.httpDo(t, "GET", "/api/projects/1/endpoints/"+name+"/openapi.json", c.cred, "")
			require.Equal(t, http.StatusOK, status)
			want := doc["paths"].(map[string]any)["/api/projects/1/endpoints/"+name+"/run"].(map[string]any)["post"].(map[string]any)["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
			// A tool leaves out what takes one value (format: it answers
			// JSON; version: the current one), and says the rest in fewer
			// words (TestToolsAnAgentNeedNotGuess): its types and bounds
			// are the document's.
			w := want.(map[string]any)
			props := w["properties"].(map[string]any)
			delete(props, "format")
			delete(props, "version")
			if req, ok := w["required"].([]any); ok {
				req = slices.DeleteFunc(req, func(r any) bool { return r == "version" })
				if len(req) == 0 {
					delete(w, "required")
				} else {
					w["required"] = req
				}
			}
			delete(props["refresh"].(map[string]any), "description")
			delete(props["debug"].(map[string]any), "description")
			for _, v := range props["variables"].(map[string]any)["properties"].(map[string]any) {
				if _, date := v.(map[string]any)["anyOf"]; date {
					delete(v.(map[string]any), "anyOf")
					delete(v.(map[string]any), "description")
				}
			}
			var got any
			require.NoError(t, json.Unmarshal(b, &got))
			gp := got.(map[string]any)["properties"].(map[string]any)
			delete(gp["refresh"].(map[string]any), "description")
			delete(gp["debug"].(map[string]any), "description")
			for _, v := range gp["variables"].(map[string]any)["properties"].(map[string]any) {
				if v.(map[string]any)["example"] != nil {
					delete(v.(map[string]any), "description")
				}
			}
			assert.Equal(t, want, got, "%v", name)
		}
	}
}

// TestRunEqualsHTTP: a run through a tool answers what the HTTP run does,
// as structured content and as its text, without project 2's rows.
func TestRunEqualsHTTP(t *testing.T) {
	f := newFixture(t)
	for name, s := range f.transports(t) {
		for _, c := range []struct{ endpoint, body string }{
			{"by_event", `{"variables": {"event": "$pageview"}}`},
			{"by_event", `{"variables": {"event": "purchase"}, "refresh": "force"}`},
			{"totals", `{}`},
			{"totals", `{"limit": 1, "debug": true}`},
		} {
			res := call(t, s, c.endpoint, c.body)
			if res.IsError {
				t.Fatalf("%s: %s: res.IsError is true", name, text(res))
			}
			status, want := f.httpDo(t, "POST", "/api/projects/1/endpoints/"+c.endpoint+"/run", f.env.Key, c.body)
			require.Equal(t, http.StatusOK, status)
			got := structured(t, res)
			if d, ok := want["debug"].(map[string]any); ok {
				delete(d, "render_ms")
				delete(d, "execute_ms")
				delete(got["debug"].(map[string]any), "render_ms")
				delete(got["debug"].(map[string]any), "execute_ms")
			}
			if got, want := stable(got), stable(want); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: stable(got) = %+v, want %+v", name, c.endpoint, got, want)
			}
			var fromText map[string]any
			require.NoError(t, json.Unmarshal([]byte(text(res)), &fromText))
			assert.Equal(t, got["results"], fromText["results"])
			assert.NotContains(t, text(res), marker)
		}
	}
}

// refusal is what a tool error or an HTTP error body says.
type refusal struct {
	Detail string
	Code   string
	Status int
}

func toolRefusal(t *testing.T, r *sdk.CallToolResult) refusal {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want a tool error, got %s: r.IsError is false", text(r))
	}
	m := structured(t, r)
	got, want := text(r), m["detail"]
	assert.Equal(t, want, got, "text(r)")
	return refusal{m["detail"].(string), m["code"].(string), int(m["status"].(float64))}
}

// TestRefusalsEqualHTTP: the variable rules, other projects and forbidden
// tables refuse a tool call with the HTTP answer's detail, as a tool
// error.
func TestRefusalsEqualHTTP(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		tool, path, body string
		status           int
	}{
		{"by_event", "endpoints/by_event/run", `{"variables": {}}`, 400},
		{"by_event", "endpoints/by_event/run", `{}`, 400},
		{"by_event", "endpoints/by_event/run", `{"variables": {"event": "$pageview", "country": "FR"}}`, 400},
		{"by_event", "endpoints/by_event/run", `{"variables": {"event": ["a", "b"]}}`, 400},
		{"by_event", "endpoints/by_event/run", `{"variables": {"event": "x"}, "limit": "ten"}`, 400},
		{"by_event", "endpoints/by_event/run", `{"variabels": {"event": "x"}}`, 400},
		{"by_event", "endpoints/by_event/run", `{"variables": {"event": "x"}, "refresh": "sometimes"}`, 400},
		{"totals", "endpoints/totals/run", `{"version": 9}`, 404},
		{"secret", "endpoints/secret/run", `{}`, 404},
		{mcp.QueryTool, "query", `{"query": {"kind": "HogQLQuery", "query": "` + secretSQL + `"}}`, 400},
		{mcp.QueryTool, "query", `{"query": {"kind": "HogQLQuery", "query": "SELECT 1 FROM"}}`, 400},
		{mcp.QueryTool, "query", `{}`, 400},
	}
	for name, s := range f.transports(t) {
		for _, c := range cases {
			got := toolRefusal(t, call(t, s, c.tool, c.body))
			status, body := f.httpDo(t, "POST", "/api/projects/1/"+c.path, f.env.Key, c.body)
			want := refusal{body["detail"].(string), body["code"].(string), status}
			if got, want := status, c.status; got != want {
				t.Errorf("%s %s: status = %v, want %v", c.path, c.body, got, want)
			}
			assert.Equal(t, want, got, "%s: %s %s", name, c.tool, c.body)
		}
	}
	// _get_endpoint reads project 1's endpoints only.
	s := f.connectHTTP(t, f.env.Key, "")
	got := toolRefusal(t, call(t, s, mcp.GetTool, `{"name": "secret"}`))
	status, body := f.httpDo(t, "GET", "/api/projects/1/endpoints/secret", f.env.Key, "")
	assert.Equal(t, refusal{body["detail"].(string), body["code"].(string), status}, got)
	res := call(t, s, mcp.GetTool, `{"name": "by_event"}`)
	if res.IsError {
		t.Fatalf("%v: res.IsError is true", text(res))
	}
	ep := structured(t, res)["endpoint"].(map[string]any)
	assert.Equal(t, "by_event", ep["name"])
	if m, ok := ep["materialization"].(map[string]any); !ok {
		t.Errorf("ep[\"materialization\"] = %#v, want an object", ep["materialization"])
	} else if _, ok := m["can_materialize"]; !ok {
		t.Errorf("ep[\"materialization\"] = %v, want a key %q", m, "can_materialize")
	}
}

// TestEmbedTokenOverMCP: a token runs its endpoints with its fixed values
// and nothing else, refused as over HTTP.
func TestEmbedTokenOverMCP(t *testing.T) {
	f := newFixture(t)
	tok := f.token(t, []string{"by_event"}, map[string]any{"event": "purchase"})
	s := f.connectHTTP(t, tok, "")
	res := call(t, s, "by_event", `{}`)
	if res.IsError {
		t.Fatalf("%v: res.IsError is true", text(res))
	}
	status, want := f.httpDo(t, "POST", "/api/projects/1/endpoints/by_event/run", tok, `{}`)
	require.Equal(t, http.StatusOK, status)
	if got, want := stable(structured(t, res)), stable(want); !reflect.DeepEqual(got, want) {
		t.Errorf("stable(structured(t, res)) = %+v, want %+v", got, want)
	}
	assert.Equal(t, []any{[]any{"purchase"}}, firstColumn(structured(t, res)))

	for _, c := range []struct{ tool, path, body string }{
		{"by_event", "endpoints/by_event/run", `{"variables": {"event": "$pageview"}}`},
		{"by_event", "endpoints/by_event/run", `{"debug": true}`},
		{"totals", "endpoints/totals/run", `{}`},
		{mcp.QueryTool, "query", `{"query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`},
	} {
		got := toolRefusal(t, call(t, s, c.tool, c.body))
		status, body := f.httpDo(t, "POST", "/api/projects/1/"+c.path, tok, c.body)
		if got, want := status, http.StatusForbidden; got != want {
			t.Errorf("%v: status = %v, want %v", c.body, got, want)
		}
		assert.Equal(t, refusal{body["detail"].(string), body["code"].(string), status}, got, "%s %s", c.tool, c.body)
	}
	got := toolRefusal(t, call(t, s, mcp.GetTool, `{"name": "by_event"}`))
	assert.Equal(t, http.StatusForbidden, got.Status)
	list := structured(t, call(t, s, mcp.ListTool, `{}`))["results"].([]any)
	require.Len(t, list, 1)
	assert.Equal(t, "by_event", list[0].(map[string]any)["name"])
}

// TestEmbedTokenRPMOverMCP: a token's rpm bounds its runs through tools,
// refused in the HTTP API's words.
func TestEmbedTokenRPMOverMCP(t *testing.T) {
	f := newFixture(t)
	tok, err := f.env.Service.MintEmbedToken(context.Background(), f.signer, "1",
		embed.Claims{Endpoints: []string{"by_event"}, Fixed: map[string]any{"event": "x"}, RPM: 2}, time.Hour)
	require.NoError(t, err)
	s := f.connectHTTP(t, tok, "")
	for range 2 {
		res := call(t, s, "by_event", `{}`)
		if res.IsError {
			t.Fatalf("%v: res.IsError is true", text(res))
		}
	}
	got := toolRefusal(t, call(t, s, "by_event", `{}`))
	assert.Equal(t, http.StatusTooManyRequests, got.Status)
	assert.Equal(t, "throttled", got.Code)
	re := regexp.MustCompile(`^Too many runs: this embed token may start 2 runs per minute \(rpm\)\. Retry after [0-9]+ s\.$`)
	assert.True(t, re.MatchString(got.Detail), "got.Detail = %q, want a match of %s", got.Detail, re)
}

// TestEmbedTokenRPMOneCountOverHTTPAndMCP: a token of rpm 2 runs twice in
// all, over the HTTP API and /mcp together given one Limiter (each had a
// count of its own: it ran 4 times).
func TestEmbedTokenRPMOneCountOverHTTPAndMCP(t *testing.T) {
	lim, err := limit.New(limit.Config{ProjectConcurrency: limit.Unlimited, ProjectPerMinute: limit.Unlimited,
		ProjectPerHour: limit.Unlimited, GlobalConcurrency: limit.Unlimited})
	require.NoError(t, err)
	f := newFixtureLimiter(t, lim)
	tok, err := f.env.Service.MintEmbedToken(context.Background(), f.signer, "1",
		embed.Claims{Endpoints: []string{"by_event"}, Fixed: map[string]any{"event": "x"}, RPM: 2}, time.Hour)
	require.NoError(t, err)
	s := f.connectHTTP(t, tok, "")
	run := "/api/projects/1/endpoints/by_event/run"

	status, body := f.httpDo(t, "POST", run, tok, `{}`)
	require.Equal(t, http.StatusOK, status, "the first run, over HTTP: %v", body)
	res := call(t, s, "by_event", `{}`)
	require.False(t, res.IsError, "the second run, over /mcp: %v", text(res))

	status, body = f.httpDo(t, "POST", run, tok, `{}`)
	require.Equal(t, http.StatusTooManyRequests, status, "a third run over HTTP: %v", body)
	require.Contains(t, body["detail"], "may start 2 runs per minute (rpm)")
	got := toolRefusal(t, call(t, s, "by_event", `{}`))
	require.Equal(t, http.StatusTooManyRequests, got.Status, "a third run over /mcp: %+v", got)
	require.Equal(t, "throttled", got.Code)
}

func firstColumn(m map[string]any) []any {
	var out []any
	for _, row := range m["results"].([]any) {
		out = append(out, []any{row.([]any)[0]})
	}
	return out
}

// TestCredentialsRefusedAsHTTP: /mcp takes the API's credentials and
// refuses the others with its status and detail.
func TestCredentialsRefusedAsHTTP(t *testing.T) {
	f := newFixture(t)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(query, auth string) (int, map[string]any) {
		status, raw := endpointtest.Fetch(t, "POST", f.mcp.URL+"/mcp"+query, initialize, map[string]string{
			"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": auth})
		var m map[string]any
		_ = json.NewDecoder(bytes.NewReader(raw)).Decode(&m)
		return status, m
	}
	for _, c := range []struct{ query, auth, apiPath, apiAuth string }{
		{"", "", "/api/projects/1/endpoints/", ""},
		{"", "Bearer wrong-key", "/api/projects/1/endpoints/", "Bearer wrong-key"},
		{"", "Basic abc", "/api/projects/1/endpoints/", "Basic abc"},
		{"?project=2", "Bearer " + f.env.Key, "/api/projects/2/endpoints/", "Bearer " + f.env.Key},
	} {
		status, body := post(c.query, c.auth)
		apiStatus, raw := endpointtest.Fetch(t, "GET", f.env.Server.URL+c.apiPath, "", map[string]string{"Authorization": c.apiAuth})
		var want map[string]any
		require.NoError(t, json.Unmarshal(raw, &want))
		if got, want := status, apiStatus; got != want {
			t.Errorf("%v: status = %v, want %v", c, got, want)
		}
		assert.Equal(t, want["detail"], body["detail"], "%v: body[\"detail\"]", c)
	}
	status, _ := post("?project=2", "Bearer "+keyP2)
	assert.Equal(t, http.StatusOK, status)

	// A body past the API's 1 MiB is refused before it is read whole.
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"totals","arguments":{"pad":"` + strings.Repeat("x", httpapi.DefaultMaxBodyBytes) + `"}}}`
	status, _ = endpointtest.Fetch(t, "POST", f.mcp.URL+"/mcp", big, map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + f.env.Key})
	assert.Equal(t, http.StatusRequestEntityTooLarge, status)
}

// TestStdioToolsFollowTheEndpoints: a long-lived session's tools/list
// reads the endpoints again, and the client is told the list changed.
func TestStdioToolsFollowTheEndpoints(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := mcp.Server(f.env.Service, "1", mcp.WithLimiter(nil)).Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	changed := make(chan struct{}, 10)
	c := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	s, err := c.Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer s.Close()
	got, want := keys(toolNames(t, s)), []string{"by_event", "totals", mcp.ListTool, mcp.GetTool, mcp.QueryTool}
	assert.True(t, sameNames(got, want), "tools %q, want %q in any order", got, want)

	_, err = f.env.Service.Create(ctx, "1", endpoint.CreateRequest{Name: "later",
		Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1 AS one"}})
	require.NoError(t, err)
	require.NoError(t, f.env.Service.Delete(ctx, "1", "totals"))
	if got, want := keys(toolNames(t, s)), []string{"by_event", "later", mcp.ListTool, mcp.GetTool, mcp.QueryTool}; !sameNames(got, want) {
		t.Errorf("after a create and a delete: tools %q, want %q in any order", got, want)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Error("no notifications/tools/list_changed")
	}
	res := call(t, s, "later", `{}`)
	if res.IsError {
		t.Fatalf("%v: res.IsError is true", text(res))
	}
	assert.Equal(t, []any{[]any{float64(1)}}, structured(t, res)["results"])
}

// keyFixture is newFixture's /mcp with stored keys (mcp.WithKeys) and a
// materialized endpoint "mat" at version 2 whose table is built.
type keyFixture struct {
	*fixture
	keys *apikey.Keys
}

func newKeyFixture(t *testing.T) *keyFixture {
	t.Helper()
	f := newFixture(t)
	ctx := context.Background()
	svc := f.env.Service
	keys, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore()})
	require.NoError(t, err, "apikey.New")
	const sql = "SELECT event, count(*) AS events FROM events GROUP BY event"
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "mat", IsMaterialized: true,
		Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: sql}}); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := svc.Update(ctx, "1", "mat", endpoint.UpdateRequest{
		Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: strings.Replace(sql, "count(*)", "count(1)", 1)}}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	require.NoError(t, svc.Materialize(ctx, "1", "mat"), "Materialize")
	srv := httptest.NewServer(mcp.Handler(svc, httpapi.NewKeyring(), mcp.WithKeys(keys), mcp.WithLimiter(nil), mcp.WithDefaultProject("1")))
	t.Cleanup(srv.Close)
	return &keyFixture{fixture: &fixture{env: f.env, mcp: srv, signer: f.signer}, keys: keys}
}

// key creates a stored key of project 1 as req asks and returns its
// secret.
func (f *keyFixture) key(t *testing.T, req apikey.CreateRequest) string {
	t.Helper()
	_, secret, err := f.keys.Create(context.Background(), "1", req)
	require.NoError(t, err, "Keys.Create")
	return secret
}

// wantThrottled checks that r is the tool error of the budget named limit.
func wantThrottled(t *testing.T, r refusal, limit string) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests || r.Code != endpoint.CodeThrottled || !strings.Contains(r.Detail, limit) {
		t.Errorf("refusal = %+v, want a 429 %s naming %s", r, endpoint.CodeThrottled, limit)
	}
}

// TestMCPKeyBudgetChargesWhatAnswers: over /mcp, as over the HTTP API, a
// stored key's run of an older version of a materialized endpoint is
// computed inline and charged to its inline budget; the current version,
// read from the stored table, to its materialized budget.
func TestMCPKeyBudgetChargesWhatAnswers(t *testing.T) {
	f := newKeyFixture(t)
	secret := f.key(t, apikey.CreateRequest{Name: "agent", Scopes: []string{apikey.ScopeEndpointRead},
		RunsPerMinute: 1, MaterializedRunsPerMinute: 1000})
	s := f.connectHTTP(t, secret, "")
	r := call(t, s, "mat", `{"version": 1}`)
	if r.IsError {
		t.Fatalf("version 1: %s", text(r))
	}
	if got := structured(t, r)["endpoint_materialized"]; got != false {
		t.Errorf("version 1: endpoint_materialized = %v, want false", got)
	}
	wantThrottled(t, toolRefusal(t, call(t, s, "mat", `{"version": 1}`)), apikey.LimitRunsPerMinute)
	for range 3 {
		r := call(t, s, "mat", `{}`)
		if r.IsError {
			t.Fatalf("current version: %s", text(r))
		}
		if got := structured(t, r)["endpoint_materialized"]; got != true {
			t.Errorf("current version: endpoint_materialized = %v, want true", got)
		}
	}

	tight := f.connectHTTP(t, f.key(t, apikey.CreateRequest{Name: "tight", Scopes: []string{apikey.ScopeEndpointRead},
		RunsPerMinute: 1000, MaterializedRunsPerMinute: 1}), "")
	if r := call(t, tight, "mat", `{}`); r.IsError {
		t.Fatalf("current version: %s", text(r))
	}
	wantThrottled(t, toolRefusal(t, call(t, tight, "mat", `{}`)), apikey.LimitMaterializedRunsPerMinute)
	if r := call(t, tight, "mat", `{"version": 1}`); r.IsError {
		t.Fatalf("version 1 on the inline budget: %s", text(r))
	}
}

// TestMCPKeyBudgetSharedWithHTTP: one Keys behind the HTTP API and /mcp
// holds a key to one budget across both.
func TestMCPKeyBudgetSharedWithHTTP(t *testing.T) {
	f := newKeyFixture(t)
	secret := f.key(t, apikey.CreateRequest{Name: "both", Scopes: []string{apikey.ScopeEndpointRead, apikey.ScopeQueryRun},
		RunsPerMinute: 2})
	api := httptest.NewServer(httpapi.New(f.env.Service, httpapi.NewKeyring(), httpapi.WithKeys(f.keys), httpapi.WithLimiter(nil)))
	t.Cleanup(api.Close)
	env := *f.env
	env.Server = api
	g := &fixture{env: &env, mcp: f.mcp, signer: f.signer}
	status, _ := g.httpDo(t, "POST", "/api/projects/1/endpoints/mat/run", secret, `{"version": 1}`)
	require.Equal(t, http.StatusOK, status, "HTTP run: status")
	s := f.connectHTTP(t, secret, "")
	if r := call(t, s, mcp.QueryTool, `{"query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`); r.IsError {
		t.Fatalf("_run_query: %s", text(r))
	}
	wantThrottled(t, toolRefusal(t, call(t, s, "mat", `{"version": 1}`)), apikey.LimitRunsPerMinute)
}

// TestMCPKeyRules: a stored key over /mcp sees and runs only what its
// scopes and endpoints allow, refused in the HTTP API's words.
func TestMCPKeyRules(t *testing.T) {
	f := newKeyFixture(t)
	named := f.connectHTTP(t, f.key(t, apikey.CreateRequest{Name: "named", Scopes: []string{apikey.ScopeEndpointRead},
		Endpoints: []string{"mat"}}), "")
	if r := call(t, named, "mat", `{}`); r.IsError {
		t.Fatalf("mat: %s", text(r))
	}
	got := toolRefusal(t, call(t, named, "totals", `{}`))
	assert.Equal(t, http.StatusForbidden, got.Status, "totals for a key limited to mat: %+v, want 403", got)
	if got := toolRefusal(t, call(t, named, mcp.QueryTool, `{"query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`)); got.Status != http.StatusForbidden || !strings.Contains(got.Detail, apikey.ScopeQueryRun) {
		t.Errorf("_run_query without query:run: %+v, want 403 naming the scope", got)
	}
	list := structured(t, call(t, named, mcp.ListTool, `{}`))
	rs, _ := list["results"].([]any)
	assert.Len(t, rs, 1, "_list_endpoints for a key limited to mat: %v, want mat only", list)
	writer := f.connectHTTP(t, f.key(t, apikey.CreateRequest{Name: "writer", Scopes: []string{apikey.ScopeEndpointWrite}}), "")
	if got := toolRefusal(t, call(t, writer, "mat", `{}`)); got.Status != http.StatusForbidden || !strings.Contains(got.Detail, apikey.ScopeEndpointRead) {
		t.Errorf("a run without endpoint:read: %+v, want 403 naming the scope", got)
	}
	// A key of project 1 asking for project 2 is refused before the tools.
	status, _ := endpointtest.Fetch(t, "POST", f.mcp.URL+"/mcp?project=2", `{}`, map[string]string{
		"Authorization": "Bearer " + f.key(t, apikey.CreateRequest{Name: "p1", Scopes: []string{apikey.ScopeEndpointRead}})})
	assert.Equal(t, http.StatusForbidden, status, "a key of project 1 on project 2: status")
}

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

// TestHostsWithoutMCPDoNotLinkTheSDK: the Service and the HTTP API do not
// import the MCP SDK; only this package (and who imports it) links it.
func TestHostsWithoutMCPDoNotLinkTheSDK(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command: not in PATH")
	}
	const sdkPath = "github.com/modelcontextprotocol/go-sdk"
	for _, pkg := range []string{"../", "../httpapi", "../openapi", "../embed"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		require.NoError(t, err, "go list -deps %s", pkg)
		for _, dep := range strings.Fields(string(out)) {
			assert.False(t, strings.HasPrefix(dep, sdkPath), "%s imports %s", pkg, dep)
		}
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), sdkPath+"/mcp\n", "go list -deps of endpoint/mcp does not list %s/mcp: the check above proves nothing", sdkPath)
}

// FuzzHandler sends /mcp any credential, project and body: it never
// panics or answers 5xx, and a refusal before the transport is the API's
// JSON error body.
func FuzzHandler(f *testing.F) {
	fx := newFixture(f)
	for _, s := range []struct{ auth, project, body string }{
		{"Bearer " + fx.env.Key, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"by_event","arguments":{"variables":{"event":"purchase"}}}}`},
		{"Bearer " + fx.env.Key, "2", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{"Bearer eyJhbGciOiJIUzI1NiJ9.eyJwcm9qZWN0IjoiMSJ9.x", "", `{}`},
		{"Bearer eyJ..", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"_run_query","arguments":{"query":{"kind":"HogQLQuery","query":"SELECT 1"}}}}`},
		{"Basic x", "1", `[`},
		{"", "", ``},
	} {
		f.Add(s.auth, s.project, s.body)
	}
	f.Fuzz(func(t *testing.T, auth, project, body string) {
		req := httptest.NewRequest("POST", "/mcp?project="+url.QueryEscape(project), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header["Authorization"] = []string{auth}
		}
		w := httptest.NewRecorder()
		fx.mcp.Config.Handler.ServeHTTP(w, req)
		require.Less(t, w.Code, 500, "status for %q %q %q: %s", auth, project, body, w.Body)
		if w.Code == http.StatusUnauthorized || w.Code == http.StatusForbidden {
			require.Contains(t, w.Body.String(), `"detail"`, "refusal without the API's body: %s", w.Body)
		}
	})
}
