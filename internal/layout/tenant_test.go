package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tenantPrinters are the packages (directories from the module root) whose
// non-test code may write a tenant condition into SQL text: package
// sql/tree's printer, the one place that confines a table reference to
// the tenant's rows. Package sql/access calls it (Query.Confine), and
// package insight writes the events through it (tree.WriteTable); neither
// writes one itself.
var tenantPrinters = []string{"sql/tree"}

// hostStatements are the functions (file from the module root, and name)
// of the example programs that write a tenant condition into a statement
// of their own, which they run on their own data through their own
// executor and which is none of the library's statements: the example
// server counts a project's demo events before it loads them.
var hostStatements = map[string]string{
	"examples/server/backend.go countEvents": "the example server's count of a project's demo events, before it loads them",
}

// TestOnlyThePrinterWritesTenantConditions: no package but the printer
// writes a tenant condition into SQL text (issue 37: one printer, from one
// place), so that every statement the library runs is confined where it is
// printed and nowhere else by hand. It parses every non-test Go file of
// the module, whatever its build tags, and looks for the forms such a
// write takes (see tenantConditions).
func TestOnlyThePrinterWritesTenantConditions(t *testing.T) {
	found := sourceFindings(t, tenantConditions)
	printers := findingsOutside(t, found, func(dir string) bool { return slices.Contains(tenantPrinters, dir) },
		fmt.Sprintf("writes a tenant condition into SQL text; only %q may (print the query with its tree.Printer and a tree.Scope, or write the table with tree.WriteTable, instead)", tenantPrinters))
	require.Positive(t, printers, "the printer's own tenant condition was not found: the detector is blind")

	// Each exemption still names a function that writes one, so that the
	// list holds no stale entry.
	root, _ := moduleRoot(t)
	for key := range hostStatements {
		rel, name, _ := strings.Cut(key, " ")
		src, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err, "hostStatements names %s", rel)
		f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
		require.NoError(t, err)
		n := 0
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == name {
				boundTenantEqualities(&ast.File{Name: f.Name, Decls: []ast.Decl{fd}}, "", func(ast.Node) { n++ })
				break
			}
		}
		assert.Positive(t, n, "hostStatements: %s writes no tenant condition any more; drop it from the list", key)
	}
}

// placeholderEquality is text that ends with an equality to a placeholder
// whose name the code fills in: "= {variables." before a concatenated
// name, or "= {variables.%s}" in a format. That is how a condition on a
// computed placeholder (the tenant's) is written; a comparison with
// another operator (<=, a build instant's bound) is not one.
var placeholderEquality = regexp.MustCompile(`(^|[^<>!=])=\s*\{\s*variables\s*\.\s*(%[sv]\s*\}.*)?$`)

// tenantConditions returns the positions in src where a tenant condition
// is written into SQL text:
//
//   - a string that ends with an equality to a placeholder whose name the
//     code fills in (" = {variables." + name + "}", "= {variables.%s}");
//   - a string that holds the condition with the tenant's placeholder
//     written out ("= {variables.__endpointkit_tenant}");
//   - text built from "{variables." and the tenant variable's name
//     (scope.TenantVariable, TenantVariable, tenantVariable);
//   - text that ends with an equality (" AND # = ", " = ?") written by a
//     statement that names the tenant, or followed by one that does (the
//     tenant's value bound by the next call: g.w(" AND # = ", t.Column);
//     g.Bind(t.Value)), see boundTenantEqualities.
func tenantConditions(t *testing.T, fset *token.FileSet, rel string, src []byte) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	require.NoError(t, err, "parsing %s", rel)
	var out []string
	seen := map[token.Pos]bool{}
	at := func(n ast.Node) {
		if !seen[n.Pos()] {
			seen[n.Pos()] = true
			out = append(out, fset.Position(n.Pos()).String())
		}
	}
	boundTenantEqualities(f, rel, at)
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BasicLit:
			if x.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(x.Value)
			if err != nil {
				return true
			}
			if placeholderEquality.MatchString(s) || strings.Contains(strings.ReplaceAll(s, " ", ""), "={variables.__endpointkit_tenant}") {
				at(x)
			}
		case *ast.BinaryExpr:
			if x.Op == token.ADD && mentionsPlaceholder(x) && mentionsTenantVariable(x) {
				at(x)
				return false
			}
		case *ast.CallExpr:
			if mentionsPlaceholder(x) && mentionsTenantVariable(x) {
				at(x)
				return false
			}
		}
		return true
	})
	return out
}

// sqlEquality is SQL text that ends with an equality, set apart by a space
// as SQL is written (" AND # = ", " = "), or with the bind marker of its
// value (" = ?", " = $1"); not a comparison with another operator, nor a
// URL's "?project=" or a flag's "KEY=PROJECT".
var sqlEquality = regexp.MustCompile(`\s=\s*(\?|\$\d+)?\s*$`)

// tenantWord is in the names of what holds a tenant: a Tenant, a tenant
// column, a project.
var tenantWord = regexp.MustCompile(`(?i)tenant|project`)

// boundTenantEqualities reports each string literal that writes an
// equality (sqlEquality) in a statement that names the tenant, or that the
// next statement of its block names the tenant in: the form a generator
// writes a tenant condition in when it binds the tenant's value rather than
// a placeholder. A name is the tenant's when it holds tenantWord, or when
// its function declares it with a type that does (t *Tenant, then t.Value).
// The functions hostStatements lists for file rel are left out.
func boundTenantEqualities(f *ast.File, rel string, at func(ast.Node)) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || hostStatements[rel+" "+fd.Name.Name] != "" {
			continue
		}
		typed := tenantTyped(fd)
		names := func(n ast.Node) bool {
			found := false
			ast.Inspect(n, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok && (tenantWord.MatchString(id.Name) || typed[id.Name]) {
					found = true
				}
				return !found
			})
			return found
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			var list []ast.Stmt
			switch b := n.(type) {
			case *ast.BlockStmt:
				list = b.List
			case *ast.CaseClause:
				list = b.Body
			case *ast.CommClause:
				list = b.Body
			default:
				return true
			}
			for i, s := range list {
				if _, ok := s.(*ast.BlockStmt); ok {
					continue // its statements are a block of their own
				}
				lit := equalityLiteral(s)
				if lit != nil && (names(s) || i+1 < len(list) && names(list[i+1])) {
					at(lit)
				}
			}
			return true
		})
	}
}

// equalityLiteral returns the string literal of statement s whose text
// ends with an equality (sqlEquality), nil when none does. Function
// literals and nested blocks are left to their own statements.
func equalityLiteral(s ast.Stmt) *ast.BasicLit {
	var lit *ast.BasicLit
	ast.Inspect(s, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit, *ast.BlockStmt:
			return false
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				if v, err := strconv.Unquote(x.Value); err == nil && sqlEquality.MatchString(v) {
					lit = x
				}
			}
		}
		return lit == nil
	})
	return lit
}

// tenantTyped returns the names that fd declares (receiver, parameters,
// results, var declarations) with a type whose name holds tenantWord.
func tenantTyped(fd *ast.FuncDecl) map[string]bool {
	out := map[string]bool{}
	typeNames := func(e ast.Expr) bool {
		found := false
		ast.Inspect(e, func(m ast.Node) bool {
			if id, ok := m.(*ast.Ident); ok && tenantWord.MatchString(id.Name) {
				found = true
			}
			return !found
		})
		return found
	}
	add := func(names []*ast.Ident, typ ast.Expr) {
		if typ != nil && typeNames(typ) {
			for _, n := range names {
				out[n.Name] = true
			}
		}
	}
	for _, fl := range []*ast.FieldList{fd.Recv, fd.Type.Params, fd.Type.Results} {
		if fl != nil {
			for _, fld := range fl.List {
				add(fld.Names, fld.Type)
			}
		}
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ValueSpec:
			add(x.Names, x.Type)
		case *ast.FuncLit:
			for _, fld := range x.Type.Params.List {
				add(fld.Names, fld.Type)
			}
		}
		return true
	})
	return out
}

// mentionsPlaceholder reports whether a string under n holds "{variables.".
func mentionsPlaceholder(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(m ast.Node) bool {
		if l, ok := m.(*ast.BasicLit); ok && l.Kind == token.STRING && strings.Contains(l.Value, "{variables.") {
			found = true
		}
		return !found
	})
	return found
}

// mentionsTenantVariable reports whether n names the tenant variable.
func mentionsTenantVariable(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(m ast.Node) bool {
		switch x := m.(type) {
		case *ast.Ident:
			found = found || x.Name == "TenantVariable" || x.Name == "tenantVariable"
		case *ast.BasicLit:
			found = found || x.Kind == token.STRING && strings.Contains(x.Value, "__endpointkit_tenant")
		}
		return !found
	})
	return found
}

// TestTenantConditionsFindsEveryForm: the walk's detector sees a tenant
// condition written by concatenation, by a format, with the tenant's
// placeholder written out or built from its name, and leaves other
// placeholders and comparisons alone.
func TestTenantConditionsFindsEveryForm(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{`package p; func f(t, c string) string { return " WHERE " + c + " = {variables." + t + "}" }`, 1},
		{`package p; import "fmt"; func f(t, c string) string { return fmt.Sprintf("%s.%s = {variables.%s}", "e", c, t) }`, 1},
		{`package p; import "fmt"; func f(c string) string { return fmt.Sprintf(" WHERE %s={variables.%s} ", c, "x") }`, 1},
		{`package p; const q = "SELECT * FROM events WHERE project_id = {variables.__endpointkit_tenant}"`, 1},
		{`package p; import "x/scope"; func f() string { return "{variables." + scope.TenantVariable + "}" }`, 1},
		{`package p; import ("fmt"; "x/scope"); func f() string { return fmt.Sprintf("p = {variables.%s}", scope.TenantVariable) }`, 1},
		{`package p; const q = "SELECT * FROM events WHERE event = {variables.event}"`, 0},
		{`package p; func f(tail, b string) string { return tail + " <= {variables." + b + "}" }`, 0},
		{`package p; func f(n string) string { return "{variables." + n + "}" }`, 0},
		// The tenant's value bound after an equality (insight's own
		// condition before issue 37's fix, and the printer's own form).
		{`package p; type Tenant struct{ Column, Value string }; func (g *gen) tenant(t *Tenant) { g.w(" AND # = ", t.Column); g.Bind(t.Value) }`, 1},
		{`package p; func f(w W, name, col string, v any) { w.WriteString(" WHERE " + name + "." + col + " = "); w.Bind(tenant) }`, 1},
		{`package p; func f(g G, project string) { g.WriteString(" AND project_id = ?"); g.args = append(g.args, project) }`, 1},
		{`package p; func f(g G, c string, p Project) { if c != "" { g.w(" AND # = ", c) }; g.Bind(p.ID) }`, 0},
		{`package p; func f(g G, s S) { g.w(" AND # = ", colEvent); g.Bind(s.Event) }`, 0},
		{`package p; func f(g G, tenant string) { g.w(" AND # <= ", colTime); g.Bind(tenant) }`, 0},
		{`package p; func f(base, project string) string { return base + "/api?project=" + project }`, 0},
		{`package p; import "strings"; func f(v string) { key, project, _ := strings.Cut(v, "="); use(key, project) }`, 0},
		{`package p; const msg = "use {variables.<code_name>} instead"`, 0},
	} {
		assert.Len(t, tenantConditions(t, token.NewFileSet(), "p.go", []byte(c.src)), c.want, c.src)
	}
}
