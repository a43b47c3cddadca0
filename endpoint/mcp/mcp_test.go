package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/mcp"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/variable"
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
	req, err := http.NewRequest(method, f.env.Server.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+cred)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	return res.StatusCode, out
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
		req, err := http.NewRequest("POST", f.mcp.URL+"/mcp"+query, strings.NewReader(initialize))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var m map[string]any
		_ = json.NewDecoder(bytes.NewReader(raw)).Decode(&m)
		return res.StatusCode, m
	}
	for _, c := range []struct{ query, auth, apiPath, apiAuth string }{
		{"", "", "/api/projects/1/endpoints/", ""},
		{"", "Bearer wrong-key", "/api/projects/1/endpoints/", "Bearer wrong-key"},
		{"", "Basic abc", "/api/projects/1/endpoints/", "Basic abc"},
		{"?project=2", "Bearer " + f.env.Key, "/api/projects/2/endpoints/", "Bearer " + f.env.Key},
	} {
		status, body := post(c.query, c.auth)
		req, _ := http.NewRequest("GET", f.env.Server.URL+c.apiPath, nil)
		if c.apiAuth != "" {
			req.Header.Set("Authorization", c.apiAuth)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var want map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&want))
		res.Body.Close()
		if got, want := status, res.StatusCode; got != want {
			t.Errorf("%v: status = %v, want %v", c, got, want)
		}
		assert.Equal(t, want["detail"], body["detail"], "%v: body[\"detail\"]", c)
	}
	status, _ := post("?project=2", "Bearer "+keyP2)
	assert.Equal(t, http.StatusOK, status)

	// A body past the API's 1 MiB is refused before it is read whole.
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"totals","arguments":{"pad":"` + strings.Repeat("x", httpapi.DefaultMaxBodyBytes) + `"}}}`
	req, err := http.NewRequest("POST", f.mcp.URL+"/mcp", strings.NewReader(big))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+f.env.Key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
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
