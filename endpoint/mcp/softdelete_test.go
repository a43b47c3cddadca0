package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/endpoint/mcp"
)

// TestSoftDeletedEndpointIsNoTool: a soft-deleted endpoint is no tool, by
// its name or by the name it was stored under (its name, a slash and its
// id): tools/list and _list_endpoints leave it out, and a call of either
// name, or _get_endpoint of either, is refused as an unknown endpoint is.
func TestSoftDeletedEndpointIsNoTool(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	gone, err := f.env.Service.SoftDelete(ctx, "1", "totals")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	stored := "totals/" + gone.ID
	for transport, s := range f.transports(t) {
		tools := toolNames(t, s)
		for _, name := range []string{"totals", stored} {
			if _, ok := tools[name]; ok {
				t.Errorf("%s: tools/list lists the soft-deleted endpoint as %q", transport, name)
			}
		}
		if _, ok := tools["by_event"]; !ok {
			t.Errorf("%s: tools/list lost the live endpoint by_event: %v", transport, keys(tools))
		}
		if s := text(call(t, s, mcp.ListTool, `{}`)); strings.Contains(s, "totals") {
			t.Errorf("%s: %s shows the soft-deleted endpoint: %s", transport, mcp.ListTool, s)
		}
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
