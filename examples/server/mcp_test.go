package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countQuery is the _run_query arguments the tests send.
const countQuery = `{"query": {"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events"}}`

type withKey struct{ key string }

func (k withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// agentSession lists the tools and counts the events with _run_query.
func agentSession(t *testing.T, s *sdk.ClientSession) (tools []string, n any) {
	t.Helper()
	ctx := context.Background()
	list, err := s.ListTools(ctx, nil)
	require.NoError(t, err)
	for _, tool := range list.Tools {
		tools = append(tools, tool.Name)
	}
	var args any
	require.NoError(t, json.Unmarshal([]byte(countQuery), &args))
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "_run_query", Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v: res.IsError is true", res.Content)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var out struct {
		Columns []string `json:"columns"`
		Results [][]any  `json:"results"`
	}
	require.NoError(t, json.Unmarshal(b, &out))
	require.Equal(t, []string{"n"}, out.Columns)
	require.Len(t, out.Results, 1)
	return tools, out.Results[0][0]
}

var baseURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)

// TestMCPOverHTTP: the server serves the tools at /mcp behind its API key.
func TestMCPOverHTTP(t *testing.T) {
	s := start(t, []string{"-api-key", "mcp-key", "-demo-events", "300"}, nil)
	base := baseURL.FindString(s.out.String())
	v := base
	require.NotEqual(t, "", v, "base is empty")
	hc := &http.Client{Transport: withKey{"mcp-key"}}
	res, err := hc.Post(base+"/api/projects/1/endpoints/", "application/json",
		strings.NewReader(`{"name": "n_events", "description": "Counts the events.", "query": {"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events"}}`))
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusCreated, res.StatusCode)
	c := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: withKey{"mcp-key"}}, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer sess.Close()
	tools, n := agentSession(t, sess)
	if s, sub := tools, "n_events"; !slices.Contains(s, sub) {
		t.Errorf("the endpoint is a tool: %v does not contain %v", s, sub)
	}
	if s, sub := tools, "_run_query"; !slices.Contains(s, sub) {
		t.Errorf("%v does not contain %v", s, sub)
	}
	if got, want := n, any(300.0); got != want {
		t.Errorf("count(*) = %#v, want %#v", got, want)
	}

	// A stored key works at /mcp too, held to the budget it has over the
	// API: one run per minute, spent by _run_query, refuses the next.
	res, err = hc.Post(base+"/api/projects/1/keys/", "application/json",
		strings.NewReader(`{"name": "agent", "scopes": ["endpoint:read", "query:run"], "runs_per_minute": 1}`))
	require.NoError(t, err)
	var created struct {
		Key string `json:"key"`
	}
	err = json.NewDecoder(res.Body).Decode(&created)
	res.Body.Close()
	require.NoError(t, err, "POST keys/: status %d, %v", res.StatusCode, err)
	require.Equal(t, http.StatusCreated, res.StatusCode, "POST keys/: status %d, %v", res.StatusCode, err)
	ks, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: withKey{created.Key}}, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer ks.Close()
	if _, n := agentSession(t, ks); n != any(300.0) {
		t.Errorf("count(*) with a stored key = %#v, want 300", n)
	}
	r, err := ks.CallTool(context.Background(), &sdk.CallToolParams{Name: "n_events", Arguments: map[string]any{}})
	require.NoError(t, err)
	if assert.True(t, r.IsError, "a second run in the minute of a key whose budget is 1: %v, want a refusal naming key_runs_per_minute", r.StructuredContent) {
		assert.Contains(t, fmt.Sprint(r.StructuredContent), "key_runs_per_minute", "a second run in the minute of a key whose budget is 1: %v, want a refusal naming key_runs_per_minute", r.StructuredContent)
	}
}

// TestMCPStdioBinary runs the real server binary with -mcp-stdio under the
// SDK's command transport: stdout carries the protocol and nothing else.
func TestMCPStdioBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server as a process")
	}
	bin, err := serverBinary() // this test binary (TestMain)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-mcp-stdio", "-api-key", "mcp-key", "-demo-events", "300",
		"-db", filepath.Join(t.TempDir(), "events.db"))
	c := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, nil)
	sess, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer sess.Close()
	tools, n := agentSession(t, sess)
	s, sub := tools, "_list_endpoints"
	assert.True(t, slices.Contains(s, sub), "%v does not contain %v", s, sub)
	if s, sub := tools, "_get_endpoint"; !slices.Contains(s, sub) {
		t.Errorf("%v does not contain %v", s, sub)
	}
	if got, want := n, any(300.0); got != want {
		t.Errorf("count(*) = %#v, want %#v", got, want)
	}
}
