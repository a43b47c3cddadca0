package materialize

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
	"github.com/stretchr/testify/require"
)

// parseSelect reads src, one SELECT, for engine d as Analyze reads it.
func parseSelect(t *testing.T, d engine.Engine, src string) *tree.Select {
	t.Helper()
	tr, err := tree.Parse(d, src)
	require.NoError(t, err, "%v", src)
	require.NoError(t, normalize(tr))
	sel, ok := tr.Stmt.(*tree.Select)
	require.True(t, ok, "%v is not a single SELECT", src)
	return sel
}

// parseExpr reads the expression src as the item of SELECT src FROM t.
func parseExpr(t *testing.T, src string) tree.Expr {
	t.Helper()
	sel := parseSelect(t, engine.SQLite, "select "+src+" from t")
	return sel.SelectExprs[0].(*tree.AliasedExpr).Expr
}
