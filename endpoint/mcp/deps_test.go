package mcp_test

import (
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
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, sdkPath) {
				t.Errorf("%s imports %s", pkg, dep)
			}
		}
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), sdkPath+"/mcp\n") {
		t.Errorf("go list -deps of endpoint/mcp does not list %s/mcp: the check above proves nothing", sdkPath)
	}
}
