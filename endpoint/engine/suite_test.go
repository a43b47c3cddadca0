package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryEngine is the shared suite a new engine passes: the promises
// that the library's SQL generators rely on, checked for every value of
// All. What only a real server can show (that the SQL runs and answers
// alike) is checked by the executor and equivalence suites.
func TestEveryEngine(t *testing.T) {
	for _, e := range All() {
		t.Run(e.Name(), func(t *testing.T) {
			back, err := ByName(e.Name())
			require.NoError(t, err)
			assert.Equal(t, e, back, "Name round-trips through ByName")
			assert.Equal(t, e.Name(), e.String())

			for n := 1; n <= 1000; n *= 10 {
				for _, typ := range []string{"", "String", "DateTime('UTC')"} {
					m := e.Marker([]byte("x"), n, typ)
					assert.Equal(t, len(m)-1, e.MarkerLen(n, typ), "MarkerLen(%d, %q)", n, typ)
					assert.Equal(t, byte('x'), m[0], "Marker appends")
				}
				if name := e.ArgName(n); name != "" {
					assert.Contains(t, string(e.Marker(nil, n, "String")), name, "the marker names its argument")
				}
			}
			if e.Numbered() {
				assert.NotEqual(t, string(e.Marker(nil, 1, "String")), string(e.Marker(nil, 2, "String")))
			}

			for _, v := range []any{"s", int64(1), 2.5, true} {
				_, _, err := e.Arg(v)
				assert.NoError(t, err, "%T", v)
			}
			for _, v := range []any{nil, []int{1}, struct{}{}} {
				_, _, err := e.Arg(v)
				var ae *ArgError
				assert.ErrorAs(t, err, &ae, "%T", v)
			}

			for _, s := range []string{"plain", `a"b`, "a`b", "x'y"} {
				q := e.QuoteIdent(s)
				assert.True(t, len(q) >= len(s)+2, "QuoteIdent(%q) = %s", s, q)
				assert.Equal(t, q[0], q[len(q)-1])
			}
			lit := string(e.AppendString(nil, "it's"))
			assert.True(t, strings.HasPrefix(lit, "'") && strings.HasSuffix(lit, "'"), lit)

			for _, k := range []Kind{Text, Int, Float} {
				assert.NotEmpty(t, e.Type(k))
			}
			for _, u := range []Unit{Minute, Hour, Day, Week, Month} {
				ts := e.Timestamp(`c`)
				assert.Contains(t, e.Truncate(u, ts), ts, "Truncate(%s) keeps its argument", u)
			}
			assert.Contains(t, e.TimeText("x"), "x")

			w := &recorder{}
			e.JSONText(w, "p", "k")
			assert.NotEmpty(t, w.args, "JSONText binds the key")
			assert.NotContains(t, w.sql, "'k'", "the key is bound, not written")
			w = &recorder{}
			e.JSONNumber(w, "p", "k")
			assert.NotEmpty(t, w.args, "JSONNumber binds the key")
			w = &recorder{}
			e.Contains(w, func() { w.WriteString("HAY") }, "needle")
			assert.Contains(t, w.sql, "HAY")
			assert.Equal(t, []any{"needle"}, w.args)

			cols := []Column{{"a", Text}, {"b", Int}, {"v", Float}}
			assert.Contains(t, e.CreateTable("t", cols), e.QuoteIdent("t"))
			assert.Contains(t, e.CreateTableAs("t", "SELECT 1"), "SELECT 1")
			assert.Contains(t, e.DropTable("t"), e.QuoteIdent("t"))
			swap, _ := e.Swap("n", "l")
			require.NotEmpty(t, swap)
			joined := strings.Join(swap, ";")
			assert.Contains(t, joined, e.QuoteIdent("n"))
			assert.Contains(t, joined, e.QuoteIdent("l"))
			page := e.Page("SELECT 1 ORDER BY 1", "L", "O")
			assert.Contains(t, page, "SELECT 1 ORDER BY 1")
			assert.Contains(t, page, "L")
			assert.Contains(t, page, "O")

			// An engine whose SQL assumes session settings names them, as
			// statements an executor runs on each new connection.
			if s, ok := e.(Session); ok {
				require.NotEmpty(t, s.Session())
				for _, q := range s.Session() {
					assert.NotEmpty(t, strings.TrimSpace(q))
				}
			}
		})
	}
}

// recorder is a Writer that keeps what it is given.
type recorder struct {
	sql  string
	args []any
}

func (r *recorder) WriteString(s string) { r.sql += s }

func (r *recorder) Bind(v any) {
	r.args = append(r.args, v)
	r.sql += "?"
}
