package stmt_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/internal/layout"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOnlyScopeAndSuiteSeal: no package but sql/scope and
// endpoint/executortest makes a Statement, so that every statement the
// Service hands an executor was scoped. It parses every non-test Go file
// of the module, whatever its build tags.
func TestOnlyScopeAndSuiteSeal(t *testing.T) {
	root, module, err := layout.Root()
	require.NoError(t, err)
	seen := 0
	require.NoError(t, layout.GoFiles(root, func(rel string) error {
		if strings.HasSuffix(rel, "_test.go") || slices.Contains(sealers, filepath.ToSlash(filepath.Dir(rel))) {
			return nil
		}
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return err
		}
		seen++
		for _, at := range sealCalls(t, rel, src, module+"/internal/stmt") {
			t.Errorf("%s: calls stmt.New; only %q may make a Statement (add a way to make it there instead)", at, sealers[:2])
		}
		return nil
	}))
	require.GreaterOrEqual(t, seen, 100, "read")
}

// sealers are the packages (directories from the module root) whose
// non-test code may call stmt.New.
var sealers = []string{"sql/scope", "endpoint/executortest", "internal/stmt"}

// TestSealCallsFindsEveryForm: the walk's detector sees the constructor
// called or taken as a value, under any import name, and by a dot import.
func TestSealCallsFindsEveryForm(t *testing.T) {
	const path = "github.com/endpointkit/endpointkit/internal/stmt"
	for _, c := range []struct {
		src  string
		want int
	}{
		{`package p; import "` + path + `"; var s = stmt.New("SELECT 1", nil)`, 1},
		{`package p; import sealed "` + path + `"; var f = sealed.New`, 1},
		{`package p; import . "` + path + `"; var s = New("SELECT 1", nil)`, 1},
		{`package p; import "` + path + `"; func f(s stmt.Statement) string { return s.SQL() }`, 0},
		{`package p; import "other/stmt"; var s = stmt.New("x", nil)`, 0},
	} {
		assert.Len(t, sealCalls(t, "p.go", []byte(c.src), path), c.want, "%s", c.src)
	}
}

// sealCalls returns the positions in src where stmt.New (of the package
// at importPath) is used.
func sealCalls(t *testing.T, path string, src []byte, importPath string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	require.NoError(t, err, "parsing %s", path)
	local, dot := "", false
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p != importPath {
			continue
		}
		switch {
		case imp.Name == nil:
			local = "stmt"
		case imp.Name.Name == ".":
			dot = true
		case imp.Name.Name != "_":
			local = imp.Name.Name
		}
	}
	if local == "" && !dot {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && local != "" && id.Name == local && x.Sel.Name == "New" {
				out = append(out, fset.Position(x.Pos()).String())
			}
			return false
		case *ast.Ident:
			if dot && x.Name == "New" {
				out = append(out, fset.Position(x.Pos()).String())
			}
		}
		return true
	})
	return out
}

// ExampleStatement shows what an executor reads of a Statement.
func ExampleStatement() {
	st := stmt.New("SELECT name FROM plans WHERE price >= ?", []any{int64(10)})
	fmt.Println(st.SQL(), st.Args())
	// Output: SELECT name FROM plans WHERE price >= ? [10]
}

// TestByUser: a statement is the library's unless marked as its author's
// query, and marking keeps its text and arguments.
func TestByUser(t *testing.T) {
	s := stmt.New("SELECT ?", []any{int64(1)})
	require.False(t, s.User(), "a new statement is the library's")
	u := s.ByUser()
	require.True(t, u.User(), "ByUser")
	require.False(t, s.User(), "ByUser")
	require.Equal(t, s.SQL(), u.SQL(), "ByUser")
	require.Len(t, u.Args(), 1, "ByUser")
}
