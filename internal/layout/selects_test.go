package layout

import (
	"go/ast"
	"go/token"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// selectBuilders are the packages (directories from the module root) whose
// non-test code may build the text of a query (SELECT or WITH) from parts
// that are not constants, and why each may: none of them splices the text
// a user wrote, which only sql/tree prints (see TestOnlyTheTreePrintsTheTree).
var selectBuilders = map[string]string{
	"sql/tree":    "the printer",
	"materialize": "assembles its statements from the tree's normal form (tree.Normal), generated column names and bind markers; the source reads among them are scoped by the tree again (sql/scope.Plan)",
	"insight":     "compiles an insight query (JSON, not SQL) into SQL: names quoted for the engine, values bound",
	"sql/engine":  "the engines' catalog and size reads (quoted names, literals escaped by the engine) and the paging wrapper, whose output sql/scope.Compile reads and prints through the tree",
	"sql/scope":   "reads of the rules' tables by quoted name (Describe's text is scoped by the tree)",

	"endpoint/executortest": "the executor conformance suite's fixtures",
	"endpoint/storetest":    "the store conformance suite's fixtures",
	"examples/server":       "an example host's count of the demo events, its project bound",
	"endpoint/sqlstore":     "the library's own tables: constant table and column names, values bound",
}

// queryStart matches text that starts a query, after spaces and opening
// parentheses: SELECT or WITH in capitals, as the library writes its
// keywords (a message that starts "with" is no query).
var queryStart = regexp.MustCompile(`^[\s(]*(SELECT|WITH)\s`)

// TestOnlySomePackagesBuildQueries: a query's text is built from parts
// that are not constants (concatenation, a format, a builder) only in the
// packages of selectBuilders (issue 37: no statement is printed from user
// text). A new place that builds one is either printed by sql/tree or
// added to the list with its reason.
func TestOnlySomePackagesBuildQueries(t *testing.T) {
	found := sourceFindings(t, queryBuilds)
	findingsOutside(t, found, func(dir string) bool { return selectBuilders[dir] != "" },
		"builds the text of a query from parts that are not constants; print it with sql/tree, or add the package to selectBuilders with its reason")
	for dir := range selectBuilders {
		assert.NotEmpty(t, found[dir], "%s builds no query any more: take it off selectBuilders", dir)
	}
}

// queryBuilds returns the positions in src where a query's text is built
// from parts that are not all constants: a concatenation whose first
// string starts a query, a format (fmt.Sprintf and the like) whose format
// starts one and has arguments, or a string that starts one written to a
// builder (WriteString, or a method w).
func queryBuilds(t *testing.T, fset *token.FileSet, rel string, src []byte) []string {
	return inspectSource(t, fset, rel, src, func(n ast.Node, at func(ast.Node)) bool {
		switch x := n.(type) {
		case *ast.BinaryExpr:
			if x.Op != token.ADD {
				return true
			}
			ops := flatten(x)
			if startsQuery(ops[0]) && !allLiterals(ops) {
				at(x)
				return false
			}
		case *ast.CallExpr:
			sel, ok := x.Fun.(*ast.SelectorExpr)
			if !ok || len(x.Args) == 0 {
				return true
			}
			switch name := sel.Sel.Name; {
			case strings.HasSuffix(name, "printf") || strings.HasSuffix(name, "Printf") || name == "Appendf":
				for i, a := range x.Args {
					if startsQuery(a) && i < len(x.Args)-1 {
						at(x)
						return false
					}
				}
			case name == "WriteString" || name == "w":
				if startsQuery(x.Args[0]) {
					at(x)
					return false
				}
			}
		}
		return true
	})
}

// flatten returns the operands of a chain of +, left to right.
func flatten(e ast.Expr) []ast.Expr {
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.ADD {
		return append(flatten(b.X), flatten(b.Y)...)
	}
	if p, ok := e.(*ast.ParenExpr); ok {
		return flatten(p.X)
	}
	return []ast.Expr{e}
}

func allLiterals(es []ast.Expr) bool {
	for _, e := range es {
		if l, ok := e.(*ast.BasicLit); !ok || l.Kind != token.STRING {
			return false
		}
	}
	return true
}

// startsQuery reports whether e is a string literal that starts a query.
func startsQuery(e ast.Expr) bool {
	s, ok := stringLit(e)
	return ok && queryStart.MatchString(s)
}

// TestQueryBuildsFindsEveryForm: the detector sees a query built by
// concatenation, by a format and on a builder, and leaves constant text
// and messages alone.
func TestQueryBuildsFindsEveryForm(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{`package p; func f(q string) string { return "SELECT * FROM (" + q + ") AS t" }`, 1},
		{`package p; func f(q string) string { return ("(SELECT a FROM " + q) }`, 1},
		{`package p; import "fmt"; func f(q string) string { return fmt.Sprintf("WITH x AS (%s) SELECT 1", q) }`, 1},
		{`package p; import "strings"; func f(b *strings.Builder) { b.WriteString("SELECT ") }`, 1},
		{`package p; const q = "SELECT " + "1"`, 0},
		{`package p; func f() string { return "SELECT 1" }`, 0},
		{`package p; import "fmt"; func f(n int) error { return fmt.Errorf("selected %d rows", n) }`, 0},
		{`package p; func f(s string) string { return "selection: " + s }`, 0},
		{`package p; import "fmt"; func f(n string) string { return fmt.Sprintf("with name %q", n) }`, 0},
	} {
		assert.Len(t, queryBuilds(t, token.NewFileSet(), "p.go", []byte(c.src)), c.want, c.src)
	}
}
