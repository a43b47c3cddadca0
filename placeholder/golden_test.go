package placeholder

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
