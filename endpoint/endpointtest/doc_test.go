package endpointtest

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
	var line string
	for _, l := range strings.Split(f.Doc.Text(), "\n") {
		if strings.Contains(l, "env.Do(") {
			line = strings.TrimSpace(l)
		}
	}
	v := line
	require.NotEqual(t, "", v, "the package doc shows Do: line is empty")
	stmt, err := parser.ParseExpr("func() { " + strings.SplitN(line, "//", 2)[0] + " }")
	require.NoError(t, err, "%v", line)
	assign, ok := stmt.(*ast.FuncLit).Body.List[0].(*ast.AssignStmt)
	require.True(t, ok, "%s: not an assignment: ok is false", line)
	got, want := len(assign.Lhs), reflect.TypeOf((*Env).Do).NumOut()
	assert.Equal(t, want, got, "%s: Do returns (int, string): len(assign.Lhs)", line)
}
