package engine

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"slices"
	"strings"
	"testing"
	"time"
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
			got, want := back, e
			assert.Equal(t, want, got, "Name round-trips through ByName: back")
			assert.Equal(t, e.Name(), e.String())

			for n := 1; n <= 1000; n *= 10 {
				for _, typ := range []string{"", "String", "DateTime('UTC')"} {
					m := e.Marker([]byte("x"), n, typ)
					got, want := e.MarkerLen(n, typ), len(m)-1
					assert.Equal(t, want, got, "MarkerLen(%d, %q): e.MarkerLen(n, typ)", n, typ)
					if got, want := m[0], byte('x'); got != want {
						t.Errorf("Marker appends: m[0] = %v, want %v", got, want)
					}
				}
				if name := e.ArgName(n); name != "" {
					s, sub := string(e.Marker(nil, n, "String")), name
					assert.Contains(t, s, sub, "the marker names its argument")
				}
			}
			if e.Numbered() {
				got, want := string(e.Marker(nil, 2, "String")), string(e.Marker(nil, 1, "String"))
				assert.NotEqual(t, want, got, "string(e.Marker(nil, 2, \"String\"))")
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
				assert.True(t, (len(q) >= len(s)+2), "QuoteIdent(%q) = %s: len(q) >= len(s)+2 is false", s, q)
				assert.Equal(t, q[0], q[len(q)-1])
			}
			lit := string(e.AppendString(nil, "it's"))
			assert.True(t, (strings.HasPrefix(lit, "'") && strings.HasSuffix(lit, "'")), "%v: strings.HasPrefix(lit, \"'\") && strings.HasSuffix(lit, \"'\") is false", lit)

			for _, k := range []Kind{Text, Int, Float} {
				v := e.Type(k)
				assert.NotEqual(t, "", v, "e.Type(k) is empty")
			}
			for _, u := range []Bucket{Minute, Hour, Day, Week, Month} {
				ts := e.Timestamp(`c`)
				s, sub := e.Truncate(u, ts), ts
				assert.Contains(t, s, sub, "Truncate(%s) keeps its argument", u)
			}
			assert.Contains(t, e.TimeText("x"), "x")

			w := &recorder{}
			e.JSONText(w, "p", "k")
			v := w.args
			assert.NotEmpty(t, v, "JSONText binds the key: w.args is empty")
			assert.NotContains(t, w.sql, "'k'", "the key is bound, not written")
			w = &recorder{}
			e.JSONNumber(w, "p", "k")
			if v := w.args; len(v) == 0 {
				t.Errorf("JSONNumber binds the key: w.args is empty")
			}
			w = &recorder{}
			e.Contains(w, func() { w.WriteString("HAY") }, "needle")
			assert.Contains(t, w.sql, "HAY")
			assert.Equal(t, []any{"needle"}, w.args)

			cols := []Column{{"a", Text}, {"b", Int}, {"v", Float}}
			s, sub := e.CreateTable("t", cols), e.QuoteIdent("t")
			assert.Contains(t, s, sub)
			assert.Contains(t, e.CreateTableAs("t", "SELECT 1"), "SELECT 1")
			assert.Contains(t, e.DropTable("t"), e.QuoteIdent("t"))
			swap, _ := e.Swap("n", "l")
			if v := swap; len(v) == 0 {
				t.Fatalf("swap is empty")
			}
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
				v := s.Session()
				require.NotEmpty(t, v, "s.Session() is empty")
				for _, q := range s.Session() {
					v := strings.TrimSpace(q)
					assert.NotEqual(t, "", v, "strings.TrimSpace(q) is empty")
				}
			}

			// A run on a connection that is not read-only is made so, by
			// a read-only transaction, a statement or a setting; on a
			// read-only connection without a time limit nothing is left
			// to do.
			g := e.Guard(30*time.Second, false)
			assert.True(t, (g.Tx || len(g.Begin) > 0 || slices.Contains(g.Settings, Setting{"readonly", "1"})), "%+v: condition is false", g)
			ro := e.Guard(0, true)
			assert.True(t, (!ro.Tx && len(ro.Begin) == 0 && len(ro.End) == 0), "a read-only connection needs no transaction: %+v: !ro.Tx && len(ro.Begin) == 0 && len(ro.End) == 0 is false", ro)
			for _, ro := range []bool{false, true} {
				g := e.Guard(1500*time.Millisecond, ro)
				if len(g.Begin) > 0 || len(g.End) > 0 {
					assert.True(t, g.Tx, "Begin and End need the connection a transaction holds: %+v: g.Tx is false", g)
				}
				got, want := e.Guard(1500*time.Millisecond, ro), g
				assert.Equal(t, want, got, "Guard is deterministic, so that prepared texts repeat: e.Guard(1500*time.Millisecond, ro)")
			}
			assert.True(t, strings.HasPrefix(e.Tables(), "SELECT "), "%v: strings.HasPrefix(e.Tables(), \"SELECT \") is false", e.Tables())
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

// TestGuard pins each engine's guard: what makes a run read-only, and how
// its time limit reaches the server (rounded up to the engine's unit).
func TestGuard(t *testing.T) {
	const limit = 1500 * time.Millisecond
	tests := []struct {
		e        Engine
		readOnly bool
		want     Guard
	}{
		{SQLite, false, Guard{Tx: true, Begin: []string{"PRAGMA query_only = 1"}, End: []string{"PRAGMA query_only = 0"}}},
		{SQLite, true, Guard{}},
		{PostgreSQL, false, Guard{Tx: true, Begin: []string{"SET LOCAL statement_timeout = 1500"}}},
		{PostgreSQL, true, Guard{Tx: true, Begin: []string{"SET LOCAL statement_timeout = 1500"}}},
		{MySQL, false, Guard{Tx: true, Prefix: "/*M!100102 SET STATEMENT optimizer_switch = 'derived_merge=off', max_statement_time = 1.5 FOR */ "}},
		{MySQL, true, Guard{Prefix: "/*M!100102 SET STATEMENT optimizer_switch = 'derived_merge=off', max_statement_time = 1.5 FOR */ "}},
		{ClickHouse, false, Guard{Settings: []Setting{{"session_timezone", "UTC"}, {"optimize_move_to_prewhere", "0"}, {"max_execution_time", "2"}, {"readonly", "1"}}}},
		{ClickHouse, true, Guard{Settings: []Setting{{"session_timezone", "UTC"}, {"optimize_move_to_prewhere", "0"}, {"max_execution_time", "2"}}}},
	}
	for _, tt := range tests {
		got, want := tt.e.Guard(limit, tt.readOnly), tt.want
		assert.Equal(t, want, got, "%s read-only %v: tt.e.Guard(limit, tt.readOnly)", tt.e, tt.readOnly)
	}
	got, want := PostgreSQL.Guard(0, false), (Guard{Tx: true})
	assert.Equal(t, want, got, "no timeout: the transaction alone: PostgreSQL.Guard(0, false)")
	if got, want := PostgreSQL.Guard(time.Microsecond, true).Begin[0], "SET LOCAL statement_timeout = 1"; got != want {
		t.Errorf("never 0, which is no limit: PostgreSQL.Guard(time.Microsecond, true).Begin[0] = %q, want %q", got, want)
	}
	assert.Contains(t, MySQL.Guard(time.Nanosecond, true).Prefix, "max_statement_time = 0.001 ", "never 0, which is no limit")
}
