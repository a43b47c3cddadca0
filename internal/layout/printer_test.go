package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// treePrinters are the packages (directories from the module root) whose
// non-test code may print the nodes of the syntax tree as SQL: package
// sql/tree, whose Printer prints the statements as written, with their
// tenant scope, and in the normal form (tree.Normal) that materialize
// assembles its statements from.
var treePrinters = []string{"sql/tree"}

// TestOnlyTheTreePrintsTheTree: no package but sql/tree prints the tree
// (issue 37: one printer per engine). A second printer of the same nodes
// is how two spellings of one query drift apart (materialize had one,
// format.go, until the tree's normal form replaced it). It parses every
// non-test Go file of the module and looks for a function that switches
// on the tree's node types and writes SQL keywords (see treePrinting).
func TestOnlyTheTreePrintsTheTree(t *testing.T) {
	printers := findingsOutside(t, sourceFindings(t, treePrinting), inDirs(treePrinters), fmt.Sprintf("prints nodes of the syntax tree as SQL; only %q may (use tree.Printer, or tree.Normal for generated text)", treePrinters))
	require.Positive(t, printers, "the tree's own printer was not found: the detector is blind")
}

// sqlWords are the keywords a printer of the tree writes.
var sqlWords = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "XOR": true, "CASE": true, "WHEN": true, "THEN": true, "ELSE": true,
	"END": true, "SELECT": true, "FROM": true, "WHERE": true, "JOIN": true, "ON": true, "USING": true,
	"GROUP BY": true, "ORDER BY": true, "HAVING": true, "LIMIT": true, "OFFSET": true, "INTERVAL": true,
	"EXISTS": true, "DISTINCT": true, "OVER": true, "CAST(": true, "AS": true, "ESCAPE": true, "COLLATE": true,
}

// treePrinting returns the positions in src of the functions that print
// tree nodes: a type switch with a case of a type of package tree (tree.X
// or *tree.X, or a bare node type inside package tree), and, in the same
// function, a string literal that is an SQL keyword with the spaces
// around it (" AND ", "CASE ", " FROM ").
func treePrinting(t *testing.T, fset *token.FileSet, rel string, src []byte) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	require.NoError(t, err, "parsing %s", rel)
	inTree := f.Name.Name == "tree"
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		switches, words := false, false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.TypeSwitchStmt:
				for _, s := range x.Body.List {
					for _, e := range s.(*ast.CaseClause).List {
						switches = switches || treeType(e, inTree)
					}
				}
			case *ast.BasicLit:
				if s, ok := stringLit(x); ok && strings.TrimSpace(s) != s && sqlWords[strings.TrimSpace(s)] {
					words = true
				}
			}
			return true
		})
		if switches && words {
			out = append(out, fset.Position(fn.Pos()).String())
		}
	}
	return out
}

// treeType reports whether e names a type of package tree: tree.X or
// *tree.X, or *X inside package tree.
func treeType(e ast.Expr, inTree bool) bool {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
		if id, ok := e.(*ast.Ident); ok && inTree {
			return id.Name != "Error"
		}
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "tree"
}

// TestTreePrintingFindsEveryForm: the detector sees a printer of tree
// nodes with or without a pointer, in package tree or outside it, and
// leaves alone a switch that writes no keyword and keywords written
// without a switch on the tree.
func TestTreePrintingFindsEveryForm(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{`package p; import "x/tree"; func f(e tree.Expr) string { switch e.(type) { case *tree.AndExpr: return " AND " }; return "" }`, 1},
		{`package p; import "x/tree"; func f(e tree.Expr) (s string) { switch x := e.(type) { case tree.Literal: s = x.Text + " OR " }; return }`, 1},
		{`package tree; func f(e Expr) string { switch e.(type) { case *CaseExpr: return "CASE " }; return "" }`, 1},
		{`package p; import "x/tree"; func f(e tree.Expr) bool { switch e.(type) { case *tree.AndExpr: return true }; return false }`, 0},
		{`package p; func f(a, b string) string { return a + " AND " + b }`, 0},
		{`package p; import "x/tree"; func f(e tree.Expr) string { switch e.(type) { case *tree.AndExpr: return "AND" }; return "" }`, 0},
	} {
		assert.Len(t, treePrinting(t, token.NewFileSet(), "p.go", []byte(c.src)), c.want, c.src)
	}
}
