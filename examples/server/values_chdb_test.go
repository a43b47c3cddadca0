//go:build chdb

package main

import "testing"

func init() {
	valueEngines["chdb"] = func(t *testing.T) []string { return []string{"-driver", "chdb", "-dsn", t.TempDir()} }
}
