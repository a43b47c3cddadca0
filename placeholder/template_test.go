package placeholder

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompileReportsSyntaxErrors(t *testing.T) {
	_, err := Compile("SELECT 1\nWHERE a = {variables.a b}")
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 2, se.Line)
	assert.Equal(t, 24, se.Column)
}

func TestTemplateAccessors(t *testing.T) {
	src := "SELECT {variables.b}, {variables.a}, {variables.b} WHERE x IN {variables.c}"
	tpl, err := Compile(src)
	require.NoError(t, err)
	if got, want := tpl.Source(), src; got != want {
		t.Errorf("tpl.Source() = %q, want %q", got, want)
	}
	assert.Equal(t, []string{"b", "a", "c"}, tpl.Names())
	phs := tpl.Placeholders()
	require.Len(t, phs, 4)
	want, err := Scan(src)
	require.NoError(t, err)
	assert.Equal(t, want, phs)

	// The accessors hand out copies: a caller cannot change the template.
	tpl.Names()[0] = "zz"
	tpl.Placeholders()[0].Name = "zz"
	assert.Equal(t, "b", tpl.Names()[0])
	assert.Equal(t, "b", tpl.Placeholders()[0].Name)

	none, err := Compile("SELECT 1")
	require.NoError(t, err)
	v := none.Names()
	assert.True(t, (len(v) == 0), "none.Names() = %v, want it empty", v)
	if v := none.Placeholders(); !(len(v) == 0) {
		t.Errorf("none.Placeholders() = %v, want it empty", v)
	}
	got, args, err := none.Render(engine.PostgreSQL, nil)
	require.NoError(t, err)
	assert.Equal(t, "SELECT 1", got)
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
			require.NoError(t, err)
			for _, d := range engine.All() {
				got, args, err := tpl.Render(d, tt.values)
				v := got
				assert.True(t, (v == ""), "got = %v, want it empty", v)
				assert.Nil(t, args)
				assert.ErrorIs(t, err, tt.sentinel, "%v", d.Name())
				var ve *VariableError
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, tt.variable, ve.Name)
				assert.Equal(t, tt.line, ve.Line)
				assert.Equal(t, tt.col, ve.Column)
				assert.Contains(t, ve.Detail, tt.detail)
				s, sub := err.Error(), `"`+tt.variable+`"`
				assert.Contains(t, s, sub)
			}
		})
	}
}

func nan() float64 { var zero float64; return zero / zero }

func TestRenderZeroDialect(t *testing.T) {
	tpl, err := Compile("a = {variables.a}")
	require.NoError(t, err)
	_, _, err = tpl.Render(nil, map[string]any{"a": "x"})
	assert.ErrorIs(t, err, ErrNoEngine)
}

func TestRenderIgnoresUnusedValues(t *testing.T) {
	tpl, err := Compile("a = {variables.a}")
	require.NoError(t, err)
	got, args, err := tpl.Render(engine.SQLite, map[string]any{"a": "x", "other": []int{1}})
	require.NoError(t, err)
	assert.Equal(t, "a = ?", got)
	assert.Equal(t, []any{"x"}, args)
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
			require.NoError(t, err)
			err = tpl.CheckLists(multi)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrListPosition)
			var ve *VariableError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tt.name, ve.Name)
			assert.Equal(t, tt.line, ve.Line)
			assert.Equal(t, tt.col, ve.Column)
		})
	}
}

// TestRenderConcurrent renders one template from many goroutines; run
// with -race it shows that Render keeps no state in the Template.
func TestRenderConcurrent(t *testing.T) {
	tpl, err := Compile("a = {variables.a} AND b IN {variables.l} AND c = {variables.a}")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				v := fmt.Sprint(g, i)
				got, args, err := tpl.Render(engine.PostgreSQL, map[string]any{"a": v, "l": []string{v, "x"}})
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, "a = $1 AND b IN ($2, $3) AND c = $1", got)
				assert.Equal(t, []any{v, v, "x"}, args)
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
	db := testdb.SQLite(t)
	const n = 3000
	require.NoError(t, demo.Load(ctx, db, n, 7))

	from := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2025, 5, 15, 12, 30, 0, 0, time.UTC)
	var inRange, pageviewsOrSignups, signupsInRange, signupsAll int
	require.NoError(t, demo.Generate(n, 7, func(e demo.Event) error {
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
	}))
	require.Greater(t, signupsInRange, 0)

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
			require.NoError(t, err)
			query, args, err := tpl.Render(engine.SQLite, tt.values)
			require.NoError(t, err)
			var got int
			require.NoError(t, db.QueryRowContext(ctx, query, args...).Scan(&got), "%v", query)
			assert.Equal(t, tt.want, got, "%v", query)
		})
	}
}

func TestRenderErrorsAreTyped(t *testing.T) {
	tpl, err := Compile("{variables.a}")
	require.NoError(t, err)
	_, _, err = tpl.Render(engine.SQLite, nil)
	assert.ErrorIs(t, err, ErrMissingValue, "errors.Is(err, ErrMissingValue) is false")
	assert.NotErrorIs(t, err, ErrSyntax, "errors.Is(err, ErrSyntax) is true")
}

// TestRenderAllocations pins the allocation budget of Render: the text
// and the argument slice, sized once, plus one per value that must be
// converted or boxed (a Date formatted as text, each list element).
func TestRenderAllocations(t *testing.T) {
	tpl, err := Compile(benchRenderSQL)
	require.NoError(t, err)
	lists, err := Compile("SELECT * FROM t WHERE a IN {variables.l} AND b IN ({variables.l}) AND c = {variables.s}")
	require.NoError(t, err)
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
			_, _, err := tt.tpl.Render(tt.d, tt.values)
			require.NoError(t, err)
		})
		a, b := got, tt.max
		assert.True(t, (a <= b), "%v: got = %v, want <= %v", tt.name, a, b)
	}
}
