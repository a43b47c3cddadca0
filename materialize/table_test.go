package materialize

import (
	"database/sql"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

func TestTableName(t *testing.T) {
	cases := []struct {
		id      string
		version int
		want    string
	}{
		{"0190d6a4-8c6e-7b3f-9d41-2f6c1e5a7b90", 3, "endpointkit_mat_0190d6a48c6e7b3f9d412f6c1e5a7b90_v3"},
		{"Daily Revenue!", 1, "endpointkit_mat_dailyrevenue_v1"},
		{`x"; DROP TABLE events; --`, 2, "endpointkit_mat_xdroptableevents_v2"},
		{"", 7, "endpointkit_mat__v7"},
	}
	for _, c := range cases {
		got := TableName(c.id, c.version)
		if got, want := got, c.want; got != want {
			t.Fatalf("got = %q, want %q", got, want)
		}
		// The refresh's table and its index, within PostgreSQL's 63 bytes.
		if a, b := len(got)+len("_next_ix"), 63; !(a <= b) {
			t.Fatalf("len(got)+len(\"_next_ix\") = %v, want <= %v", a, b)
		}
	}
}

func TestRefresh(t *testing.T) {
	cases := []struct {
		d    engine.Engine
		want []string
	}{
		{engine.SQLite, []string{`DROP TABLE IF EXISTS "m_next"`, `CREATE TABLE "m_next" AS SELECT`,
			`DROP TABLE IF EXISTS "m"`, `ALTER TABLE "m_next" RENAME TO "m"`, `CREATE INDEX IF NOT EXISTS "m_ix" ON "m" ("e")`}},
		{engine.PostgreSQL, []string{`DROP TABLE IF EXISTS "m_next"`, `CREATE TABLE "m_next" AS SELECT`,
			`DROP TABLE IF EXISTS "m"`, `ALTER TABLE "m_next" RENAME TO "m"`, `CREATE INDEX IF NOT EXISTS "m_ix" ON "m" ("e")`}},
		{engine.MySQL, []string{"DROP TABLE IF EXISTS `m_next`", "CREATE TABLE `m_next` AS SELECT", "CREATE TABLE IF NOT EXISTS `m` LIKE `m_next`",
			"DROP TABLE IF EXISTS `m_old`", "RENAME TABLE `m` TO `m_old`, `m_next` TO `m`", "DROP TABLE IF EXISTS `m_old`"}},
		{engine.ClickHouse, []string{"DROP TABLE IF EXISTS `m_next`", "CREATE TABLE `m_next` ENGINE = MergeTree ORDER BY tuple() AS SELECT",
			"CREATE TABLE IF NOT EXISTS `m` AS `m_next`", "EXCHANGE TABLES `m_next` AND `m`", "DROP TABLE IF EXISTS `m_next`"}},
	}
	for _, c := range cases {
		plan := mustPlan(t, "SELECT count(*) FROM events WHERE event = {variables.e}", Options{Engine: c.d})
		r, err := plan.Refresh("m")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		stmts := r.Statements()
		if got := len(stmts); got != len(c.want) {
			t.Fatalf("%s: %q: len(stmts) = %d, want %d: %v", c.d.Name(), stmts, got, len(c.want), stmts)
		}
		for i := range stmts {
			if s, sub := stmts[i], c.want[i]; !strings.Contains(s, sub) {
				t.Fatalf("%q does not contain %q", s, sub)
			}
		}
		_, err = plan.Refresh("")
		if err := err; !errors.Is(err, ErrInvalidTable) {
			t.Fatalf("error %v is not %v", err, ErrInvalidTable)
		}
	}
}

// TestRefreshIndexColumns: the index holds each compared column once,
// those compared only with = first (an index serves equalities and then
// one range), and on SQLite, after them, the columns an aggregating read
// over a range takes (the group keys, the aggregates' parts, the grain);
// a query without variables gets no index.
func TestRefreshIndexColumns(t *testing.T) {
	opts := Options{Engine: engine.SQLite, Types: map[string]variable.Type{"from": variable.Date, "to": variable.Date}}
	cases := []struct {
		query string
		index string // "" for none
	}{
		{`SELECT count(*) AS n FROM events WHERE timestamp >= {variables.from} AND event = {variables.e}
			AND timestamp < {variables.to} AND distinct_id = {variables.u}`, `("e", "u", "from", "to", "_a0")`},
		{`SELECT date(timestamp) AS day, count(DISTINCT distinct_id) AS users, sum(amount) AS s FROM events
			WHERE timestamp >= {variables.from} AND event = {variables.e} GROUP BY day`, `("e", "from", "_k0", "_d0", "_a0")`},
		{`SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY event`, `("from", "_k0", "_a0")`},
		{`SELECT event, count(*) AS n FROM events WHERE country IN {variables.c} GROUP BY event`, `("c")`},
		{`SELECT uuid FROM events WHERE amount >= {variables.lo} AND amount < {variables.lo_end} AND plan = {variables.p} ORDER BY uuid`,
			`("p", "lo", "lo_end")`},
		{`SELECT uuid FROM events WHERE event = {variables.e} AND {variables.e} = event ORDER BY uuid`, `("e")`},
		{`SELECT event, count(*) AS n FROM events GROUP BY event`, ""},
	}
	for _, c := range cases {
		r, err := mustPlan(t, c.query, opts).Refresh("m")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		var index []string
		for _, s := range r.Statements() {
			if strings.Contains(s, " INDEX ") {
				index = append(index, s)
			}
		}
		if c.index == "" {
			if v := index; !(len(v) == 0) {
				t.Fatalf("%v: index = %v, want it empty", c.query, v)
			}
			continue
		}
		if got, want := index, ([]string{`CREATE INDEX IF NOT EXISTS "m_ix" ON "m" ` + c.index}); !reflect.DeepEqual(got, want) {
			t.Fatalf("%v: index = %+v, want %+v", c.query, got, want)
		}
	}
}

// TestRefreshAgainSQLite: refreshing the same table again and again
// works (the index name the last refresh left on the table is freed), the
// table stays indexed, and a paged read of one value searches that index
// instead of scanning the table.
func TestRefreshAgainSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE sales (customer TEXT, day TEXT, amount INTEGER);
		INSERT INTO sales VALUES ('a', '2025-01-01', 1), ('a', '2025-01-02', 2), ('b', '2025-01-01', 3)`)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	plan := mustPlan(t, `SELECT day, sum(amount) AS s FROM sales WHERE customer = {variables.c} GROUP BY day ORDER BY day`,
		Options{Engine: engine.SQLite})
	for i := range 3 {
		r, err := plan.Refresh("m")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		for _, s := range r.Statements() {
			_, err := db.Exec(s)
			if err != nil {
				t.Fatalf("refresh %d: %s: unexpected error: %v", i, s, err)
			}
		}
		var indexes []string
		rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'm'`)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			indexes = append(indexes, n)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := indexes, ([]string{"m_ix"}); !reflect.DeepEqual(got, want) {
			t.Fatalf("refresh %d: indexes = %+v, want %+v", i, got, want)
		}
	}
	q, args, err := plan.ReadPage("m", map[string]any{"c": "a"}, 2, 0)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	var detail []string
	rows, err := db.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var d string
		if err := rows.Scan(&id, &parent, &unused, &d); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		detail = append(detail, d)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if s, sub := strings.Join(detail, "\n"), `USING INDEX m_ix (c=?)`; !strings.Contains(s, sub) {
		t.Fatalf("%q does not contain %q", s, sub)
	}
	got := query(t, db, q, args)
	if got, want := got.rows, ([][]any{{"2025-01-01", int64(1)}, {"2025-01-02", int64(2)}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("got.rows = %+v, want %+v", got, want)
	}
}
