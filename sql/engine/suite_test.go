package engine

import (
	"errors"
	"reflect"
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
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got, want := back, e; !reflect.DeepEqual(got, want) {
				t.Errorf("Name round-trips through ByName: back = %+v, want %+v", got, want)
			}
			if got, want := e.String(), e.Name(); got != want {
				t.Errorf("e.String() = %q, want %q", got, want)
			}

			for n := 1; n <= 1000; n *= 10 {
				for _, typ := range []string{"", "String", "DateTime('UTC')"} {
					m := e.Marker([]byte("x"), n, typ)
					if got, want := e.MarkerLen(n, typ), len(m)-1; got != want {
						t.Errorf("MarkerLen(%d, %q): e.MarkerLen(n, typ) = %v, want %v", n, typ, got, want)
					}
					if got, want := m[0], byte('x'); got != want {
						t.Errorf("Marker appends: m[0] = %v, want %v", got, want)
					}
				}
				if name := e.ArgName(n); name != "" {
					if s, sub := string(e.Marker(nil, n, "String")), name; !strings.Contains(s, sub) {
						t.Errorf("the marker names its argument: %q does not contain %q", s, sub)
					}
				}
			}
			if e.Numbered() {
				if got, want := string(e.Marker(nil, 2, "String")), string(e.Marker(nil, 1, "String")); got == want {
					t.Errorf("string(e.Marker(nil, 2, \"String\")) = %q, want anything else", got)
				}
			}

			for _, v := range []any{"s", int64(1), 2.5, true} {
				_, _, err := e.Arg(v)
				if err != nil {
					t.Errorf("%T: unexpected error: %v", v, err)
				}
			}
			for _, v := range []any{nil, []int{1}, struct{}{}} {
				_, _, err := e.Arg(v)
				var ae *ArgError
				if err := err; !errors.As(err, &ae) {
					t.Errorf("%T: error %v is not a %T", v, err, &ae)
				}
			}

			for _, s := range []string{"plain", `a"b`, "a`b", "x'y"} {
				q := e.QuoteIdent(s)
				if !(len(q) >= len(s)+2) {
					t.Errorf("QuoteIdent(%q) = %s: len(q) >= len(s)+2 is false", s, q)
				}
				if got, want := q[len(q)-1], q[0]; got != want {
					t.Errorf("q[len(q)-1] = %v, want %v", got, want)
				}
			}
			lit := string(e.AppendString(nil, "it's"))
			if !(strings.HasPrefix(lit, "'") && strings.HasSuffix(lit, "'")) {
				t.Errorf("%v: strings.HasPrefix(lit, \"'\") && strings.HasSuffix(lit, \"'\") is false", lit)
			}

			for _, k := range []Kind{Text, Int, Float} {
				if v := e.Type(k); v == "" {
					t.Errorf("e.Type(k) is empty")
				}
			}
			for _, u := range []Bucket{Minute, Hour, Day, Week, Month} {
				ts := e.Timestamp(`c`)
				if s, sub := e.Truncate(u, ts), ts; !strings.Contains(s, sub) {
					t.Errorf("Truncate(%s) keeps its argument: %q does not contain %q", u, s, sub)
				}
			}
			if s, sub := e.TimeText("x"), "x"; !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}

			w := &recorder{}
			e.JSONText(w, "p", "k")
			if v := w.args; len(v) == 0 {
				t.Errorf("JSONText binds the key: w.args is empty")
			}
			if s, sub := w.sql, "'k'"; strings.Contains(s, sub) {
				t.Errorf("the key is bound, not written: %q contains %q", s, sub)
			}
			w = &recorder{}
			e.JSONNumber(w, "p", "k")
			if v := w.args; len(v) == 0 {
				t.Errorf("JSONNumber binds the key: w.args is empty")
			}
			w = &recorder{}
			e.Contains(w, func() { w.WriteString("HAY") }, "needle")
			if s, sub := w.sql, "HAY"; !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}
			if got, want := w.args, ([]any{"needle"}); !reflect.DeepEqual(got, want) {
				t.Errorf("w.args = %+v, want %+v", got, want)
			}

			cols := []Column{{"a", Text}, {"b", Int}, {"v", Float}}
			if s, sub := e.CreateTable("t", cols), e.QuoteIdent("t"); !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}
			if s, sub := e.CreateTableAs("t", "SELECT 1"), "SELECT 1"; !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}
			if s, sub := e.DropTable("t"), e.QuoteIdent("t"); !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}
			swap, _ := e.Swap("n", "l")
			if v := swap; len(v) == 0 {
				t.Fatalf("swap is empty")
			}
			joined := strings.Join(swap, ";")
			if s, sub := joined, e.QuoteIdent("n"); !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}
			if s, sub := joined, e.QuoteIdent("l"); !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}
			page := e.Page("SELECT 1 ORDER BY 1", "L", "O")
			if s, sub := page, "SELECT 1 ORDER BY 1"; !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}
			if s, sub := page, "L"; !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}
			if s, sub := page, "O"; !strings.Contains(s, sub) {
				t.Errorf("%q does not contain %q", s, sub)
			}

			// An engine whose SQL assumes session settings names them, as
			// statements an executor runs on each new connection.
			if s, ok := e.(Session); ok {
				if v := s.Session(); len(v) == 0 {
					t.Fatalf("s.Session() is empty")
				}
				for _, q := range s.Session() {
					if v := strings.TrimSpace(q); v == "" {
						t.Errorf("strings.TrimSpace(q) is empty")
					}
				}
			}

			// A run on a connection that is not read-only is made so, by
			// a read-only transaction, a statement or a setting; on a
			// read-only connection without a time limit nothing is left
			// to do.
			g := e.Guard(30*time.Second, false)
			if !(g.Tx || len(g.Begin) > 0 || slices.Contains(g.Settings, Setting{"readonly", "1"})) {
				t.Errorf("%+v: condition is false", g)
			}
			ro := e.Guard(0, true)
			if !(!ro.Tx && len(ro.Begin) == 0 && len(ro.End) == 0) {
				t.Errorf("a read-only connection needs no transaction: %+v: !ro.Tx && len(ro.Begin) == 0 && len(ro.End) == 0 is false", ro)
			}
			for _, ro := range []bool{false, true} {
				g := e.Guard(1500*time.Millisecond, ro)
				if len(g.Begin) > 0 || len(g.End) > 0 {
					if !g.Tx {
						t.Errorf("Begin and End need the connection a transaction holds: %+v: g.Tx is false", g)
					}
				}
				if got, want := e.Guard(1500*time.Millisecond, ro), g; !reflect.DeepEqual(got, want) {
					t.Errorf("Guard is deterministic, so that prepared texts repeat: e.Guard(1500*time.Millisecond, ro) = %+v, want %+v", got, want)
				}
			}
			if !strings.HasPrefix(e.Tables(), "SELECT ") {
				t.Errorf("%v: strings.HasPrefix(e.Tables(), \"SELECT \") is false", e.Tables())
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
		{ClickHouse, false, Guard{Settings: []Setting{{"session_timezone", "UTC"}, {"max_execution_time", "2"}, {"readonly", "1"}}}},
		{ClickHouse, true, Guard{Settings: []Setting{{"session_timezone", "UTC"}, {"max_execution_time", "2"}}}},
	}
	for _, tt := range tests {
		if got, want := tt.e.Guard(limit, tt.readOnly), tt.want; !reflect.DeepEqual(got, want) {
			t.Errorf("%s read-only %v: tt.e.Guard(limit, tt.readOnly) = %+v, want %+v", tt.e, tt.readOnly, got, want)
		}
	}
	if got, want := PostgreSQL.Guard(0, false), (Guard{Tx: true}); !reflect.DeepEqual(got, want) {
		t.Errorf("no timeout: the transaction alone: PostgreSQL.Guard(0, false) = %+v, want %+v", got, want)
	}
	if got, want := PostgreSQL.Guard(time.Microsecond, true).Begin[0], "SET LOCAL statement_timeout = 1"; got != want {
		t.Errorf("never 0, which is no limit: PostgreSQL.Guard(time.Microsecond, true).Begin[0] = %q, want %q", got, want)
	}
	if s, sub := MySQL.Guard(time.Nanosecond, true).Prefix, "max_statement_time = 0.001 "; !strings.Contains(s, sub) {
		t.Errorf("never 0, which is no limit: %q does not contain %q", s, sub)
	}
}
