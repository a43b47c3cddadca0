package endpoint

import (
	"github.com/stretchr/testify/require"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneWayToTheExecutor: in this package, only the three gateways call
// the executor, and each takes a scope.Statement, which only package
// sql/scope makes: a new way for a run to happen cannot send the
// executor SQL that was not scoped. It fails when a function outside them
// calls a method of the Executor.
func TestOneWayToTheExecutor(t *testing.T) {
	gateways := map[string]bool{"executeCapped": true, "execAll": true, "execWithin": true, "queryOwn": true,
		"query": true} // stream.go: executeCapped's call of the executor
	methods := map[string]bool{"Query": true, "QueryRows": true, "Exec": true}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !methods[sel.Sel.Name] {
					return true
				}
				recv := string(src[fset.Position(sel.X.Pos()).Offset:fset.Position(sel.X.End()).Offset])
				if !strings.Contains(recv, "Executor") {
					return true
				}
				calls++
				if !gateways[fn.Name.Name] {
					t.Errorf("%s: %s calls %s.%s: run statements through executeCapped, execAll or queryOwn, which take a scope.Statement", fset.Position(call.Pos()), fn.Name.Name, recv, sel.Sel.Name)
				}
				return true
			})
		}
	}
	require.NotEqual(t, 0, calls, "no call of the executor found: the test no longer sees them")
}
