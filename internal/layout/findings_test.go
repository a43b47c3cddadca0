package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sourceFindings parses every non-test Go file of the module (more than
// 100 of them, or the walk missed it) and returns the positions detect
// finds in each, by the file's directory from the module root.
func sourceFindings(t *testing.T, detect func(t *testing.T, fset *token.FileSet, rel string, src []byte) []string) map[string][]string {
	t.Helper()
	root, _ := moduleRoot(t)
	fset := token.NewFileSet()
	seen := 0
	found := map[string][]string{}
	require.NoError(t, GoFiles(root, func(rel string) error {
		if strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return err
		}
		seen++
		if at := detect(t, fset, rel, src); len(at) > 0 {
			found[path.Dir(rel)] = append(found[path.Dir(rel)], at...)
		}
		return nil
	}))
	require.GreaterOrEqual(t, seen, 100, "read")
	return found
}

// findingsOutside reports, as a test error saying what, each position of
// found outside the allowed directories, in the order of the directories'
// names, and returns how many positions the allowed directories hold.
func findingsOutside(t *testing.T, found map[string][]string, allowed func(dir string) bool, what string) int {
	t.Helper()
	in := 0
	for _, dir := range slices.Sorted(maps.Keys(found)) {
		if allowed(dir) {
			in += len(found[dir])
			continue
		}
		for _, at := range found[dir] {
			t.Errorf("%s: %s", at, what)
		}
	}
	return in
}

// inspectSource parses the Go file rel (its text src) and returns the
// positions of the nodes that visit, called on each node of the file as
// ast.Inspect calls it, marks with at: the frame of every detector that
// looks at a file's nodes one by one.
func inspectSource(t *testing.T, fset *token.FileSet, rel string, src []byte, visit func(n ast.Node, at func(ast.Node)) bool) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	require.NoError(t, err, "parsing %s", rel)
	var out []string
	at := func(n ast.Node) { out = append(out, fset.Position(n.Pos()).String()) }
	ast.Inspect(f, func(n ast.Node) bool { return visit(n, at) })
	return out
}

// stringLit returns the text of the string literal n, and false if n is
// not one.
func stringLit(n ast.Node) (string, bool) {
	l, ok := n.(*ast.BasicLit)
	if !ok || l.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(l.Value)
	return s, err == nil
}

// inDirs returns whether a directory is one of dirs, for findingsOutside.
func inDirs(dirs []string) func(dir string) bool {
	return func(dir string) bool { return slices.Contains(dirs, dir) }
}
