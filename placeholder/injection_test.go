package placeholder

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		rows, err := db.QueryContext(context.Background(), q)
		require.NoError(t, err)
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			out = append(out, s)
		}
		require.NoError(t, rows.Err())
		rows.Close()
	}
	return out
}
