package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpLoadEvents is the demo load of TestMCPStdioHandshakeBeforeDemoLoad:
// long enough that the handshake, a few milliseconds of the server's
// work, is over well before it (25,000 loaded in 0.3 s on a quiet
// machine, and a handshake made to wait for them failed the test; a
// loaded machine slows both alike); the server's default of 100,000 took
// 5 to 10 s of the package's time in the README's run for the same check.
const mcpLoadEvents = 50000

// TestMCPStdioHandshakeBeforeDemoLoad runs the real binary with
// -mcp-stdio over a fresh database and many demo events under the SDK's
// command transport: initialize and tools/list complete while the demo
// load is still running (its "Demo data loaded" line is not yet on
// stderr), and a run tool called then waits for the load and counts every
// event.
func TestMCPStdioHandshakeBeforeDemoLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server as a process and loads " + strconv.Itoa(mcpLoadEvents) + " demo events")
	}
	// A process of its own, 20 s of a loaded CI machine: beside the
	// browser tests, which mostly wait, rather than before them.
	t.Parallel()
	bin, err := serverBinary() // this test binary (TestMain)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The run below must wait for the whole load, however slow the machine:
	// -mcp-load-wait is raised to the test's own deadline (at its default,
	// a loaded CI machine answered "still loading" after 30 s).
	cmd := exec.CommandContext(ctx, bin, "-mcp-stdio", "-demo-events", strconv.Itoa(mcpLoadEvents), "-mcp-load-wait", "3m",
		"-db", filepath.Join(t.TempDir(), "events.db"))
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "test-agent", Version: "1"}, nil)
	sess, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil) // initialize
	require.NoError(t, err)
	defer sess.Close()
	list, err := sess.ListTools(ctx, nil)
	require.NoError(t, err)
	log := stderr.String()
	require.Contains(t, log, "Loading "+strconv.Itoa(mcpLoadEvents)+" demo events in the background", "stderr: %s", log)
	require.NotContains(t, log, "Demo data loaded", "the handshake waited for the demo data; stderr: %s", log)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	assert.Contains(t, names, "_run_query")

	// _list_endpoints reads only the store: it does not wait.
	r, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "_list_endpoints", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.False(t, r.IsError, "%v", r.Content)

	// A run waits for the load, then counts all of it.
	_, n := agentSession(t, sess)
	assert.Equal(t, any(float64(mcpLoadEvents)), n)
	assert.Contains(t, stderr.String(), "Demo data loaded: "+strconv.Itoa(mcpLoadEvents)+" events")
}

// TestDemoLoadGate: while the demo data loads, a call of a tool that reads
// the events is answered, after -mcp-load-wait, with a tool error saying
// the data is still loading; _list_endpoints and requests other than
// tools/call pass at once; once loaded every call passes, and a failed
// load is named in the answer.
func TestDemoLoadGate(t *testing.T) {
	release := make(chan struct{})
	load := startDemoLoad(500, func() error { <-release; return nil })
	passed := 0
	next := func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		passed++
		return &sdk.CallToolResult{}, nil
	}
	h := load.gate(0, slog.New(slog.NewTextHandler(io.Discard, nil)))(next)
	call := func(name string) *sdk.CallToolResult {
		res, err := h(context.Background(), "tools/call", &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: name}})
		require.NoError(t, err)
		return res.(*sdk.CallToolResult)
	}

	res := call("_run_query")
	require.True(t, res.IsError)
	text := res.Content[0].(*sdk.TextContent).Text
	assert.Contains(t, text, "demo data still loading (500 events")
	assert.Contains(t, text, "call this tool again")
	assert.Equal(t, 0, passed)
	assert.False(t, call("_list_endpoints").IsError)
	assert.False(t, call("_get_endpoint").IsError)
	_, err := h(context.Background(), "tools/list", &sdk.ListToolsRequest{})
	require.NoError(t, err)
	assert.Equal(t, 3, passed)

	close(release)
	<-load.done
	assert.False(t, call("n_events").IsError)
	assert.Equal(t, 4, passed)

	failed := startDemoLoad(1, func() error { return errors.New("disk full") })
	<-failed.done
	got, err := failed.gate(time.Minute, slog.New(slog.NewTextHandler(io.Discard, nil)))(next)(context.Background(), "tools/call",
		&sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: "_run_query"}})
	require.NoError(t, err)
	res = got.(*sdk.CallToolResult)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, "the demo data failed to load: disk full")
}
