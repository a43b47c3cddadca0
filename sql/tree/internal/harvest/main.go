// Command harvest gathers the query strings of the repository's tests
// that access.Check accepts.
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/endpointkit/endpointkit/sql/access"
)

func main() {
	seen := map[string]bool{}
	var out []string
	total := 0
	for _, root := range os.Args[1:] {
		filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(path, "_test.go") {
				return nil
			}
			fs := token.NewFileSet()
			f, err := parser.ParseFile(fs, path, nil, 0)
			if err != nil {
				return nil
			}
			ast.Inspect(f, func(n ast.Node) bool {
				// A concatenation of literals is one query: its parts are
				// not read on their own.
				s, ok := fold(n)
				if !ok {
					// A literal added to a value is a fragment of a
					// query, not a query.
					b, isAdd := n.(*ast.BinaryExpr)
					return !isAdd || b.Op != token.ADD
				}
				t := strings.ToLower(strings.TrimLeft(s, " \t\n("))
				if !strings.HasPrefix(t, "select") && !strings.HasPrefix(t, "with") {
					return true
				}
				if seen[s] {
					return false
				}
				seen[s] = true
				total++
				if access.Check(s, &access.Rules{AnyTable: true, TableFunctions: []string{"generate_series", "numbers"}}) == nil {
					out = append(out, s)
				}
				return false
			})
			return nil
		})
	}
	sort.Strings(out)
	b, _ := json.MarshalIndent(out, "", "  ")
	os.Stdout.Write(b)
	fmt.Fprintf(os.Stderr, "%d distinct query strings, %d accepted by access.Check\n", total, len(out))
}

// fold returns the string that n, a string literal or a concatenation of
// them, holds.
func fold(n ast.Node) (string, bool) {
	switch v := n.(type) {
	case *ast.BasicLit:
		if v.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(v.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if v.Op != token.ADD {
			return "", false
		}
		l, ok := fold(v.X)
		if !ok {
			return "", false
		}
		r, ok := fold(v.Y)
		return l + r, ok
	case *ast.ParenExpr:
		return fold(v.X)
	}
	return "", false
}
