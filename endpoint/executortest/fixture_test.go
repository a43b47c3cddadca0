package executortest

import (
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

func TestFixtureCreateTable(t *testing.T) {
	for _, tc := range []struct {
		d     engine.Engine
		want  string
		noNUL bool
	}{
		{engine.SQLite, `CREATE TABLE "t" (id INTEGER, name TEXT, score REAL)`, false},
		{engine.PostgreSQL, `CREATE TABLE "t" (id BIGINT, name TEXT, score DOUBLE PRECISION)`, true},
		{engine.MySQL, "CREATE TABLE `t` (id BIGINT, name TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, score DOUBLE)", false},
		{engine.ClickHouse, "CREATE TABLE `t` (id Nullable(Int64), name Nullable(String), score Nullable(Float64)) ENGINE = Memory", false},
	} {
		t.Run(tc.d.Name(), func(t *testing.T) {
			f := FixtureFor(tc.d)
			require.Equal(t, tc.want, f.createTable(tc.d, "t"), "createTable")
			require.Equal(t, tc.noNUL, f.TextRejectsNUL, "TextRejectsNUL")
		})
	}
}
