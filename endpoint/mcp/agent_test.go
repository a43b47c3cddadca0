package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/mcp"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// agentFixture serves /mcp over five endpoints of project 1: two SQL
// ones, a trends insight and a retention insight without descriptions,
// and one whose stored query no longer compiles (it uses a variable it
// does not define, as a query saved before the save-time check could).
func agentFixture(t *testing.T) *httptest.Server {
	t.Helper()
	env := endpointtest.New(t, endpointtest.WithDemoEvents(300))
	ctx := context.Background()
	svc := env.Service
	v, err := svc.CreateVariable(ctx, "1", variable.Variable{Name: "Event", Type: variable.String})
	require.NoError(t, err)
	create := func(req endpoint.CreateRequest) {
		_, err := svc.Create(ctx, "1", req)
		require.NoError(t, err, req.Name)
	}
	create(endpoint.CreateRequest{Name: "by_event", Description: "Events and users of one event name.",
		Query: &endpoint.Query{Kind: endpoint.KindSQL,
			SQL:       "SELECT event, count(*) AS events FROM events WHERE event = {variables.event} GROUP BY event",
			Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "event"}}}})
	create(endpoint.CreateRequest{Name: "totals", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT count(*) AS events FROM events"}})
	create(endpoint.CreateRequest{Name: "browsers", Query: &endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"kind": "TrendsQuery",
		"series": [{"kind": "EventsNode", "event": "$pageview", "math": "total"}], "interval": "day",
		"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-31"},
		"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`)}})
	create(endpoint.CreateRequest{Name: "signups", Query: &endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"kind": "TrendsQuery",
		"series": [{"kind": "EventsNode", "event": "signup", "math": "dau"}], "interval": "week"}`)}})
	create(endpoint.CreateRequest{Name: "stale", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT count(*) AS n FROM events"}})
	// As saved before the checks: its text now uses a variable it does not define.
	broken := `replace(query_json, 'FROM events', 'FROM events WHERE event = {variables.gone}')`
	_, err = env.DB.Exec(`UPDATE endpointkit_endpoint_versions SET query_json = ` + broken + ` WHERE query_json LIKE '%count(*) AS n%'`)
	require.NoError(t, err)
	_, err = env.DB.Exec(`UPDATE endpointkit_endpoints SET query_json = ` + broken + ` WHERE name = 'stale'`)
	require.NoError(t, err)

	// A Service of its own reads the store as it is now (nothing compiled).
	store, err := sqlstore.New(env.DB, engine.SQLite)
	require.NoError(t, err)
	fresh, err := endpoint.New(endpoint.Config{Endpoints: store.Endpoints(), Variables: store.Variables(), Executor: sqlexec.New(env.DB, engine.SQLite)})
	require.NoError(t, err)
	keys := httpapi.NewKeyring()
	require.NoError(t, keys.Add(env.Key, "1"))
	srv := httptest.NewServer(mcp.Handler(fresh, keys, mcp.WithDefaultProject("1")))
	t.Cleanup(srv.Close)
	return srv
}

func agentSession(t *testing.T, srv *httptest.Server) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{endpointtest.DefaultKey, http.DefaultTransport}}, MaxRetries: -1,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// TestToolsAnAgentNeedNotGuess: over the SDK's own client, tools/list of
// five endpoints (and the three fixed tools) stays under 6 KB; no run
// tool offers a format that has one value; an insight without a
// description is described from its query; an endpoint that cannot run
// is listed with its error; and _run_query runs SQL with a Date variable
// by code name, with no variable id and nothing saved.
func TestToolsAnAgentNeedNotGuess(t *testing.T) {
	srv := agentFixture(t)
	s := agentSession(t, srv)
	ctx := context.Background()
	res, err := s.ListTools(ctx, nil)
	require.NoError(t, err)
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	assert.Less(t, len(raw), 6<<10, "tools/list of 5 endpoints: %d bytes", len(raw))
	tools := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	for _, name := range []string{"by_event", "totals", "browsers", "signups", "stale", mcp.ListTool, mcp.GetTool, mcp.QueryTool} {
		require.Contains(t, tools, name)
	}
	for _, name := range []string{"by_event", "totals", "browsers", "signups"} {
		schema, err := json.Marshal(tools[name].InputSchema)
		require.NoError(t, err)
		var top struct {
			Properties map[string]any `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(schema, &top))
		assert.NotContains(t, top.Properties, "format", name)
	}
	assert.Equal(t, "TrendsQuery of $pageview (total) by $browser, per day, from 2025-05-01 to 2025-05-31.", tools["browsers"].Description)
	assert.Equal(t, "TrendsQuery of signup (dau), per week.", tools["signups"].Description)
	assert.Contains(t, tools["stale"].Description, "This endpoint cannot run: ")
	assert.Contains(t, tools["stale"].Description, "gone")
	called, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "stale", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, called.IsError, "calling it answers its error")

	// The agent's ad-hoc query: a Date variable by code name.
	out, err := s.CallTool(ctx, &sdk.CallToolParams{Name: mcp.QueryTool, Arguments: map[string]any{
		"sql": "SELECT count(*) AS n FROM events WHERE timestamp >= {variables.since} AND event = {variables.name}",
		"variables": map[string]any{
			"since": map[string]any{"value": "2020-01-01", "type": "Date"},
			"name":  "$pageview",
		},
	}})
	require.NoError(t, err)
	require.False(t, out.IsError, "%+v", out.Content)
	var answer struct {
		Results   [][]any `json:"results"`
		Variables []struct {
			ID       string `json:"id"`
			CodeName string `json:"code_name"`
			Type     string `json:"type"`
		} `json:"variables"`
	}
	b, err := json.Marshal(out.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &answer))
	require.Len(t, answer.Results, 1)
	assert.Greater(t, answer.Results[0][0], 0.0)
	require.Len(t, answer.Variables, 2)
	for _, v := range answer.Variables {
		assert.Empty(t, v.ID)
		if v.CodeName == "since" {
			assert.Equal(t, "Date", v.Type)
		}
	}

	// A value that is not a date, typed Date, is refused naming the variable.
	bad, err := s.CallTool(ctx, &sdk.CallToolParams{Name: mcp.QueryTool, Arguments: map[string]any{
		"sql":       "SELECT 1 AS one FROM events WHERE timestamp >= {variables.since}",
		"variables": map[string]any{"since": map[string]any{"value": "soon", "type": "Date"}},
	}})
	require.NoError(t, err)
	require.True(t, bad.IsError)
	assert.Contains(t, bad.Content[0].(*sdk.TextContent).Text, "since")

	// The insight form of _run_query still runs.
	ins, err := s.CallTool(ctx, &sdk.CallToolParams{Name: mcp.QueryTool, Arguments: map[string]any{
		"query": map[string]any{"kind": "TrendsQuery", "series": []any{map[string]any{"kind": "EventsNode", "event": "$pageview"}}},
	}})
	require.NoError(t, err)
	assert.False(t, ins.IsError, "%+v", ins.Content)
}
