package placeholder

import (
	"errors"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/sqltoken"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBindMarkers(t *testing.T) {
	all := []engine.Engine{engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse}
	tests := []struct {
		sql string
		// want is the marker texts found, per dialect; absent means none.
		want map[engine.Engine][]string
	}{
		{"SELECT * FROM events WHERE id = ?", map[engine.Engine][]string{engine.SQLite: {"?"}, engine.MySQL: {"?"}, engine.ClickHouse: {"?"}}},
		{"SELECT ?1, ?22", map[engine.Engine][]string{engine.SQLite: {"?1", "?22"}, engine.MySQL: {"?1", "?22"}, engine.ClickHouse: {"?1", "?22"}}},
		{"WHERE a = $1 AND b = $2", map[engine.Engine][]string{engine.SQLite: {"$1", "$2"}, engine.PostgreSQL: {"$1", "$2"}, engine.ClickHouse: {"$1", "$2"}}},
		{"WHERE a = :country", map[engine.Engine][]string{engine.SQLite: {":country"}}},
		{"WHERE a = @country", map[engine.Engine][]string{engine.SQLite: {"@country"}, engine.ClickHouse: {"@country"}}},
		{"WHERE a = $country", map[engine.Engine][]string{engine.SQLite: {"$country"}}},
		// Not markers anywhere.
		{"SELECT x::text, y::int FROM t", nil},
		{"SELECT @@version, @@session.sql_mode", nil},
		{"WHERE tsv @@ to_tsquery('a')", nil},
		{"SET @a := 1", map[engine.Engine][]string{engine.SQLite: {"@a"}, engine.ClickHouse: {"@a"}}},
		{"SELECT a := 1", nil},
		{"SELECT a$1, b$c FROM t", nil},
		{"SELECT json_extract(properties, '$.a?b') FROM t", nil},
		{`SELECT "col?", ` + "`x:y`" + ` FROM t`, nil},
		{"SELECT 1 -- where a = ?\n", nil},
		{"SELECT 1 /* $1 :a @b */ + 2", nil},
		{"SELECT 1 -- ? to the end", nil},
		{"SELECT {variables.a}, '{variables.b}'", nil},
		{"SELECT $$body$$", nil},
		{"SELECT :1, : a, @ b", nil},
	}
	for _, tt := range tests {
		for _, d := range all {
			got, err := BindMarkers(d, tt.sql)
			require.NoError(t, err, "%s.BindMarkers(%q)", d, tt.sql)
			var texts []string
			for _, m := range got {
				texts = append(texts, m.Text)
				assert.Equal(t, m.Text, tt.sql[m.Offset:m.Offset+len(m.Text)], "%s.BindMarkers(%q): marker %q at offset %d holds %q", d, tt.sql, m.Text, m.Offset, tt.sql[m.Offset:])
			}
			want := tt.want[d]
			assert.Equal(t, strings.Join(want, " "), strings.Join(texts, " "), "%s.BindMarkers(%q) = %q, want %q", d, tt.sql, texts, want)
		}
	}
}

func TestBindMarkersPosition(t *testing.T) {
	got, err := BindMarkers(engine.SQLite, "SELECT 'é'\nFROM t WHERE a = ? AND é = :b")
	require.NoError(t, err)
	want := []BindMarker{{Text: "?", Offset: 29, Line: 2, Column: 18}, {Text: ":b", Offset: 40, Line: 2, Column: 28}}
	require.Len(t, got, len(want), "got %+v, want %+v", got, want)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("marker %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestBindMarkersUnclosed(t *testing.T) {
	for _, sql := range []string{"SELECT '?", `SELECT "a`, "SELECT `a", "SELECT /* ?"} {
		_, err := BindMarkers(engine.SQLite, sql)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != 1 || se.Column != 8 {
			t.Errorf("BindMarkers(%q) = %v, want a *SyntaxError at line 1, column 8", sql, err)
		}
	}
}

// FuzzBindMarkers checks against the reference tokenizer of the fuzz
// tests: markers lie wholly in code, start with a sigil, and an error is
// returned exactly when a quote or comment is left open. The reference
// reads as Scan does; an engine reads as its Lexical says, which agrees
// with the reference where the tokenizer finds nothing ambiguous.
func FuzzBindMarkers(f *testing.F) {
	addSeeds(f, "a = ? AND b = $1 AND c = :c AND d = @d", "x::int @@ y := z", "'?' \"$1\" -- :a\n/* @b */ ?9")
	f.Fuzz(func(t *testing.T, s string) {
		code, closed := refCode(s)
		for _, d := range []engine.Engine{nil, engine.SQLite, engine.PostgreSQL, engine.MySQL, engine.ClickHouse} {
			if d != nil && ambiguous(d.Lexical(), s) {
				continue
			}
			got, err := BindMarkers(d, s)
			require.NotEqual(t, closed, err != nil, "%s.BindMarkers(%q): error %v, but reference says closed=", d, s, err)
			if err != nil {
				require.ErrorIs(t, err, ErrSyntax, "%s.BindMarkers(%q)", d, s)
				continue
			}
			for _, m := range got {
				require.NotEqual(t, "", m.Text, "%s.BindMarkers(%q): marker", d, s)
				require.True(t, strings.ContainsRune("?$:@", rune(m.Text[0])), "%s.BindMarkers(%q): marker", d, s)
				require.True(t, allCode(code, m.Offset, m.Offset+len(m.Text)), "%s.BindMarkers(%q): marker %q at %d is not in code", d, s, m.Text, m.Offset)
			}
		}
	})
}

// ambiguous reports whether some engine could read a token of s, read as
// lx says, another way.
func ambiguous(lx engine.Lexical, s string) bool {
	for _, t := range sqltoken.Tokens(lx, s) {
		if t.Ambiguous() {
			return true
		}
	}
	return false
}
