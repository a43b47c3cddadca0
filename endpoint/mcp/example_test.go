package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/mcp"
	"github.com/endpointkit/endpointkit/variable"
)

// An agent's session: the SDK's client connects to /mcp with an API key,
// lists the tools and runs an endpoint through its tool.
func ExampleHandler() {
	dir, _ := os.MkdirTemp("", "mcp-example-")
	defer os.RemoveAll(dir)
	env, err := endpointtest.Start(dir, endpointtest.WithDemoEvents(1000))
	if err != nil {
		panic(err)
	}
	defer env.Close()
	ctx := context.Background()
	v, _ := env.Service.CreateVariable(ctx, env.Project, variable.Variable{Name: "Event", Type: variable.String})
	_, err = env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "by_event", Description: "Events and users of one event name.",
		Query: &endpoint.Query{Kind: endpoint.KindSQL,
			SQL:       "SELECT event, count(*) AS events, count(DISTINCT distinct_id) AS users FROM events WHERE event = {variables.event} GROUP BY event",
			Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "event"}}}})
	if err != nil {
		panic(err)
	}

	// The host: /mcp behind the HTTP API's keys.
	keys := httpapi.NewKeyring()
	_ = keys.Add("agent-key", env.Project)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.Handler(env.Service, keys, mcp.WithDefaultProject(env.Project)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// The agent.
	client := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil)
	session, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{"agent-key", http.DefaultTransport}}}, nil)
	if err != nil {
		panic(err)
	}
	defer session.Close()
	tools, _ := session.ListTools(ctx, nil)
	for _, t := range tools.Tools {
		if strings.HasPrefix(t.Name, "_") {
			fmt.Printf("tool %s\n", t.Name)
			continue
		}
		vars, _ := json.Marshal(t.InputSchema.(map[string]any)["properties"].(map[string]any)["variables"])
		fmt.Printf("tool %s: %s\n  variables: %s\n", t.Name, t.Description, vars)
	}
	for _, args := range []map[string]any{
		{"variables": map[string]any{"event": "purchase"}},
		{"variables": map[string]any{}},
		{"variables": map[string]any{"event": "purchase", "country": "FR"}},
	} {
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "by_event", Arguments: args})
		if err != nil {
			panic(err)
		}
		text := res.Content[0].(*sdk.TextContent).Text
		if !res.IsError {
			// The answer as the HTTP API gives it, cut to its rows.
			text = text[strings.Index(text, `"columns"`):strings.Index(text, `,"hasMore"`)]
		}
		fmt.Printf("by_event %v -> error=%v %s\n", args["variables"], res.IsError, text)
	}
	// Output:
	// tool _get_endpoint
	// tool _list_endpoints
	// tool _run_query
	// tool by_event: Events and users of one event name.
	//   variables: {"additionalProperties":false,"description":"A value for each variable of the endpoint, by code name.","properties":{"event":{"description":"Event","type":"string"}},"required":["event"],"type":"object"}
	// by_event map[event:purchase] -> error=false "columns":["event","events","users"],"types":["TEXT","INTEGER","INTEGER"],"results":[["purchase",110,64]]
	// by_event map[] -> error=true Required variable(s) 'event' not provided
	// by_event map[country:FR event:purchase] -> error=true Unknown variable(s): country
}

// A command that serves the tools of project 1 on stdin and stdout, as
// examples/server -mcp-stdio does: the process acts as an API key of the
// project, so only whoever may hold that key should start it.
func ExampleServer() {
	var svc *endpoint.Service // the host's Service
	if svc == nil {
		return
	}
	if err := mcp.Server(svc, "1").Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}
