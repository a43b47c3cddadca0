package driver_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestImports: an implementer's package imports, of this module, only the
// engine and the sealed Statement. Nothing may be added to them.
func TestImports(t *testing.T) {
	const module = "github.com/endpointkit/endpointkit/"
	allowed := []string{"endpoint/engine", "internal/stmt"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(p, module); ok {
				seen[rest] = true
				if !slices.Contains(allowed, rest) {
					t.Errorf("%s imports %s; driver imports of this module only %q", name, p, allowed)
				}
			}
		}
	}
	if !seen["internal/stmt"] || !seen["endpoint/engine"] {
		t.Fatalf("imports of this module %v: the test no longer reads them", seen)
	}
}
