package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSoftDeletedEndpointIsNoTool: a soft-deleted endpoint is no tool, by
// its name or by the name it was stored under (its name, a slash and its
// id): tools/list and _list_endpoints leave it out, and a call of either
// name, or _get_endpoint of either, is refused as an unknown endpoint is.
func TestSoftDeletedEndpointIsNoTool(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	gone, err := f.env.Service.SoftDelete(ctx, "1", "totals")
	require.NoError(t, err)
	stored := "totals/" + gone.ID
	for transport, s := range f.transports(t) {
		tools := toolNames(t, s)
		for _, name := range []string{"totals", stored} {
			_, ok := tools[name]
			assert.False(t, ok, "%s: tools/list lists the soft-deleted endpoint as %q", transport, name)
		}
		if _, ok := tools["by_event"]; !ok {
			t.Errorf("%s: tools/list lost the live endpoint by_event: %v", transport, keys(tools))
		}
		assert.NotContains(t, text(call(t, s, mcp.ListTool, `{}`)), "totals", "%s: %s shows the soft-deleted endpoint", transport, mcp.ListTool)
		for _, name := range []string{"totals", stored} {
			run := call(t, s, name, `{}`)
			if !run.IsError || !strings.Contains(text(run), "not found") {
				t.Errorf("%s: the tool %q of a soft-deleted endpoint: error %v, %.200s; want an unknown endpoint's refusal", transport, name, run.IsError, text(run))
			}
			got := call(t, s, mcp.GetTool, `{"name": "`+name+`"}`)
			if !got.IsError || !strings.Contains(text(got), "not found") {
				t.Errorf("%s: %s of %q: error %v, %.200s; want an unknown endpoint's refusal", transport, mcp.GetTool, name, got.IsError, text(got))
			}
		}
	}
}
