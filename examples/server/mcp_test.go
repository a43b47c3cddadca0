package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
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
	require.False(t, res.IsError, "%v", res.Content)
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
	require.NotEmpty(t, base)
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
	assert.Contains(t, tools, "n_events", "the endpoint is a tool")
	assert.Contains(t, tools, "_run_query")
	assert.EqualValues(t, 300, n)
}

// TestMCPStdioBinary runs the real server binary with -mcp-stdio under the
// SDK's command transport: stdout carries the protocol and nothing else.
func TestMCPStdioBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command: not in PATH")
	}
	bin := filepath.Join(t.TempDir(), "server")
	out, err := exec.Command(goCmd, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-mcp-stdio", "-api-key", "mcp-key", "-demo-events", "300",
		"-db", filepath.Join(t.TempDir(), "events.db"))
	c := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, nil)
	sess, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer sess.Close()
	tools, n := agentSession(t, sess)
	assert.Contains(t, tools, "_list_endpoints")
	assert.Contains(t, tools, "_get_endpoint")
	assert.EqualValues(t, 300, n)
}
