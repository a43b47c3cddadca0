// Package docs holds the tests that keep the repository's documents true
// to its code.
package docs

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/endpointkit/endpointkit/"

// TestDesignListsEveryPackage: docs/design.md's Layout table names every
// package of the module, and nothing that is not one.
func TestDesignListsEveryPackage(t *testing.T) {
	layout := section(t, "docs/design.md", "## Layout")
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
		assert.Contains(t, listed, p, "package %s is not in docs/design.md's Layout table", p)
	}
	for _, p := range listed {
		assert.Contains(t, pkgs, p, "docs/design.md's Layout table lists %s, which is not a package", p)
	}
}

// TestLicense: the repository has a licence a package index recognises,
// and the README names it.
func TestLicense(t *testing.T) {
	licence := readDoc(t, "LICENSE")
	assert.True(t, strings.HasPrefix(licence, "MIT License\n"), "LICENSE is not the MIT License text")
	assert.Contains(t, licence, "THE SOFTWARE IS PROVIDED \"AS IS\"", "LICENSE is not the MIT License text")
	assert.Contains(t, readDoc(t, "README.md"), "[MIT License](LICENSE)", "the README does not name the licence")
}

// floors are the floors of docs/design.md's Layout table, lowest first.
var floors = []string{"helpers", "values", "SQL ground", "domain", "statements", "contracts", "service",
	"implementations", "surfaces", "conformance suites", "tests", "hosts"}

// floorExceptions are the imports up a floor that docs/design.md names.
var floorExceptions = map[string]string{
	"endpoint":              "endpoint/memstore",
	"endpoint/endpointtest": "examples/demo",
}

// TestFloors: no package imports one of a higher floor of docs/design.md's
// Layout table, but the exceptions the page names.
func TestFloors(t *testing.T) {
	floorOf := map[string]int{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9/]+)` \\| ([a-zA-Z ]+) \\|").FindAllStringSubmatch(readDoc(t, "docs/design.md"), -1) {
		i := slices.Index(floors, m[2])
		require.GreaterOrEqual(t, i, 0, "docs/design.md: %s is on floor %q, which is not one of %v", m[1], m[2], floors)
		floorOf[m[1]] = i
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../../...").Output()
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok || floorExceptions[pkg] == dep {
				continue
			}
			assert.LessOrEqual(t, floorOf[dep], floorOf[pkg], "%s (%s) imports %s (%s), a floor above it",
				pkg, floors[floorOf[pkg]], dep, floors[floorOf[dep]])
		}
	}
}
