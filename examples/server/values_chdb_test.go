//go:build chdb

package main

import (
	"path/filepath"
	"testing"
)

func init() {
	valueEngines["chdb"] = func(t *testing.T) []string {
		dir := t.TempDir()
		return []string{"-driver", "chdb", "-dsn", filepath.Join(dir, "chdb"), "-store", filepath.Join(dir, "store.db")}
	}
}
