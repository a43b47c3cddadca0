// Package docs holds the tests that keep the repository's documents true
// to its code.
package docs

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/endpointkit/endpointkit/"

// TestDesignListsEveryPackage: docs/design.md's Layout table names every
// package of the module, and nothing that is not one.
func TestDesignListsEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("../../docs/design.md")
	require.NoError(t, err)
	layout := string(doc)
	start := strings.Index(layout, "## Layout")
	require.GreaterOrEqual(t, start, 0, "docs/design.md has no Layout section")
	layout = layout[start:]
	if end := strings.Index(layout[3:], "\n## "); end >= 0 {
		layout = layout[:end+3]
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9/]+)` \\|").FindAllStringSubmatch(layout, -1) {
		listed = append(listed, m[1])
	}
	out, err := exec.Command("go", "list", "../../...").Output()
	require.NoError(t, err, "go list")
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(p, module))
	}
	slices.Sort(listed)
	slices.Sort(pkgs)
	for _, p := range pkgs {
		assert.True(t, slices.Contains(listed, p), "package %s is not in docs/design.md's Layout table", p)
	}
	for _, p := range listed {
		assert.True(t, slices.Contains(pkgs, p), "docs/design.md's Layout table lists %s, which is not a package", p)
	}
}

// TestLicense: the repository has a licence a package index recognises,
// and the README names it.
func TestLicense(t *testing.T) {
	b, err := os.ReadFile("../../LICENSE")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "MIT License\n"), "LICENSE is not the MIT License text")
	require.Contains(t, string(b), "THE SOFTWARE IS PROVIDED \"AS IS\"", "LICENSE is not the MIT License text")
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	require.Contains(t, string(readme), "[MIT License](LICENSE)", "the README does not name the licence")
}
