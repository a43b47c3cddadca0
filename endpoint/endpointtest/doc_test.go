package endpointtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NotEmpty(t, line, "the package doc shows Do")
	stmt, err := parser.ParseExpr("func() { " + strings.SplitN(line, "//", 2)[0] + " }")
	require.NoError(t, err, line)
	assign, ok := stmt.(*ast.FuncLit).Body.List[0].(*ast.AssignStmt)
	require.True(t, ok, "%s: not an assignment", line)
	assert.Equal(t, reflect.TypeOf((*Env).Do).NumOut(), len(assign.Lhs), "%s: Do returns (int, string)", line)
}
