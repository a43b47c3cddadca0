package driver_test

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go/ast"
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
	allowed := []string{"sql/engine", "internal/stmt"}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(p, module); ok {
				seen[rest] = true
				assert.True(t, slices.Contains(allowed, rest), "%s imports %s; driver imports of this module only %q", name, p, allowed)
			}
		}
	}
	require.True(t, seen["internal/stmt"], "imports of this module %v: the test no longer reads them", seen)
	require.True(t, seen["sql/engine"], "imports of this module %v: the test no longer reads them", seen)
}

// TestRecordsAreNotWireTypes: the records are storage records, not the
// HTTP API's JSON: no field has a json tag, and no type decodes or encodes
// JSON of its own. A store keeps them in a format of its own; the API's
// wire types are package endpoint's.
func TestRecordsAreNotWireTypes(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	structs := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.StructType:
				structs++
				for _, field := range n.Fields.List {
					if field.Tag != nil && strings.Contains(field.Tag.Value, "json:") {
						t.Errorf("%s: a field has the tag %s", fset.Position(field.Pos()), field.Tag.Value)
					}
				}
			case *ast.FuncDecl:
				if n.Recv != nil && (n.Name.Name == "MarshalJSON" || n.Name.Name == "UnmarshalJSON") {
					t.Errorf("%s: %s", fset.Position(n.Pos()), n.Name.Name)
				}
			}
			return true
		})
	}
	require.GreaterOrEqual(t, structs, 5)
}
