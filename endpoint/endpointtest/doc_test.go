package endpointtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"
)

// TestPackageDocDo: the package documentation's call of Do assigns as many
// values as Do returns (it showed `resp := env.Do(...)`, which does not
// compile against Do's (int, string)).
func TestPackageDocDo(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "endpointtest.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	var line string
	for _, l := range strings.Split(f.Doc.Text(), "\n") {
		if strings.Contains(l, "env.Do(") {
			line = strings.TrimSpace(l)
		}
	}
	if v := line; v == "" {
		t.Fatalf("the package doc shows Do: line is empty")
	}
	stmt, err := parser.ParseExpr("func() { " + strings.SplitN(line, "//", 2)[0] + " }")
	if err != nil {
		t.Fatalf("%v: unexpected error: %v", line, err)
	}
	assign, ok := stmt.(*ast.FuncLit).Body.List[0].(*ast.AssignStmt)
	if !ok {
		t.Fatalf("%s: not an assignment: ok is false", line)
	}
	if got, want := len(assign.Lhs), reflect.TypeOf((*Env).Do).NumOut(); got != want {
		t.Errorf("%s: Do returns (int, string): len(assign.Lhs) = %v, want %v", line, got, want)
	}
}
