package placeholder

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
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
		wg.Go(func() {
			for i := range 100 {
				v := fmt.Sprint(g, i)
				got, args, err := tpl.Render(engine.PostgreSQL, map[string]any{"a": v, "l": []string{v, "x"}})
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, "a = $1 AND b IN ($2, $3) AND c = $1", got)
				assert.Equal(t, []any{v, v, "x"}, args)
			}
		})
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

// rendered is the expected output of one render.
type rendered struct {
	sql  string
	args []any
}

// named builds ClickHouse arguments from parameter name, value pairs. The
// arguments are positional (an executor names the n-th one pn), so the
// names must be p1, p2, ... in order; a pair out of order is a bug in the
// test table.
func named(pairs ...string) []any {
	var out []any
	for i := 0; i < len(pairs); i += 2 {
		if want := fmt.Sprintf("p%d", i/2+1); pairs[i] != want {
			panic("named: " + pairs[i] + " where " + want + " belongs")
		}
		out = append(out, pairs[i+1])
	}
	return out
}

// TestRenderGolden is the replay table of rendering: each case's SQL and
// values, and the exact text and arguments expected for every dialect.
// engine.SQLite and engine.MySQL share "lite" because both bind with '?'.
func TestRenderGolden(t *testing.T) {
	day := variable.Timestamp{Time: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC), DateOnly: true}
	at := variable.Timestamp{Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}

	var many, manyLite, manyPG, manyCH []string
	manyValues := map[string]any{}
	var manyArgs, manyNamed []any
	for i := 1; i <= 11; i++ {
		name := fmt.Sprintf("v%d", i)
		many = append(many, "{variables."+name+"}")
		manyLite = append(manyLite, "?")
		manyPG = append(manyPG, fmt.Sprintf("$%d", i))
		manyCH = append(manyCH, fmt.Sprintf("{p%d:Int64}", i))
		manyValues[name] = int64(i)
		manyArgs = append(manyArgs, int64(i))
		manyNamed = append(manyNamed, fmt.Sprint(i))
	}

	tests := []struct {
		name         string
		sql          string
		values       map[string]any
		lite, pg, ch rendered
	}{
		{
			name:   "scalar types",
			sql:    "SELECT * FROM t WHERE s = {variables.s} AND n > {variables.n} AND f < { variables.f } AND b = {variables.b}",
			values: map[string]any{"s": "x", "n": int64(3), "f": 1.5, "b": true},
			lite:   rendered{"SELECT * FROM t WHERE s = ? AND n > ? AND f < ? AND b = ?", []any{"x", int64(3), 1.5, true}},
			pg:     rendered{"SELECT * FROM t WHERE s = $1 AND n > $2 AND f < $3 AND b = $4", []any{"x", int64(3), 1.5, true}},
			ch: rendered{"SELECT * FROM t WHERE s = {p1:String} AND n > {p2:Int64} AND f < {p3:Float64} AND b = {p4:Bool}",
				named("p1", "x", "p2", "3", "p3", "1.5", "p4", "true")},
		},
		{
			name:   "variable used twice",
			sql:    "WHERE a >= {variables.d} AND b < {variables.d} AND c = {variables.s}",
			values: map[string]any{"d": day, "s": "y"},
			lite:   rendered{"WHERE a >= ? AND b < ? AND c = ?", []any{"2025-01-02", "2025-01-02", "y"}},
			pg:     rendered{"WHERE a >= $1 AND b < $1 AND c = $2", []any{"2025-01-02", "y"}},
			ch:     rendered{"WHERE a >= {p1:String} AND b < {p1:String} AND c = {p2:String}", named("p1", "2025-01-02", "p2", "y")},
		},
		{
			name:   "date-time",
			sql:    "WHERE ts < {variables.at}",
			values: map[string]any{"at": at},
			lite:   rendered{"WHERE ts < ?", []any{"2025-01-02 03:04:05"}},
			pg:     rendered{"WHERE ts < $1", []any{"2025-01-02 03:04:05"}},
			ch:     rendered{"WHERE ts < {p1:String}", named("p1", "2025-01-02 03:04:05")},
		},
		{
			name:   "lists",
			sql:    "WHERE a IN {variables.l} AND b NOT IN ( {variables.l} ) AND c = {variables.s}",
			values: map[string]any{"l": []string{"u", "v", "w"}, "s": "z"},
			lite:   rendered{"WHERE a IN (?, ?, ?) AND b NOT IN ( ?, ?, ? ) AND c = ?", []any{"u", "v", "w", "u", "v", "w", "z"}},
			pg:     rendered{"WHERE a IN ($1, $2, $3) AND b NOT IN ( $1, $2, $3 ) AND c = $4", []any{"u", "v", "w", "z"}},
			ch: rendered{"WHERE a IN ({p1:String}, {p2:String}, {p3:String}) AND b NOT IN ( {p1:String}, {p2:String}, {p3:String} ) AND c = {p4:String}",
				named("p1", "u", "p2", "v", "p3", "w", "p4", "z")},
		},
		{
			name:   "one-element list",
			sql:    "WHERE a IN {variables.l}",
			values: map[string]any{"l": []string{"only"}},
			lite:   rendered{"WHERE a IN (?)", []any{"only"}},
			pg:     rendered{"WHERE a IN ($1)", []any{"only"}},
			ch:     rendered{"WHERE a IN ({p1:String})", named("p1", "only")},
		},
		{
			name:   "scalar in list position",
			sql:    "WHERE a IN {variables.s} OR b IN ({variables.s})",
			values: map[string]any{"s": "q"},
			lite:   rendered{"WHERE a IN (?) OR b IN (?)", []any{"q", "q"}},
			pg:     rendered{"WHERE a IN ($1) OR b IN ($1)", []any{"q"}},
			ch:     rendered{"WHERE a IN ({p1:String}) OR b IN ({p1:String})", named("p1", "q")},
		},
		{
			name:   "no merging with neighbours",
			sql:    "SELECT {variables.a}0, x{variables.a}, {variables.a}{variables.b}, ({variables.a}), é{variables.b}_, IN{variables.l}",
			values: map[string]any{"a": int64(1), "b": int64(2), "l": []string{"m"}},
			lite:   rendered{"SELECT ? 0, x ?, ? ?, (?), é ? _, IN (?)", []any{int64(1), int64(1), int64(1), int64(2), int64(1), int64(2), "m"}},
			pg:     rendered{"SELECT $1 0, x $1, $1 $2, ($1), é $2 _, IN ($3)", []any{int64(1), int64(2), "m"}},
			ch: rendered{"SELECT {p1:Int64} 0, x {p1:Int64}, {p1:Int64} {p2:Int64}, ({p1:Int64}), é {p2:Int64} _, IN ({p3:String})",
				named("p1", "1", "p2", "2", "p3", "m")},
		},
		{
			name:   "quotes, comments and foreign braces left alone",
			sql:    "SELECT '{variables.a}', \"{variables.a}\", `{variables.a}`, '{\"k\": 1}', {p:String} -- {variables.a}\n/* {variables.a} */ {variables.a}",
			values: map[string]any{"a": "v"},
			lite:   rendered{"SELECT '{variables.a}', \"{variables.a}\", `{variables.a}`, '{\"k\": 1}', {p:String} -- {variables.a}\n/* {variables.a} */ ?", []any{"v"}},
			pg:     rendered{"SELECT '{variables.a}', \"{variables.a}\", `{variables.a}`, '{\"k\": 1}', {p:String} -- {variables.a}\n/* {variables.a} */ $1", []any{"v"}},
			ch:     rendered{"SELECT '{variables.a}', \"{variables.a}\", `{variables.a}`, '{\"k\": 1}', {p:String} -- {variables.a}\n/* {variables.a} */ {p1:String}", named("p1", "v")},
		},
		{
			name:   "more than nine arguments",
			sql:    strings.Join(many, ","),
			values: manyValues,
			lite:   rendered{strings.Join(manyLite, ","), manyArgs},
			pg:     rendered{strings.Join(manyPG, ","), manyArgs},
			ch:     rendered{strings.Join(manyCH, ","), manyNamed},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Compile(tt.sql)
			require.NoError(t, err)
			for _, c := range []struct {
				d    engine.Engine
				want rendered
			}{{engine.SQLite, tt.lite}, {engine.MySQL, tt.lite}, {engine.PostgreSQL, tt.pg}, {engine.ClickHouse, tt.ch}} {
				got, args, err := tpl.Render(c.d, tt.values)
				require.NoError(t, err, "%v", c.d.Name())
				assert.Equal(t, c.want.sql, got, "%v", c.d.Name())
				if got, want := args, c.want.args; !reflect.DeepEqual(got, want) {
					t.Errorf("%v: args = %+v, want %+v", c.d.Name(), got, want)
				}
				again, err := Scan(got)
				require.NoError(t, err, "%v", c.d.Name())
				v := again
				assert.True(t, (len(v) == 0), "%s: rendered text holds no placeholder: again = %v, want it empty", c.d.Name(), v)
			}
		})
	}
}

// hostile are values an attacker would send to break out of a naive
// string substitution.
var hostile = []string{
	"'",
	"''",
	"' OR 1=1 --",
	"' OR '1'='1",
	"admin'--",
	"'; DROP TABLE people; --",
	"x'); DROP TABLE people; --",
	"1; DROP TABLE people",
	"'; DELETE FROM people; SELECT '",
	"\" OR \"\"=\"",
	"\"; DROP TABLE people; --",
	`\' OR 1=1 --`,
	`\`,
	`\\`,
	`\'`,
	`%' OR name LIKE '%`,
	"' UNION SELECT id, sql FROM sqlite_master --",
	"' AND 1=0 UNION SELECT 1, 'x' --",
	"' || (SELECT group_concat(sql) FROM sqlite_master) || '",
	"*/ OR 1=1 /*",
	"/* */",
	"-- comment",
	"\x00",
	"a\x00' OR 1=1 --",
	"’ OR 1=1 --", // right single quotation mark
	"ʼ OR ʼ1ʼ=ʼ1", // modifier letter apostrophe
	"＇ OR 1=1 --", // fullwidth apostrophe
	"\u2028' OR 1=1 --\u2029",
	"\n' OR 1=1 --\r\n",
	"\xff\xfe' OR 1=1 --",
	"'; ATTACH DATABASE 'file:pwn?mode=memory' AS pwn; --",
	"'; PRAGMA writable_schema = 1; --",
	"{variables.x}",
	"?",
	"$1",
	"?1 OR 1=1",
	"CHAR(39)",
	"0x27",
	"NULL",
	"`",
	"",
	strings.Repeat("'", 100_000),
	strings.Repeat("A", 1<<20) + "' OR 1=1 --",
}

// TestInjectionSQLite binds every hostile value through Render into a
// real engine.SQLite query: each returns exactly the rows whose name is that
// value, and the schema is untouched. The engine.PostgreSQL rendering ($1) runs
// too, since engine.SQLite accepts $N markers.
func TestInjectionSQLite(t *testing.T) {
	a, b := len(hostile), 30
	require.True(t, (a >= b), "len(hostile) = %v, want >= %v", a, b)
	ctx := context.Background()
	db := testdb.SQLite(t)
	_, err := db.ExecContext(ctx, "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "CREATE TABLE secrets (token TEXT)")
	require.NoError(t, err)

	// Every hostile value is a row, some twice, beside ordinary names, so
	// that the right answer is never the empty set.
	names := []string{"alice", "bob", "carol"}
	names = append(names, hostile...)
	names = append(names, hostile[2], hostile[5], hostile[22])
	for _, name := range names {
		_, err := db.ExecContext(ctx, "INSERT INTO people (name) VALUES (?)", name)
		require.NoError(t, err)
	}
	idsOf := func(match func(string) bool) []int64 {
		var ids []int64
		for i, name := range names {
			if match(name) {
				ids = append(ids, int64(i+1))
			}
		}
		return ids
	}
	schema := snapshot(t, db)

	one, err := Compile("SELECT id, name FROM people WHERE name = {variables.x} ORDER BY id")
	require.NoError(t, err)
	twice, err := Compile("SELECT id, name FROM people WHERE name = {variables.x} AND length(name) = length({variables.x}) ORDER BY id")
	require.NoError(t, err)
	list, err := Compile("SELECT id, name FROM people WHERE name IN {variables.xs} ORDER BY id")
	require.NoError(t, err)

	for i, v := range hostile {
		label := fmt.Sprintf("value %d %.40q", i, v)
		want := idsOf(func(name string) bool { return name == v })
		if v := want; len(v) == 0 {
			t.Fatalf("%v: want is empty", label)
		}
		for _, d := range []engine.Engine{engine.SQLite, engine.PostgreSQL} {
			for _, tpl := range []*Template{one, twice} {
				query, args, err := tpl.Render(d, map[string]any{"x": v})
				require.NoError(t, err, "%v", label)
				benign, _, err := tpl.Render(d, map[string]any{"x": "alice"})
				require.NoError(t, err)
				if got, want := query, benign; got != want {
					t.Errorf("%s: the SQL text does not depend on the value: query = %q, want %q", label, got, want)
				}
				ids, got := queryPeople(t, db, query, args)
				if got, want := ids, want; !reflect.DeepEqual(got, want) {
					t.Errorf("%s %s: %s: ids = %+v, want %+v", label, d.Name(), query, got, want)
				}
				for _, name := range got {
					got, want := name, v
					assert.Equal(t, want, got, "%v: name", label)
				}
			}
		}

		// A list of this value and the next one.
		w := hostile[(i+1)%len(hostile)]
		want = idsOf(func(name string) bool { return name == v || name == w })
		for _, d := range []engine.Engine{engine.SQLite, engine.PostgreSQL} {
			query, args, err := list.Render(d, map[string]any{"xs": []string{v, w}})
			require.NoError(t, err, "%v", label)
			ids, _ := queryPeople(t, db, query, args)
			got, want := ids, want
			assert.Equal(t, want, got, "%s %s: %s: ids", label, d.Name(), query)
		}
	}

	got, want := snapshot(t, db), schema
	assert.Equal(t, want, got, "schema unchanged: snapshot(t, db)")
	var count int
	require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM people").Scan(&count))
	if got, want := count, len(names); got != want {
		t.Errorf("no row added or removed: count = %v, want %v", got, want)
	}
}

func queryPeople(t *testing.T, db *sql.DB, query string, args []any) (ids []int64, names []string) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query, args...)
	require.NoError(t, err, "%v", query)
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		require.NoError(t, rows.Scan(&id, &name))
		ids = append(ids, id)
		names = append(names, name)
	}
	require.NoError(t, rows.Err())
	return ids, names
}

// snapshot lists every schema object and attached database.
func snapshot(t *testing.T, db *sql.DB) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		"SELECT type || ' ' || name || ' ' || tbl_name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY 1",
		"SELECT name FROM pragma_database_list ORDER BY 1",
	} {
		out = append(out, testdb.Strings(t, db, q)...)
	}
	return out
}

// benchRenderSQL is a 3-variable template; the event is used twice.
const benchRenderSQL = `SELECT json_extract(properties, '$.country') AS country, count(*) AS n
FROM events
WHERE event = {variables.event}
  AND json_extract(properties, '$.amount') >= {variables.min_amount}
  AND json_extract(properties, '$.plan') = {variables.plan}
  AND {variables.event} <> ''
GROUP BY 1
ORDER BY n DESC`

var benchValues = map[string]any{"event": "purchase", "min_amount": int64(20), "plan": "pro"}

func BenchmarkRender(b *testing.B) {
	tpl, err := Compile(benchRenderSQL)
	require.NoError(b, err)
	dated := map[string]any{"event": "purchase", "min_amount": int64(20),
		"plan": variable.Timestamp{Time: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), DateOnly: true}}
	for _, c := range []struct {
		name   string
		d      engine.Engine
		values map[string]any
	}{
		{"sqlite", engine.SQLite, benchValues},
		{"postgresql", engine.PostgreSQL, benchValues},
		{"clickhouse", engine.ClickHouse, benchValues},
		// A Date value is formatted as text on engine.SQLite: one more string
		// and one more boxed argument per render.
		{"sqlite-date", engine.SQLite, dated},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _, err := tpl.Render(c.d, c.values)
				require.NoError(b, err)
			}
		})
	}
}

// BenchmarkRenderBaseline is the floor Render is measured against: the
// same text segments and markers concatenated with a strings.Builder of
// the right size, with no lookup, check or argument.
func BenchmarkRenderBaseline(b *testing.B) {
	tpl, err := Compile(benchRenderSQL)
	require.NoError(b, err)
	segments := make([]string, 0, len(tpl.parts)+1)
	for _, p := range tpl.parts {
		segments = append(segments, p.text)
	}
	segments = append(segments, tpl.tail)
	for _, c := range []struct {
		name    string
		markers []string
	}{
		{"sqlite", []string{"?", "?", "?", "?"}},
		{"postgresql", []string{"$1", "$2", "$3", "$1"}},
	} {
		size := 0
		for i, s := range segments {
			size += len(s)
			if i < len(c.markers) {
				size += len(c.markers[i])
			}
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var sb strings.Builder
				sb.Grow(size)
				for i, s := range segments {
					sb.WriteString(s)
					if i < len(c.markers) {
						sb.WriteString(c.markers[i])
					}
				}
				require.Equal(b, size, sb.Len())
			}
		})
	}
}
