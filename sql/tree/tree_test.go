package tree_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/tree"
)

// TestRewritePrintsGeneratedTextInPlace: a replaced node prints as
// generated text where the node it replaced stood; the rest of the query,
// comments and spacing included, prints as written.
func TestRewritePrintsGeneratedTextInPlace(t *testing.T) {
	src := "SELECT  count(*) AS n -- how many\nFROM events\nWHERE ts BETWEEN {variables.from} AND {variables.to} /* range */ AND event = 'x'"
	tr := parse(t, engine.PostgreSQL, src)
	// BETWEEN as >= and <=, as materialize rewrites it.
	root, err := tree.Rewrite(tr.Stmt, func(n tree.Node) tree.Node {
		r, ok := n.(*tree.RangeCond)
		if !ok || r.Operator != "BETWEEN" {
			return n
		}
		return &tree.AndExpr{
			Left:  &tree.ComparisonExpr{Operator: ">=", Left: r.Left, Right: r.From},
			Right: &tree.ComparisonExpr{Operator: "<=", Left: r.Left, Right: r.To},
		}
	})
	require.NoError(t, err)
	tr.Stmt = root.(tree.SelectStatement)
	assert.Equal(t, "SELECT  count(*) AS n -- how many\nFROM events\nWHERE (ts >= {variables.from} AND ts <= {variables.to}) /* range */ AND event = 'x'", printed(t, tr))

	// A node a caller changed in place prints generated, its children
	// as written.
	sel := tr.Stmt.(*tree.Select)
	sel.SelectExprs = append(sel.SelectExprs, &tree.AliasedExpr{Expr: &tree.ColName{Name: tree.NewIdent("Event")}, As: tree.NewIdent("e")})
	tree.MarkChanged(sel)
	assert.Equal(t, `SELECT count(*) AS n, "Event" AS e FROM events WHERE (ts >= {variables.from} AND ts <= {variables.to}) /* range */ AND event = 'x'`, printed(t, tr))

	// On MySQL a new name is quoted with backticks.
	tr = parse(t, engine.MySQL, "SELECT a FROM t")
	root, err = tree.Rewrite(tr.Stmt, func(n tree.Node) tree.Node {
		if c, ok := n.(*tree.ColName); ok {
			return &tree.ColName{Qualifier: c.Qualifier, Name: tree.NewIdent("select")}
		}
		return n
	})
	require.NoError(t, err)
	tr.Stmt = root.(tree.SelectStatement)
	assert.Equal(t, "SELECT `select` FROM t", printed(t, tr))
}

// TestText prints one node: as written, or generated once replaced.
func TestText(t *testing.T) {
	src := "SELECT a FROM t WHERE x BETWEEN 1 AND  2"
	tr := parse(t, engine.ClickHouse, src)
	where := tr.Stmt.(*tree.Select).Where.(*tree.RangeCond)
	out, err := tree.Text(tr, where)
	require.NoError(t, err)
	assert.Equal(t, "x BETWEEN 1 AND  2", out)
	out, err = tree.Text(tr, &tree.ComparisonExpr{Operator: ">=", Left: where.Left, Right: where.From})
	require.NoError(t, err)
	assert.Equal(t, "x >= 1", out)
}

// TestRewriteRefusesAMisplacedNode: a replacement of the wrong kind is an
// error, and the tree is left as it was.
func TestRewriteRefusesAMisplacedNode(t *testing.T) {
	tr := parse(t, engine.SQLite, "SELECT a FROM t")
	_, err := tree.Rewrite(tr.Stmt, func(n tree.Node) tree.Node {
		if _, ok := n.(*tree.AliasedTableExpr); ok {
			return &tree.Literal{Kind: tree.NumVal, Text: "1"}
		}
		return n
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot stand where a FROM item does")
	assert.Equal(t, "SELECT a FROM t", printed(t, tr))
}

// TestWalk visits every node in the order of the text and stops when
// asked.
func TestWalk(t *testing.T) {
	src := "SELECT a FROM t WHERE b = {variables.x} AND c IN (SELECT d FROM u WHERE e = {variables.y})"
	tr := parse(t, engine.ClickHouse, src)
	var names []string
	require.NoError(t, tree.Walk(func(n tree.Node) (bool, error) {
		if p, ok := n.(*tree.Placeholder); ok {
			names = append(names, p.Name)
		}
		return true, nil
	}, tr.Stmt))
	assert.Equal(t, []string{"x", "y"}, names)

	names = nil
	require.NoError(t, tree.Walk(func(n tree.Node) (bool, error) {
		if _, ok := n.(*tree.Subquery); ok {
			return false, nil // not into subqueries
		}
		if p, ok := n.(*tree.Placeholder); ok {
			names = append(names, p.Name)
		}
		return true, nil
	}, tr.Stmt))
	assert.Equal(t, []string{"x"}, names)

	boom := errors.New("boom")
	assert.ErrorIs(t, tree.Walk(func(tree.Node) (bool, error) { return false, boom }, tr.Stmt), boom)
	assert.NoError(t, tree.Walk(func(tree.Node) (bool, error) { return false, tree.ErrStop }, tr.Stmt))
}

// TestSpans: every node knows where it was read.
func TestSpans(t *testing.T) {
	src := "SELECT x\nFROM t\nWHERE ts >= {variables.from} - interval '90' day"
	tr := parse(t, engine.PostgreSQL, src)
	where := tr.Stmt.(*tree.Select).Where.(*tree.ComparisonExpr)
	s := where.Right.Span()
	assert.Equal(t, "{variables.from} - interval '90' day", src[s.Start:s.End])
	s = where.Right.(*tree.BinaryExpr).Right.Span()
	assert.Equal(t, "interval '90' day", src[s.Start:s.End])
	require.NoError(t, tree.Walk(func(n tree.Node) (bool, error) {
		s := n.Span()
		assert.True(t, s.Start < s.End && s.End <= len(src), "%T at %v", n, s)
		return true, nil
	}, tr.Stmt))
}

// TestErrors: a query the parser cannot read is an *Error that says what
// and where in the user's words.
func TestErrors(t *testing.T) {
	cases := []struct{ q, detail string }{
		{"SELECT a\nFROM t\nWHERE b IN (1, 2", `expected ) to close the ( at line 3, column 12, found the end of the query`},
		{"SELECT count(a FROM t", `expected ) to close the ( at line 1, column 13, found "FROM"`},
		{"SELECT CASE WHEN a THEN 1 FROM t", `expected END to close the CASE at line 1, column 8, found "FROM"`},
		{"", "the query is empty"},
		{"DELETE FROM t", `a query must start with SELECT, WITH or a parenthesised SELECT, found "DELETE"`},
		{"SELECT 1; SELECT 2", "only one statement is allowed: remove the ';' and what follows it"},
		{"SELECT a FROM t WHERE", "expected a value, found the end of the query"},
		{"SELECT 'abc FROM t", "the string starting with ' is never closed"},
		{"SELECT a FROM t)", "this ) closes no ("},
		{"SELECT a FROM WHERE x", `expected a table name, found "WHERE"`},
		{"SELECT {variables.", "malformed placeholder: expected {variables.<code_name>}"},
		{"SELECT x::pg_read_file('/etc/passwd') FROM t", `"pg_read_file" is not a type that takes parameters`},
		{"SELECT CAST(x AS varchar(f(1))) FROM t", `"f" is not a type that takes parameters`},
		{"SELECT CAST(x AS numeric(10, (SELECT 1))) FROM t", `unexpected "(" in a type`},
		{"SELECT CAST(x AS int * 2) FROM t", `unexpected "*" in a type`},
	}
	for _, c := range cases {
		_, err := tree.Parse(engine.PostgreSQL, c.q)
		var te *tree.Error
		if assert.ErrorAs(t, err, &te, c.q) {
			assert.Equal(t, c.detail, te.Detail, c.q)
			assert.ErrorIs(t, err, tree.ErrSyntax)
			assert.NotContains(t, te.Error(), "tree.", "no Go identifiers in messages")
		}
	}
	_, err := tree.Parse(engine.PostgreSQL, "SELECT a\nFROM t\nWHERE b IN (1, 2")
	var te *tree.Error
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 3, te.Line)
	assert.Equal(t, 17, te.Column)
}

// TestDepthLimit: deep nesting is a named error, not a stack overflow.
func TestDepthLimit(t *testing.T) {
	for _, q := range []string{
		"SELECT " + strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000),
		"SELECT " + strings.Repeat("- ", 10000) + "1",
		"SELECT " + strings.Repeat("NOT ", 10000) + "1",
		strings.Repeat("(", 10000) + "SELECT 1" + strings.Repeat(")", 10000),
		"SELECT 1 FROM " + strings.Repeat("(", 5000) + "t" + strings.Repeat(")", 5000),
		"SELECT " + strings.Repeat("f(", 5000) + "1" + strings.Repeat(")", 5000),
	} {
		_, err := tree.Parse(engine.PostgreSQL, q)
		require.ErrorIs(t, err, tree.ErrTooDeep, q[:40])
		assert.Contains(t, err.Error(), "nested too deeply")
	}
	parse(t, engine.PostgreSQL, "SELECT "+strings.Repeat("(", 50)+"1"+strings.Repeat(")", 50))
}

// TestTypesStringPrefixesAndColumnDefinitions: a type's parameters are
// read (numbers, strings, names, nested types), a string may carry its
// prefix (E”, N”, X”, B”), and a table function's alias may give its
// columns types (PostgreSQL's column definition list); each prints back
// as written.
func TestTypesStringPrefixesAndColumnDefinitions(t *testing.T) {
	for _, q := range []string{
		"SELECT CAST(x AS DECIMAL(10, 2)), x::numeric(3, 1), CAST(y AS Nullable(DateTime64(3, 'UTC'))), z::text[] FROM t",
		"SELECT E'x', N'y', X'ff', B'01' FROM t",
		"SELECT * FROM json_to_recordset('[{\"a\": 1}]') AS x(a int, b text[], c numeric(10, 2))",
		"SELECT * FROM dblink('db', 'SELECT 1') AS t(a int)",
	} {
		assert.Equal(t, q, printed(t, parse(t, engine.PostgreSQL, q)))
	}
	tr := parse(t, engine.PostgreSQL, "SELECT * FROM f(1) AS x(a int, b)")
	a := tr.Stmt.(*tree.Select).From[0].(*tree.AliasedTableExpr)
	assert.Equal(t, []string{"int", ""}, a.ColumnTypes)
	tree.MarkChanged(a)
	assert.Equal(t, "SELECT * FROM f(1) AS x(a int, b)", printed(t, tr), "generated text keeps the types")

	// A string prefix is one token with its string only when it touches it.
	_, err := tree.Parse(engine.PostgreSQL, "SELECT e 'x' FROM t")
	require.Error(t, err)
}

// parse parses src for e, failing t if it cannot.
func parse(t testing.TB, e engine.Engine, src string) *tree.Tree {
	t.Helper()
	tr, err := tree.Parse(e, src)
	require.NoError(t, err, src)
	return tr
}

// printed prints tr, failing t if it cannot.
func printed(t testing.TB, tr *tree.Tree) string {
	t.Helper()
	out, err := tree.Print(tr)
	require.NoError(t, err)
	return out
}
