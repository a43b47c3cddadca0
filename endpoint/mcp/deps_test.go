package mcp_test

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"os/exec"
	"strings"
	"testing"
)

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
