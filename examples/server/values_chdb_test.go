//go:build chdb

package main

import (
	"path/filepath"
	"testing"
)

// chdbValueFlags are the flags of a server on chDB, its store on SQLite.
func chdbValueFlags(t *testing.T) []string {
	dir := t.TempDir()
	return []string{"-driver", "chdb", "-dsn", filepath.Join(dir, "chdb"), "-store", filepath.Join(dir, "store.db")}
}

// TestValuesChDBHolds is TestValuesEveryEngineHolds on chDB. A test of
// its own, by name, so that CI's chDB step runs it (and the package's
// other chDB tests) without the rest of the package, which the README's
// command ran.
func TestValuesChDBHolds(t *testing.T) { valuesHeld(t, "chdb", chdbValueFlags) }

// TestNumbersChDBHolds is TestNumbersEveryEngineHolds on chDB.
func TestNumbersChDBHolds(t *testing.T) { numbersHeld(t, "chdb", chdbValueFlags) }
