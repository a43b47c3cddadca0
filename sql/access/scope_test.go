package access

import (
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tenantVar = "__endpointkit_tenant"

// projectsDB returns an in-memory SQLite database (testdb.SQLite)
// holding the rows of the given projects: events and users tables with a
// project_id column, and the library's endpoints table. Both projects use
// the same user ids, so a join by user that was not scoped would cross
// projects.
func projectsDB(t testing.TB, projects ...string) *sql.DB {
	t.Helper()
	db := testdb.SQLite(t)
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := db.Exec(q, args...)
		require.NoError(t, err, "%s", q)
	}
	exec(`CREATE TABLE events (uuid TEXT PRIMARY KEY, project_id TEXT NOT NULL, event TEXT NOT NULL,
		distinct_id TEXT NOT NULL, timestamp TEXT NOT NULL, properties TEXT NOT NULL)`)
	exec(`CREATE INDEX events_event_timestamp ON events (event, timestamp)`)
	exec(`CREATE TABLE users (id TEXT, project_id TEXT, name TEXT, secret TEXT)`)
	exec(`CREATE TABLE endpointkit_endpoints (project TEXT, name TEXT, query_json TEXT)`)
	exec(`INSERT INTO endpointkit_endpoints VALUES ('1', 'a', '{"query": "SELECT 1"}')`)
	exec(`CREATE TABLE endpointkit_variables (code_name TEXT)`)
	exec(`INSERT INTO endpointkit_variables VALUES ('1'), ('2')`)
	names := []string{"$pageview", "signed_up", "purchase"}
	for _, p := range projects {
		// Project 2 has more events, other names and other days, so
		// that every aggregate tells the projects apart.
		n := 20
		if p == "2" {
			n = 33
		}
		for i := range n {
			ev := names[(i+len(p))%len(names)]
			if p == "2" && i%4 == 0 {
				ev = "only_in_2"
			}
			user := fmt.Sprintf("u%d", i%5)
			ts := fmt.Sprintf("2025-05-%02d %02d:00:00", 1+(i*(len(p)+2))%6, i%24)
			props := fmt.Sprintf(`{"plan": "p%s", "amount": %d}`, p, i*len(p))
			exec(`INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)`, p+"-"+fmt.Sprint(i), p, ev, user, ts, props)
		}
		for i := range 3 {
			exec(`INSERT INTO users VALUES (?, ?, ?, ?)`, fmt.Sprintf("u%d", i), p, "name-"+p+"-"+fmt.Sprint(i), "secret-"+p)
		}
	}
	return db
}

// run renders query for SQLite with values and returns its rows as text,
// or the error of the query's start; an error of its read fails t.
func run(t testing.TB, db *sql.DB, query string, values map[string]any) ([]string, [][]string, error) {
	t.Helper()
	tmpl, err := placeholder.Compile(query)
	require.NoError(t, err, "Compile(%q)", query)
	vals := map[string]any{}
	for _, n := range tmpl.Names() {
		v, ok := values[n]
		require.True(t, ok, "no value for %s", n)
		vals[n] = v
	}
	q, args, err := tmpl.Render(engine.SQLite, vals)
	require.NoError(t, err, "Render")
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, nil, err
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return nil, nil, err
	}
	var out [][]string
	for _, vs := range testdb.Rows(t, rows) {
		r := make([]string, len(cols))
		for i, v := range vs {
			r[i] = fmt.Sprint(v)
		}
		out = append(out, r)
	}
	return cols, out, nil
}

// scopedQueries are queries written every way a tenant filter could be
// missed: aliases, self-joins, subqueries, CTEs, unions, quoted and
// differently cased names, derived tables, table functions.
var scopedQueries = []string{
	readmeQuery,
	`SELECT * FROM events ORDER BY uuid`,
	`SELECT count(*) FROM events WHERE project_id = '2' OR 1 = 1`,
	`SELECT a.distinct_id, count(*) FROM events a JOIN events b ON a.distinct_id = b.distinct_id AND b.timestamp > a.timestamp GROUP BY a.distinct_id ORDER BY 1`,
	`SELECT count(*) FROM events WHERE distinct_id IN (SELECT distinct_id FROM events WHERE event = 'purchase')`,
	`WITH buyers AS (SELECT DISTINCT distinct_id FROM events WHERE event = 'purchase') SELECT e.event, count(*) FROM events AS e JOIN buyers USING (distinct_id) GROUP BY e.event ORDER BY e.event`,
	`SELECT (SELECT count(*) FROM events) AS total, (SELECT max(timestamp) FROM "events") AS last, (SELECT sum(json_extract(properties, '$.amount')) FROM EVENTS) AS amount`,
	`SELECT events.event, count(*) FROM events GROUP BY events.event ORDER BY 1`,
	`SELECT distinct_id FROM events WHERE event = 'purchase' UNION SELECT distinct_id FROM Events WHERE event = 'signed_up' ORDER BY 1`,
	`SELECT count(*) FROM events e WHERE EXISTS (SELECT 1 FROM events f WHERE f.distinct_id = e.distinct_id AND f.event = 'only_in_2')`,
	`SELECT n, count(*) FROM (SELECT distinct_id, count(*) AS n FROM events GROUP BY distinct_id) AS per_user GROUP BY n ORDER BY n`,
	`WITH RECURSIVE days(d) AS (SELECT '2025-05-01' UNION ALL SELECT date(d, '+1 day') FROM days WHERE d < '2025-05-06')
	 SELECT days.d, count(e.uuid) FROM days LEFT JOIN events e ON substr(e.timestamp, 1, 10) = days.d GROUP BY days.d ORDER BY days.d`,
	`SELECT j.key, count(*), sum(j.value) FROM events e, json_each(e.properties) j WHERE j.key = 'amount' GROUP BY j.key`,
	`SELECT uuid, row_number() OVER (PARTITION BY distinct_id ORDER BY timestamp, uuid) FROM events ORDER BY uuid`,
	`SELECT count(*) FROM (events a JOIN events b ON a.distinct_id = b.distinct_id)`,
	`SELECT count(*) FROM "Events" AS "E" WHERE "E".event = 'purchase'`,
	`SELECT u.name, count(*) FROM events e JOIN users u ON u.id = e.distinct_id GROUP BY u.name ORDER BY 1`,
	`SELECT x.n FROM (SELECT count(*) AS n FROM events CROSS JOIN events AS e2) AS x`,
	`WITH a AS (SELECT * FROM events), b AS (SELECT * FROM a JOIN events c ON c.uuid = a.uuid) SELECT count(*), max(b.timestamp) FROM b`,
	`SELECT * FROM events INDEXED BY events_event_timestamp WHERE event = 'purchase' ORDER BY uuid`,
	`SELECT e.uuid, x.n FROM events e, (SELECT count(*) AS n FROM events WHERE event = 'purchase') x ORDER BY e.uuid`,
	`SELECT count(*) FROM events WHERE uuid IN (SELECT uuid FROM events WHERE uuid IN (SELECT uuid FROM (SELECT uuid FROM events) AS z))`,
}

// TestScopeSeesOnlyItsProject runs every query scoped for project p on a
// database holding both projects, and the original query on a database
// holding only p's rows: the answers must be the same. The unscoped query
// on both projects answers differently for most of them, so the
// comparison can fail.
func TestScopeSeesOnlyItsProject(t *testing.T) {
	both := projectsDB(t, "1", "2")
	only := map[string]*sql.DB{"1": projectsDB(t, "1"), "2": projectsDB(t, "2")}
	rules := testRules()
	differ := 0
	for _, q := range scopedQueries {
		scoped, err := Confine(q, rules, tenantVar)
		if !assert.NoError(t, err, "Confine(%q)", q) {
			continue
		}
		for _, p := range []string{"1", "2"} {
			values := map[string]any{"event": "purchase", "from": "2025-05-01", "to": "2025-05-05", tenantVar: p}
			wantCols, want, err := run(t, only[p], q, values)
			require.NoError(t, err, "the original query on project %s's rows\n%s", p, q)
			gotCols, got, err := run(t, both, scoped, values)
			if !assert.NoError(t, err, "the scoped query failed\n%s", scoped) {
				continue
			}
			if assert.Equal(t, wantCols, gotCols, "project %s sees other rows:\n%s\nscoped: %s\ngot  %v %v\nwant %v %v", p, q, scoped, gotCols, got, wantCols, want) {
				assert.Equal(t, want, got, "project %s sees other rows:\n%s\nscoped: %s\ngot  %v %v\nwant %v %v", p, q, scoped, gotCols, got, wantCols, want)
			}
			_, unscoped, err := run(t, both, q, values)
			require.NoError(t, err)
			if !reflect.DeepEqual(unscoped, want) {
				differ++
			}
		}
	}
	require.GreaterOrEqual(t, differ, len(scopedQueries), "only of %d runs tell the projects apart; the test data cannot show a leak", 2*len(scopedQueries))
}

// TestScopeRestrictsColumns checks that a table with a column list shows
// only those columns: the engine itself refuses the others.
func TestScopeRestrictsColumns(t *testing.T) {
	db := projectsDB(t, "1", "2")
	rules := testRules()
	values := map[string]any{tenantVar: "1"}
	for _, q := range []string{
		`SELECT secret FROM users`,
		`SELECT u.secret FROM users u`,
		`SELECT users.project_id FROM users`,
		`SELECT count(*) FROM events e JOIN users u ON u.id = e.distinct_id WHERE u.secret <> ''`,
	} {
		if _, _, err := run(t, db, q, values); err != nil {
			t.Fatalf("unscoped %q fails already: %v", q, err)
		}
		scoped, err := Confine(q, rules, tenantVar)
		require.NoError(t, err)
		if _, _, err := run(t, db, scoped, values); err == nil || !strings.Contains(err.Error(), "no such column") {
			t.Errorf("scoped %q = %v, want no such column", scoped, err)
		}
	}
	scoped, err := Confine(`SELECT * FROM users ORDER BY id`, rules, tenantVar)
	require.NoError(t, err)
	cols, rows, err := run(t, db, scoped, values)
	require.NoError(t, err)
	if !reflect.DeepEqual(cols, []string{"id", "name"}) || len(rows) != 3 || rows[0][1] != "name-1-0" {
		t.Fatalf("SELECT * FROM users gave %v %v", cols, rows)
	}
}

func TestScopeRewrite(t *testing.T) {
	rules := &Rules{Tables: []Table{
		{Name: "events", TenantColumn: "project_id"},
		{Name: "users", Columns: []string{"id", "name"}},
		{Name: "plain"},
		{Name: "analytics.sessions", TenantColumn: "team_id", Columns: []string{"id"}},
	}}
	const ph = "{variables.t}"
	for _, c := range []struct{ in, want string }{
		{`SELECT * FROM events`,
			`SELECT * FROM (SELECT * FROM events WHERE events.project_id = ` + ph + `) AS events`},
		{`SELECT * FROM events AS e, events f`,
			`SELECT * FROM (SELECT * FROM events WHERE events.project_id = ` + ph + `) AS e, (SELECT * FROM events WHERE events.project_id = ` + ph + `) AS f`},
		{`SELECT * FROM EVENTS`,
			`SELECT * FROM (SELECT * FROM events WHERE events.project_id = ` + ph + `) AS EVENTS`},
		{`SELECT * FROM "Events" "E"`,
			`SELECT * FROM (SELECT * FROM "events" WHERE "events".project_id = ` + ph + `) AS "E"`},
		{"SELECT * FROM `events` AS `e`",
			"SELECT * FROM (SELECT * FROM `events` WHERE `events`.project_id = " + ph + ") AS `e`"},
		{`SELECT * FROM ONLY events`,
			`SELECT * FROM (SELECT * FROM ONLY events WHERE events.project_id = ` + ph + `) AS events`},
		{`SELECT * FROM events AS e FINAL SAMPLE 1/10 WHERE 1`,
			`SELECT * FROM (SELECT * FROM events FINAL SAMPLE 1/10 WHERE events.project_id = ` + ph + `) AS e WHERE 1`},
		{`SELECT * FROM events PARTITION (p0) AS e USE INDEX (i)`,
			`SELECT * FROM (SELECT * FROM events PARTITION (p0) USE INDEX (i) WHERE events.project_id = ` + ph + `) AS e`},
		{`SELECT * FROM events AS e(a, b)`,
			`SELECT * FROM (SELECT * FROM events WHERE events.project_id = ` + ph + `) AS e(a, b)`},
		{`SELECT * FROM users`,
			`SELECT * FROM (SELECT id, name FROM users) AS users`},
		{`SELECT * FROM PLAIN p JOIN "PLAIN" q USING (id) -- comment kept`,
			`SELECT * FROM plain p JOIN "plain" q USING (id) -- comment kept`},
		{`SELECT * FROM plain`, `SELECT * FROM plain`},
		{`SELECT s.id FROM Analytics.Sessions s`,
			`SELECT s.id FROM (SELECT id FROM analytics.sessions WHERE analytics.sessions.team_id = ` + ph + `) AS s`},
		{"SELECT  1 ,\n  (SELECT count(*) FROM events)  /* x */",
			"SELECT  1 ,\n  (SELECT count(*) FROM (SELECT * FROM events WHERE events.project_id = " + ph + ") AS events)  /* x */"},
		{`SELECT()FROM events USE INDEX()GROUP BY 1`,
			`SELECT()FROM (SELECT * FROM events USE INDEX() WHERE events.project_id = ` + ph + `) AS events GROUP BY 1`},
		{`WITH x AS (SELECT * FROM events) SELECT * FROM x`,
			`WITH x AS (SELECT * FROM (SELECT * FROM events WHERE events.project_id = ` + ph + `) AS events) SELECT * FROM x`},
	} {
		got, err := Confine(c.in, rules, "t")
		if !assert.NoError(t, err, "Confine(%q)", c.in) {
			continue
		}
		assert.Equal(t, c.want, got, "Confine(%q)", c.in)
		again, err := Confine(got, rules, "t")
		if assert.NoError(t, err, "Scope is not idempotent on %q: %q, %v", got, again, err) {
			assert.Equal(t, got, again, "Scope is not idempotent on %q: %q, %v", got, again, err)
		}
	}
}

func TestScopeNeedsATenantName(t *testing.T) {
	for _, name := range []string{"", "1x", "a-b", "a}"} {
		_, err := Confine("SELECT * FROM events", testRules(), name)
		if assert.Error(t, err, "Scope with tenant %q", name) {
			assert.NotErrorIs(t, err, ErrRefused, "Scope with tenant %q", name)
		}
	}
	_, err := Confine("SELECT * FROM plain", &Rules{Tables: []Table{{Name: "plain"}}}, "")
	assert.NoError(t, err, "no tenant column, no tenant name")
}

// TestSQLiteAttacksAreReal runs SQLite attacks from the table raw, to
// show that they do read what they should not, and checks that Check
// refuses them.
func TestSQLiteAttacksAreReal(t *testing.T) {
	db := projectsDB(t, "1", "2")
	for _, q := range []string{
		`SELECT * FROM endpointkit_endpoints`,
		`SELECT * FROM 'sqlite_master'`,
		`SELECT * FROM [sqlite_master]`,
		`SELECT * FROM pragma_table_info('endpointkit_endpoints')`,
		`SELECT * FROM pragma_table_list`,
		`SELECT * FROM dbstat`,
		`SELECT * FROM events WHERE (SELECT count(*) FROM sqlite_schema) > 0`,
		`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < (SELECT count(*) FROM sqlite_master)) SELECT * FROM r`,
		`SELECT * FROM events WHERE project_id IN endpointkit_variables`,
		`SELECT * FROM events, EndpointKit_Endpoints`,
	} {
		_, rows, err := run(t, db, q, nil)
		if assert.NoError(t, err, "raw %q read nothing: %v", q, err) {
			assert.NotEmpty(t, rows, "raw %q read nothing: %v", q, err)
		}
		assert.Error(t, Check(q, testRules()), "Check(%q) passed", q)
	}
}
