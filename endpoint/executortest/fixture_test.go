package executortest

import (
	"testing"

	"github.com/endpointkit/endpointkit/placeholder"
)

func TestFixtureCreateTable(t *testing.T) {
	for _, tc := range []struct {
		d     placeholder.Dialect
		want  string
		noNUL bool
	}{
		{placeholder.SQLite, `CREATE TABLE "t" (id INTEGER, name TEXT, score REAL)`, false},
		{placeholder.PostgreSQL, `CREATE TABLE "t" (id BIGINT, name TEXT, score DOUBLE PRECISION)`, true},
		{placeholder.MySQL, "CREATE TABLE `t` (id BIGINT, name TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, score DOUBLE)", false},
		{placeholder.ClickHouse, "CREATE TABLE `t` (id Nullable(Int64), name Nullable(String), score Nullable(Float64)) ENGINE = Memory", false},
		{placeholder.Dialect{}, `CREATE TABLE "t" (id BIGINT, name TEXT, score DOUBLE PRECISION)`, false},
	} {
		t.Run(tc.d.Name(), func(t *testing.T) {
			f := FixtureFor(tc.d)
			if got := f.createTable(tc.d, "t"); got != tc.want {
				t.Fatalf("createTable = %s, want %s", got, tc.want)
			}
			if f.TextRejectsNUL != tc.noNUL {
				t.Fatalf("TextRejectsNUL = %v, want %v", f.TextRejectsNUL, tc.noNUL)
			}
		})
	}
}
