// Package layout reads the module's Go files for the tests that hold its
// layout (layout_test.go): which packages may import which (the floors), and
// where the SQL engines may be told apart (sql/engine only). It has no use
// outside tests.
package layout

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Root returns the directory of the module that holds the working
// directory, and the module's path.
func Root() (dir, module string, err error) {
	if dir, err = os.Getwd(); err != nil {
		return "", "", err
	}
	for !exists(filepath.Join(dir, "go.mod")) {
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", errors.New("layout: no go.mod above the working directory")
		}
		dir = parent
	}
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return dir, strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", "", errors.New("layout: go.mod declares no module")
}

// GoFiles calls fn with the path, relative to root and slash-separated, of
// every Go file of the module at root: not under testdata, vendor, a
// directory whose name starts with '.' or '_', nor in a nested module.
func GoFiles(root string, fn func(rel string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") ||
				strings.HasPrefix(name, "_") || exists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel))
	})
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
