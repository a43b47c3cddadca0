package placeholder

import (
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompileForSQLiteBackslash: SQLite has no backslash escapes, so
// 'C:\' is a whole literal there; read as any engine, it is left open.
func TestCompileForSQLiteBackslash(t *testing.T) {
	const src = `SELECT 'C:\' || 'x' || {variables.y} AS p`
	_, err := Compile(src)
	require.ErrorIs(t, err, ErrSyntax)

	tmpl, err := CompileFor(engine.SQLite.Lexical(), src)
	require.NoError(t, err)
	assert.Equal(t, []string{"y"}, tmpl.Names())
	q, args, err := tmpl.Render(engine.SQLite, map[string]any{"y": "z"})
	require.NoError(t, err)
	var got string
	require.NoError(t, testdb.SQLite(t).QueryRow(q, args...).Scan(&got))
	assert.Equal(t, `C:\xz`, got)
}

// TestCompileForEngines: what is code and what is a literal or comment
// depends on the engine; a placeholder in a literal or comment is inert.
func TestCompileForEngines(t *testing.T) {
	for _, tc := range []struct {
		name        string
		e           engine.Engine
		src         string
		names       []string
		inert       []string
		inertStarts []int
	}{
		{"mysql hash comment", engine.MySQL, "SELECT 1 # {variables.a}\n, {variables.b}", []string{"b"}, []string{"a"}, []int{11}},
		{"sqlite hash", engine.SQLite, "SELECT {variables.a} # {variables.b}", []string{"a", "b"}, nil, nil},
		{"postgresql dollar quote", engine.PostgreSQL, "SELECT $$ {variables.a} $$, {variables.b}", []string{"b"}, []string{"a"}, []int{10}},
		{"postgresql nested comment", engine.PostgreSQL, "SELECT /* /* */ {variables.a} */ {variables.b}", []string{"b"}, []string{"a"}, []int{16}},
		{"sqlite flat comment", engine.SQLite, "SELECT /* /* */ {variables.a}", []string{"a"}, nil, nil},
		{"literal and malformed", engine.SQLite, "SELECT '{variables.a}', '{variables.}', {variables.b}", []string{"b"}, []string{"a", ""}, []int{8, 25}},
		{"mysql escaped quote", engine.MySQL, `SELECT 'it\'s {variables.a}', {variables.b}`, []string{"b"}, []string{"a"}, []int{14}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := CompileFor(tc.e.Lexical(), tc.src)
			require.NoError(t, err)
			got, want := tmpl.Names(), tc.names
			assert.Equal(t, want, got, "tmpl.Names()")
			var names []string
			var starts []int
			for _, p := range tmpl.Inert() {
				names, starts = append(names, p.Name), append(starts, p.Start)
			}
			assert.Equal(t, tc.inert, names)
			assert.Equal(t, tc.inertStarts, starts)
		})
	}
}
