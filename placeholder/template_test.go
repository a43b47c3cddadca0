package placeholder

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

func TestCompileReportsSyntaxErrors(t *testing.T) {
	_, err := Compile("SELECT 1\nWHERE a = {variables.a b}")
	var se *SyntaxError
	if err := err; !errors.As(err, &se) {
		t.Fatalf("error %v is not a %T", err, &se)
	}
	if got, want := se.Line, 2; got != want {
		t.Errorf("se.Line = %v, want %v", got, want)
	}
	if got, want := se.Column, 24; got != want {
		t.Errorf("se.Column = %v, want %v", got, want)
	}
}

func TestTemplateAccessors(t *testing.T) {
	src := "SELECT {variables.b}, {variables.a}, {variables.b} WHERE x IN {variables.c}"
	tpl, err := Compile(src)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := tpl.Source(), src; got != want {
		t.Errorf("tpl.Source() = %q, want %q", got, want)
	}
	if got, want := tpl.Names(), ([]string{"b", "a", "c"}); !reflect.DeepEqual(got, want) {
		t.Errorf("tpl.Names() = %+v, want %+v", got, want)
	}
	phs := tpl.Placeholders()
	if got := len(phs); got != 4 {
		t.Fatalf("len(phs) = %d, want %d: %v", got, 4, phs)
	}
	want, err := Scan(src)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := phs, want; !reflect.DeepEqual(got, want) {
		t.Errorf("phs = %+v, want %+v", got, want)
	}

	// The accessors hand out copies: a caller cannot change the template.
	tpl.Names()[0] = "zz"
	tpl.Placeholders()[0].Name = "zz"
	if got, want := tpl.Names()[0], "b"; got != want {
		t.Errorf("tpl.Names()[0] = %q, want %q", got, want)
	}
	if got, want := tpl.Placeholders()[0].Name, "b"; got != want {
		t.Errorf("tpl.Placeholders()[0].Name = %q, want %q", got, want)
	}

	none, err := Compile("SELECT 1")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if v := none.Names(); !(len(v) == 0) {
		t.Errorf("none.Names() = %v, want it empty", v)
	}
	if v := none.Placeholders(); !(len(v) == 0) {
		t.Errorf("none.Placeholders() = %v, want it empty", v)
	}
	got, args, err := none.Render(engine.PostgreSQL, nil)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := got, "SELECT 1"; got != want {
		t.Errorf("got = %q, want %q", got, want)
	}
	if v := args; !(len(v) == 0) {
		t.Errorf("args = %v, want it empty", v)
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name      string
		sql       string
		values    map[string]any
		sentinel  error
		variable  string
		line, col int
		detail    string
	}{
		{"missing", "a = {variables.a} AND\n b = {variables.b}", map[string]any{"a": "x"},
			ErrMissingValue, "b", 2, 6, ""},
		{"nil map", "a = {variables.a}", nil, ErrMissingValue, "a", 1, 5, ""},
		{"unsupported type", "a = {variables.a}", map[string]any{"a": []int{1}},
			ErrUnsupportedValue, "a", 1, 5, "got Go type []int"},
		{"null", "a = {variables.a}", map[string]any{"a": nil}, ErrUnsupportedValue, "a", 1, 5, "got null"},
		{"NaN", "a = {variables.a}", map[string]any{"a": nan()}, ErrUnsupportedValue, "a", 1, 5, "NaN"},
		{"empty list", "a IN {variables.l}", map[string]any{"l": []string{}}, ErrEmptyList, "l", 1, 6, ""},
		{"list outside IN", "a = {variables.l}", map[string]any{"l": []string{"x"}}, ErrListPosition, "l", 1, 5, "IN {variables.l}"},
		{"list in IN and outside", "a IN {variables.l} OR b = {variables.l}", map[string]any{"l": []string{"x"}},
			ErrListPosition, "l", 1, 27, ""},
		{"list among other IN elements", "a IN ('x', {variables.l})", map[string]any{"l": []string{"x"}},
			ErrListPosition, "l", 1, 12, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Compile(tt.sql)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			for _, d := range engine.All() {
				got, args, err := tpl.Render(d, tt.values)
				if v := got; !(v == "") {
					t.Errorf("got = %v, want it empty", v)
				}
				if v := args; v != nil {
					t.Errorf("args = %v, want nil", v)
				}
				if err := err; !errors.Is(err, tt.sentinel) {
					t.Errorf("%v: error %v is not %v", d.Name(), err, tt.sentinel)
				}
				var ve *VariableError
				if err := err; !errors.As(err, &ve) {
					t.Fatalf("error %v is not a %T", err, &ve)
				}
				if got, want := ve.Name, tt.variable; got != want {
					t.Errorf("ve.Name = %q, want %q", got, want)
				}
				if got, want := ve.Line, tt.line; got != want {
					t.Errorf("ve.Line = %v, want %v", got, want)
				}
				if got, want := ve.Column, tt.col; got != want {
					t.Errorf("ve.Column = %v, want %v", got, want)
				}
				if s, sub := ve.Detail, tt.detail; !strings.Contains(s, sub) {
					t.Errorf("%q does not contain %q", s, sub)
				}
				if s, sub := err.Error(), `"`+tt.variable+`"`; !strings.Contains(s, sub) {
					t.Errorf("%q does not contain %q", s, sub)
				}
			}
		})
	}
}

func nan() float64 { var zero float64; return zero / zero }

func TestRenderZeroDialect(t *testing.T) {
	tpl, err := Compile("a = {variables.a}")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, _, err = tpl.Render(nil, map[string]any{"a": "x"})
	if err := err; !errors.Is(err, ErrNoEngine) {
		t.Errorf("error %v is not %v", err, ErrNoEngine)
	}
}

func TestRenderIgnoresUnusedValues(t *testing.T) {
	tpl, err := Compile("a = {variables.a}")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	got, args, err := tpl.Render(engine.SQLite, map[string]any{"a": "x", "other": []int{1}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := got, "a = ?"; got != want {
		t.Errorf("got = %q, want %q", got, want)
	}
	if got, want := args, ([]any{"x"}); !reflect.DeepEqual(got, want) {
		t.Errorf("args = %+v, want %+v", got, want)
	}
}

func TestCheckLists(t *testing.T) {
	multi := func(name string) bool { return name == "l" || name == "m" }
	tests := []struct {
		sql       string
		ok        bool
		name      string
		line, col int
	}{
		{"a IN {variables.l}", true, "", 0, 0},
		{"a NOT IN ({variables.l}) AND b IN {variables.m}", true, "", 0, 0},
		{"a = {variables.s} AND b IN {variables.l}", true, "", 0, 0},
		{"a IN {variables.s}", true, "", 0, 0},
		{"a = {variables.l}", false, "l", 1, 5},
		{"a IN {variables.l}\nAND b = {variables.m}", false, "m", 2, 9},
		{"a IN ({variables.l}, 'x')", false, "l", 1, 7},
		{"a IN ({variables.l} )  -- ok\nAND c LIKE {variables.l}", false, "l", 2, 12},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			tpl, err := Compile(tt.sql)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			err = tpl.CheckLists(multi)
			if tt.ok {
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				return
			}
			if err := err; !errors.Is(err, ErrListPosition) {
				t.Errorf("error %v is not %v", err, ErrListPosition)
			}
			var ve *VariableError
			if err := err; !errors.As(err, &ve) {
				t.Fatalf("error %v is not a %T", err, &ve)
			}
			if got, want := ve.Name, tt.name; got != want {
				t.Errorf("ve.Name = %q, want %q", got, want)
			}
			if got, want := ve.Line, tt.line; got != want {
				t.Errorf("ve.Line = %v, want %v", got, want)
			}
			if got, want := ve.Column, tt.col; got != want {
				t.Errorf("ve.Column = %v, want %v", got, want)
			}
		})
	}
}

// TestRenderConcurrent renders one template from many goroutines; run
// with -race it shows that Render keeps no state in the Template.
func TestRenderConcurrent(t *testing.T) {
	tpl, err := Compile("a = {variables.a} AND b IN {variables.l} AND c = {variables.a}")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				v := fmt.Sprint(g, i)
				got, args, err := tpl.Render(engine.PostgreSQL, map[string]any{"a": v, "l": []string{v, "x"}})
				if err != nil {
					t.Errorf("unexpected error: %v", err)
					return
				}
				if got, want := got, "a = $1 AND b IN ($2, $3) AND c = $1"; got != want {
					t.Errorf("got = %q, want %q", got, want)
				}
				if got, want := args, ([]any{v, v, "x"}); !reflect.DeepEqual(got, want) {
					t.Errorf("args = %+v, want %+v", got, want)
				}
			}
		}()
	}
	wg.Wait()
}

// TestRenderOnSQLite runs rendered queries on a real engine: lists after
// IN and inside IN ( ), a variable used twice, numbers, booleans, and
// dates against the demo data's text timestamps.
func TestRenderOnSQLite(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	const n = 3000
	if err := demo.Load(ctx, db, n, 7); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	from := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2025, 5, 15, 12, 30, 0, 0, time.UTC)
	var inRange, pageviewsOrSignups, signupsInRange, signupsAll int
	if err := (demo.Generate(n, 7, func(e demo.Event) error {
		in := !e.Timestamp.Before(from) && e.Timestamp.Before(to)
		if in {
			inRange++
		}
		if e.Event == "$pageview" || e.Event == "signed_up" {
			pageviewsOrSignups++
		}
		if e.Event == "signed_up" {
			signupsAll++
		}
		if in && e.Event == "signed_up" {
			signupsInRange++
		}
		return nil
	})); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if v := signupsInRange; v <= 0 {
		t.Fatalf("signupsInRange = %v, want > 0", v)
	}

	tests := []struct {
		sql    string
		values map[string]any
		want   int
	}{
		{"SELECT count(*) FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to}",
			map[string]any{"from": variable.Timestamp{Time: from, DateOnly: true}, "to": variable.Timestamp{Time: to}}, inRange},
		{"SELECT count(*) FROM events WHERE event IN {variables.events}",
			map[string]any{"events": []string{"$pageview", "signed_up"}}, pageviewsOrSignups},
		{"SELECT count(*) FROM events WHERE event IN ( {variables.events} )",
			map[string]any{"events": []string{"signed_up", "$pageview", "nothing"}}, pageviewsOrSignups},
		{"SELECT count(*) FROM events WHERE event = {variables.e} AND timestamp >= {variables.from}" +
			" AND timestamp < {variables.to} AND {variables.e} = 'signed_up'",
			map[string]any{"e": "signed_up", "from": from, "to": variable.Timestamp{Time: to}}, signupsInRange},
		{"SELECT count(*) FROM events WHERE {variables.yes} AND 1 + {variables.n} = 3.5",
			map[string]any{"yes": true, "n": 2.5}, n},
		{"SELECT count(*) FROM events WHERE {variables.no}", map[string]any{"no": false}, 0},
		{"SELECT count(*) FROM events WHERE event = {variables.e}AND{variables.one}=1",
			map[string]any{"e": "signed_up", "one": 1}, signupsAll},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			tpl, err := Compile(tt.sql)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			query, args, err := tpl.Render(engine.SQLite, tt.values)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			var got int
			if err := db.QueryRowContext(ctx, query, args...).Scan(&got); err != nil {
				t.Fatalf("%v: unexpected error: %v", query, err)
			}
			if got, want := got, tt.want; got != want {
				t.Errorf("%v: got = %v, want %v", query, got, want)
			}
		})
	}
}

func TestRenderErrorsAreTyped(t *testing.T) {
	tpl, err := Compile("{variables.a}")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, _, err = tpl.Render(engine.SQLite, nil)
	if !errors.Is(err, ErrMissingValue) {
		t.Errorf("errors.Is(err, ErrMissingValue) is false")
	}
	if errors.Is(err, ErrSyntax) {
		t.Errorf("errors.Is(err, ErrSyntax) is true")
	}
}

// TestRenderAllocations pins the allocation budget of Render: the text
// and the argument slice, sized once, plus one per value that must be
// converted or boxed (a Date formatted as text, each list element).
func TestRenderAllocations(t *testing.T) {
	tpl, err := Compile(benchRenderSQL)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	lists, err := Compile("SELECT * FROM t WHERE a IN {variables.l} AND b IN ({variables.l}) AND c = {variables.s}")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	listValues := map[string]any{"l": []string{"x", "y", "z"}, "s": "s"}
	tests := []struct {
		name   string
		tpl    *Template
		d      engine.Engine
		values map[string]any
		max    float64
	}{
		{"sqlite", tpl, engine.SQLite, benchValues, 2},
		{"mysql", tpl, engine.MySQL, benchValues, 2},
		{"postgresql", tpl, engine.PostgreSQL, benchValues, 2},
		{"sqlite list", lists, engine.SQLite, listValues, 2 + 6},
		{"postgresql list", lists, engine.PostgreSQL, listValues, 2 + 3},
	}
	for _, tt := range tests {
		got := testing.AllocsPerRun(100, func() {
			if _, _, err := tt.tpl.Render(tt.d, tt.values); err != nil {
				t.Fatal(err)
			}
		})
		if a, b := got, tt.max; !(a <= b) {
			t.Errorf("%v: got = %v, want <= %v", tt.name, a, b)
		}
	}
}
