package endpoint_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsListEveryErrorCode: every error code the API can answer, an
// exported constant Code... of a string in the packages that answer
// (endpoint and those under it, internal/apierror), is a row of the table
// of errors of docs/http-api.md. query_not_allowed, fixed_variable,
// token_refused, throttled and overloaded were missing.
func TestDocsListEveryErrorCode(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "http-api.md"))
	require.NoError(t, err)
	errors := string(doc)
	start := strings.Index(errors, "\n## Errors\n")
	require.GreaterOrEqual(t, start, 0, "docs/http-api.md has no Errors section")
	errors = errors[start:]
	if end := strings.Index(errors[1:], "\n## "); end >= 0 {
		errors = errors[:end+1]
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| [0-9/]+ \\| `([a-z_]+)` \\|").FindAllStringSubmatch(errors, -1) {
		listed[m[1]] = true
	}
	codes := declaredCodes(t, ".", filepath.Join("..", "internal", "apierror"))
	require.NotEmpty(t, codes)
	for code, where := range codes {
		assert.True(t, listed[code], "code %q (%s) is not in the table of errors of docs/http-api.md", code, where)
	}
}

// declaredCodes are the exported string constants named Code... of the
// Go files (tests aside) under dirs, by value, with where each is.
func declaredCodes(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
				strings.Contains(path, "testdata") || strings.Contains(path, "storetest") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !strings.HasPrefix(name.Name, "Code") || !name.IsExported() || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						v, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						out[v] = path + ": " + name.Name
					}
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	return out
}
