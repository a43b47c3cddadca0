package placeholder

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
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
	if a, b := len(hostile), 30; !(a >= b) {
		t.Fatalf("len(hostile) = %v, want >= %v", a, b)
	}
	ctx := context.Background()
	db := openSQLite(t)
	_, err := db.ExecContext(ctx, "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = db.ExecContext(ctx, "CREATE TABLE secrets (token TEXT)")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	// Every hostile value is a row, some twice, beside ordinary names, so
	// that the right answer is never the empty set.
	names := []string{"alice", "bob", "carol"}
	names = append(names, hostile...)
	names = append(names, hostile[2], hostile[5], hostile[22])
	for _, name := range names {
		_, err := db.ExecContext(ctx, "INSERT INTO people (name) VALUES (?)", name)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
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
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	twice, err := Compile("SELECT id, name FROM people WHERE name = {variables.x} AND length(name) = length({variables.x}) ORDER BY id")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	list, err := Compile("SELECT id, name FROM people WHERE name IN {variables.xs} ORDER BY id")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	for i, v := range hostile {
		label := fmt.Sprintf("value %d %.40q", i, v)
		want := idsOf(func(name string) bool { return name == v })
		if v := want; len(v) == 0 {
			t.Fatalf("%v: want is empty", label)
		}
		for _, d := range []engine.Engine{engine.SQLite, engine.PostgreSQL} {
			for _, tpl := range []*Template{one, twice} {
				query, args, err := tpl.Render(d, map[string]any{"x": v})
				if err != nil {
					t.Fatalf("%v: unexpected error: %v", label, err)
				}
				benign, _, err := tpl.Render(d, map[string]any{"x": "alice"})
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if got, want := query, benign; got != want {
					t.Errorf("%s: the SQL text does not depend on the value: query = %q, want %q", label, got, want)
				}
				ids, got := queryPeople(t, db, query, args)
				if got, want := ids, want; !reflect.DeepEqual(got, want) {
					t.Errorf("%s %s: %s: ids = %+v, want %+v", label, d.Name(), query, got, want)
				}
				for _, name := range got {
					if got, want := name, v; got != want {
						t.Errorf("%v: name = %q, want %q", label, got, want)
					}
				}
			}
		}

		// A list of this value and the next one.
		w := hostile[(i+1)%len(hostile)]
		want = idsOf(func(name string) bool { return name == v || name == w })
		for _, d := range []engine.Engine{engine.SQLite, engine.PostgreSQL} {
			query, args, err := list.Render(d, map[string]any{"xs": []string{v, w}})
			if err != nil {
				t.Fatalf("%v: unexpected error: %v", label, err)
			}
			ids, _ := queryPeople(t, db, query, args)
			if got, want := ids, want; !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: %s: ids = %+v, want %+v", label, d.Name(), query, got, want)
			}
		}
	}

	if got, want := snapshot(t, db), schema; !reflect.DeepEqual(got, want) {
		t.Errorf("schema unchanged: snapshot(t, db) = %+v, want %+v", got, want)
	}
	var count int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM people").Scan(&count); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := count, len(names); got != want {
		t.Errorf("no row added or removed: count = %v, want %v", got, want)
	}
}

func queryPeople(t *testing.T, db *sql.DB, query string, args []any) (ids []int64, names []string) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%v: unexpected error: %v", query, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		ids = append(ids, id)
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
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
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			out = append(out, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		rows.Close()
	}
	return out
}
