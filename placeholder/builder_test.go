package placeholder

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// build writes the same generated query with every dialect.
func build(d engine.Engine) *Builder {
	b := NewBuilder(d)
	b.WriteString("SELECT ")
	b.WriteIdent("event")
	b.WriteString(", count(*) FROM events WHERE event IN (")
	b.Bind([]string{"a", "b"})
	b.WriteString(") AND timestamp >= ")
	b.Bind(variable.Timestamp{Time: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), DateOnly: true})
	b.WriteString(" AND n = ")
	b.Bind(int64(7))
	b.WriteString(" AND m = ")
	b.Bind(int64(7))
	b.WriteString(" GROUP BY 1")
	return b
}

func TestBuilder(t *testing.T) {
	tests := []struct {
		d    engine.Engine
		sql  string
		args []any
	}{
		{engine.SQLite, `SELECT "event", count(*) FROM events WHERE event IN (?, ?) AND timestamp >= ? AND n = ? AND m = ? GROUP BY 1`,
			[]any{"a", "b", "2025-05-01", int64(7), int64(7)}},
		{engine.MySQL, "SELECT `event`, count(*) FROM events WHERE event IN (?, ?) AND timestamp >= ? AND n = ? AND m = ? GROUP BY 1",
			[]any{"a", "b", "2025-05-01", int64(7), int64(7)}},
		{engine.PostgreSQL, `SELECT "event", count(*) FROM events WHERE event IN ($1, $2) AND timestamp >= $3 AND n = $4 AND m = $5 GROUP BY 1`,
			[]any{"a", "b", "2025-05-01", int64(7), int64(7)}},
		{engine.ClickHouse, "SELECT `event`, count(*) FROM events WHERE event IN ({p1:String}, {p2:String}) AND timestamp >= {p3:String} AND n = {p4:Int64} AND m = {p5:Int64} GROUP BY 1",
			named("p1", "a", "p2", "b", "p3", "2025-05-01", "p4", "7", "p5", "7")},
	}
	for _, tt := range tests {
		t.Run(tt.d.Name(), func(t *testing.T) {
			b := build(tt.d)
			require.NoError(t, b.Err())
			got, want := b.SQL(), tt.sql
			assert.Equal(t, want, got, "b.SQL()")
			if got, want := b.Args(), tt.args; !reflect.DeepEqual(got, want) {
				t.Errorf("b.Args() = %+v, want %+v", got, want)
			}
			if got, want := b.Engine(), tt.d; !reflect.DeepEqual(got, want) {
				t.Errorf("b.Engine() = %+v, want %+v", got, want)
			}
			again, err := Scan(b.SQL())
			require.NoError(t, err)
			v := again
			assert.True(t, (len(v) == 0), "again = %v, want it empty", v)
		})
	}
}

func TestBuilderPadsMarkers(t *testing.T) {
	b := NewBuilder(engine.PostgreSQL)
	b.WriteString("SELECT x")
	b.Bind(int64(1))
	b.WriteString("0, ")
	b.Bind(int64(2))
	b.Bind(int64(3))
	b.WriteString("")
	b.WriteString(", ")
	b.Bind("s")
	b.WriteString("::text")
	require.NoError(t, b.Err())
	assert.Equal(t, "SELECT x $1 0, $2 $3, $4::text", b.SQL())
}

func TestBuilderErrors(t *testing.T) {
	b := NewBuilder(engine.SQLite)
	b.WriteString("a = ")
	b.Bind(struct{}{})
	assert.ErrorIs(t, b.Err(), ErrUnsupportedValue)
	b.Bind([]string{})
	assert.ErrorIs(t, b.Err(), ErrUnsupportedValue, "the first error is kept")
	v := b.Args()
	assert.True(t, (len(v) == 0), "b.Args() = %v, want it empty", v)

	b = NewBuilder(engine.SQLite)
	b.Bind([]string{})
	assert.ErrorIs(t, b.Err(), ErrEmptyList)
	b.Bind("after an error, nothing is bound")
	if v := b.Args(); !(len(v) == 0) {
		t.Errorf("b.Args() = %v, want it empty", v)
	}

	assert.ErrorIs(t, NewBuilder(nil).Err(), ErrNoEngine)
}

func TestBuilderOnSQLite(t *testing.T) {
	db := testdb.SQLite(t)
	ctx := context.Background()
	setup := NewBuilder(engine.SQLite)
	setup.WriteString("CREATE TABLE ")
	setup.WriteIdent(`odd "name"`)
	setup.WriteString(" (")
	setup.WriteIdent("v")
	setup.WriteString(" TEXT)")
	_, err := db.ExecContext(ctx, setup.SQL())
	require.NoError(t, err)
	for _, v := range []string{"a", "b", "it's"} {
		ins := NewBuilder(engine.SQLite)
		ins.WriteString(`INSERT INTO "odd ""name""" VALUES (`)
		ins.Bind(v)
		ins.WriteString(")")
		_, err := db.ExecContext(ctx, ins.SQL(), ins.Args()...)
		require.NoError(t, err)
	}
	q := NewBuilder(engine.SQLite)
	q.WriteString(`SELECT count(*) FROM "odd ""name""" WHERE v IN (`)
	q.Bind([]string{"it's", "b", "zzz"})
	q.WriteString(")")
	var n int
	require.NoError(t, db.QueryRowContext(ctx, q.SQL(), q.Args()...).Scan(&n))
	assert.Equal(t, 2, n)
}

// TestBuilderWriteTemplate: a template written into a Builder numbers its
// markers after the arguments before it, binds every use of a name, and a
// missing value is an error, not a marker without an argument.
func TestBuilderWriteTemplate(t *testing.T) {
	tmpl, err := Compile("(SELECT * FROM events WHERE project_id = {variables.p}) AS e WHERE e.x IN {variables.l} OR owner = {variables.p}")
	require.NoError(t, err)
	b := NewBuilder(engine.PostgreSQL)
	b.WriteString("SELECT n FROM t WHERE a = ")
	b.Bind(int64(1))
	b.WriteString(" UNION ALL SELECT n FROM ")
	b.WriteTemplate(tmpl, map[string]any{"p": "7", "l": []string{"a", "b"}})
	require.NoError(t, b.Err())
	assert.Equal(t, "SELECT n FROM t WHERE a = $1 UNION ALL SELECT n FROM (SELECT * FROM events WHERE project_id = $2) AS e WHERE e.x IN ($3, $4) OR owner = $5", b.SQL())
	assert.Equal(t, []any{int64(1), "7", "a", "b", "7"}, b.Args())

	missing := NewBuilder(engine.SQLite)
	missing.WriteTemplate(tmpl, map[string]any{"l": []string{"a"}})
	require.ErrorIs(t, missing.Err(), ErrMissingValue)
	assert.Contains(t, missing.Err().Error(), "p")
}
