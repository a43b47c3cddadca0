package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostLike are the directories outside endpoint/ whose packages may import
// those under it, as a host does: the examples (a host's code), and
// internal/equivalence, a package of tests only that runs the whole
// Service, its HTTP API and /mcp against every engine, as a host would,
// internal/docs, whose tests run the documents' examples as a host
// writes them, and internal/heldexec, whose tests run its fake over a real
// executor as the tests that share it do.
var hostLike = []string{"examples", "internal/equivalence", "internal/docs", "internal/heldexec"}

// floorsToMove are the imports that break the floors today, each to move:
// the chDB forms of package access's tests register an engine reached
// through endpoint/chdb (the only way to chDB); the connection belongs a
// floor down (or the tests in a host-like package). A new break fails
// TestFloors; one moved must leave this list.
var floorsToMove = map[string]bool{
	"sql/access/chdb_test.go -> endpoint/chdb": true,
}

// TestFloors: no package outside endpoint/ imports one under it, but
// endpoint/driver, which implementers import as drivers import
// database/sql/driver (and the hostLike directories). The ground (sql/,
// placeholder, insight, materialize, variable, internal/) stays under the
// service, never the other way round. Test files count: a test that needs
// the Service belongs with the Service or in a host-like package.
func TestFloors(t *testing.T) {
	root, module := moduleRoot(t)
	fset := token.NewFileSet()
	seen, found := 0, map[string]bool{}
	require.NoError(t, GoFiles(root, func(rel string) error {
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		seen++
		for _, imp := range f.Imports {
			p, _ := stringLit(imp.Path)
			if !breaksFloor(path.Dir(rel), p, module) {
				continue
			}
			at := rel + " -> " + strings.TrimPrefix(p, module+"/")
			if floorsToMove[at] {
				found[at] = true
				continue
			}
			t.Errorf("%s imports %s: a package outside endpoint/ imports one under it (endpoint/driver aside); move what it needs down a floor", rel, p)
		}
		return nil
	}))
	require.Greater(t, seen, 300, "the walk missed the module")
	for at := range floorsToMove {
		assert.True(t, found[at], "%s no longer breaks the floors: take it off floorsToMove", at)
	}
}

// breaksFloor reports whether the package in directory dir (relative to
// the module's root) importing imp breaks the floors.
func breaksFloor(dir, imp, module string) bool {
	target, ok := strings.CutPrefix(imp, module+"/")
	if !ok || !under(target, "endpoint") || target == "endpoint/driver" || under(dir, "endpoint") {
		return false
	}
	return !slices.ContainsFunc(hostLike, func(h string) bool { return under(dir, h) })
}

// under reports whether the slash path p is dir or lies below it.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

func TestBreaksFloor(t *testing.T) {
	const m = "example.com/m"
	for _, c := range []struct {
		dir, imp string
		want     bool
	}{
		{"materialize", m + "/endpoint", true},
		{"sql/engine", m + "/endpoint/sqlexec", true},
		{"internal/apierror", m + "/endpoint/limit", true},
		{".", m + "/endpoint/httpapi", true},
		{"internal/apierror", m + "/endpoint/driver", false},
		{"endpoint/httpapi", m + "/endpoint", false},
		{"endpoint", m + "/endpoint/apikey", false},
		{"examples/server", m + "/endpoint/mcp", false},
		{"internal/equivalence", m + "/endpoint/sqlexec", false},
		{"internal/equivalencex", m + "/endpoint/sqlexec", true},
		{"materialize", m + "/endpointer", false},
		{"materialize", m + "/sql/engine", false},
		{"materialize", "other.org/endpoint", false},
	} {
		assert.Equal(t, c.want, breaksFloor(c.dir, c.imp, m), "%s importing %s", c.dir, c.imp)
	}
}

// engineNames are the names ByName accepts, which a comparison outside
// sql/engine would tell the engines apart by.
var engineNames = []string{"sqlite", "sqlite3", "postgresql", "postgres", "pgx", "mysql", "mariadb", "clickhouse", "chdb"}

// engineValues are the engines package sql/engine declares.
var engineValues = []string{"SQLite", "PostgreSQL", "MySQL", "ClickHouse"}

// namesToMove are the comparisons of engine names left, by file and count,
// each to move into engine.Engine: none now. A new comparison fails the
// test; a file listed here must hold exactly its count.
var namesToMove = map[string]int{}

// TestEngineNamesOnlyInEngine: no code outside sql/engine tells the engines
// apart: an engine's name (engine.SQLite.Name(), or "sqlite", "mysql", ...)
// or an engine value (engine.MySQL) compared with == or != or as a switch
// case, or with strings.EqualFold. A difference between engines is a
// method or a property of the engine. The examples, which read the names a
// user gives on the command line, and tests aside.
func TestEngineNamesOnlyInEngine(t *testing.T) {
	root, module := moduleRoot(t)
	fset := token.NewFileSet()
	seen := 0
	require.NoError(t, GoFiles(root, func(rel string) error {
		if strings.HasSuffix(rel, "_test.go") || under(rel, "examples") || under(path.Dir(rel), "sql/engine") {
			return nil
		}
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return err
		}
		seen++
		ats := engineComparisons(t, fset, rel, src, module+"/sql/engine")
		if n, ok := namesToMove[rel]; ok {
			assert.Len(t, ats, n, "%s: %d comparisons of engine names left to move; update namesToMove", rel, n)
			return nil
		}
		for _, at := range ats {
			t.Errorf("%s: tells the engines apart; make the difference a method or a property of engine.Engine", at)
		}
		return nil
	}))
	require.Greater(t, seen, 200, "the walk missed the module")
}

// engineComparisons returns the positions in src where an engine name or
// value (of the package at enginePath) is compared.
func engineComparisons(t *testing.T, fset *token.FileSet, name string, src []byte, enginePath string) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, name, src, 0)
	require.NoError(t, err)
	pkg := ""
	for _, imp := range f.Imports {
		if p, _ := stringLit(imp.Path); p == enginePath {
			pkg = path.Base(enginePath)
			if imp.Name != nil {
				pkg = imp.Name.Name
			}
		}
	}
	var isEngine func(e ast.Expr) bool
	isEngine = func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.ParenExpr:
			return isEngine(e.X)
		case *ast.BasicLit:
			v, ok := stringLit(e)
			return ok && slices.Contains(engineNames, strings.ToLower(v))
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok && pkg != "" && x.Name == pkg && slices.Contains(engineValues, e.Sel.Name) {
				return true // engine.MySQL
			}
			return e.Sel.Name == "Name" && isEngine(e.X) // engine.MySQL.Name
		case *ast.CallExpr:
			return len(e.Args) == 0 && isEngine(e.Fun) // engine.MySQL.Name()
		}
		return false
	}
	var out []string
	at := func(n ast.Node) { out = append(out, fset.Position(n.Pos()).String()) }
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if (n.Op == token.EQL || n.Op == token.NEQ) && (isEngine(n.X) || isEngine(n.Y)) {
				at(n)
			}
		case *ast.CaseClause:
			if slices.ContainsFunc(n.List, isEngine) {
				at(n)
			}
		case *ast.CallExpr:
			if s, ok := n.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "EqualFold" && slices.ContainsFunc(n.Args, isEngine) {
				at(n)
			}
		}
		return true
	})
	return out
}

func TestEngineComparisonsFindsEveryForm(t *testing.T) {
	const path = "example.com/m/sql/engine"
	for _, c := range []struct {
		src  string
		want int
	}{
		{`package p; import "` + path + `"; func f(e engine.Engine) bool { return e.Name() == engine.SQLite.Name() }`, 1},
		{`package p; import "` + path + `"; func f(e engine.Engine) bool { return e != engine.MySQL }`, 1},
		{`package p; import eng "` + path + `"; func f(e eng.Engine) bool { return (eng.MySQL.Name()) != e.Name() }`, 1},
		{`package p; func f(name string) bool { return name == "mysql" || "SQLite" == name }`, 2},
		{`package p; func f(name string) int { switch name { case "postgresql": return 1; case "x", "clickhouse": return 2 }; return 0 }`, 2},
		{`package p; import "` + path + `"; func f(e engine.Engine) int { switch e { case engine.PostgreSQL, engine.MySQL: return 1 }; return 0 }`, 1},
		{`package p; import "strings"; func f(n string) bool { return strings.EqualFold(n, "MariaDB") }`, 1},
		{`package p; import "` + path + `"; func f(e engine.Engine) bool { return e.SingleWriter() && e.Name() != "" }`, 0},
		{`package p; import "database/sql"; func f() { sql.Open("sqlite", ":memory:") }`, 0},
		{`package p; import "other/engine"; func f(e engine.E) bool { return e == engine.MySQL }`, 0},
	} {
		assert.Len(t, engineComparisons(t, token.NewFileSet(), "p.go", []byte(c.src), path), c.want, c.src)
	}
}

func moduleRoot(t *testing.T) (dir, module string) {
	t.Helper()
	dir, module, err := Root()
	require.NoError(t, err)
	return dir, module
}

// maxFacadeFiles is how many non-test files package endpoint may hold:
// the Service read in call order (issue 38), with what needs no Service in
// packages of its own.
const maxFacadeFiles = 15

// TestEndpointIsAFacade: package endpoint holds at most maxFacadeFiles
// non-test files; a new concern gets a package, or joins the file of the
// step it belongs to.
func TestEndpointIsAFacade(t *testing.T) {
	root, _ := moduleRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "endpoint", "*.go"))
	require.NoError(t, err)
	var code []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			code = append(code, filepath.Base(f))
		}
	}
	assert.LessOrEqual(t, len(code), maxFacadeFiles, "endpoint's files: %v", code)
}
