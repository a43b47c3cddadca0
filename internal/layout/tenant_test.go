package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
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
// the tenant's rows. Package sql/access calls it (Query.Confine) and
// writes none itself.
var tenantPrinters = []string{"sql/tree"}

// TestOnlyThePrinterWritesTenantConditions: no package but the printer
// writes a tenant condition into SQL text (issue 37: one printer, from one
// place), so that every statement the library runs is confined where it is
// printed and nowhere else by hand. It parses every non-test Go file of
// the module, whatever its build tags, and looks for the forms such a
// write takes (see tenantConditions).
func TestOnlyThePrinterWritesTenantConditions(t *testing.T) {
	found := sourceFindings(t, tenantConditions)
	printers := findingsOutside(t, found, func(dir string) bool { return slices.Contains(tenantPrinters, dir) },
		fmt.Sprintf("writes a tenant condition into SQL text; only %q may (print the query with its tree.Printer and a tree.Scope instead)", tenantPrinters))
	require.Positive(t, printers, "the printer's own tenant condition was not found: the detector is blind")
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
//     (scope.TenantVariable, TenantVariable, tenantVariable).
func tenantConditions(t *testing.T, fset *token.FileSet, rel string, src []byte) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	require.NoError(t, err, "parsing %s", rel)
	var out []string
	at := func(n ast.Node) { out = append(out, fset.Position(n.Pos()).String()) }
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
		{`package p; const msg = "use {variables.<code_name>} instead"`, 0},
	} {
		assert.Len(t, tenantConditions(t, token.NewFileSet(), "p.go", []byte(c.src)), c.want, c.src)
	}
}
