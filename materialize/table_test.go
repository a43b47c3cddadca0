package materialize

import (
	"strings"
	"testing"

	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
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
		require.Equal(t, c.want, got)
		// The refresh's table and its index, within PostgreSQL's 63 bytes.
		a, b := len(got)+len("_next_ix"), 63
		require.True(t, (a <= b), "len(got)+len(\"_next_ix\") = %v, want <= %v", a, b)
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
		require.NoError(t, err)
		stmts := r.Statements()
		require.Len(t, stmts, len(c.want), "%s", c.d.Name())
		for i := range stmts {
			require.Contains(t, stmts[i], c.want[i])
		}
		_, err = plan.Refresh("")
		require.ErrorIs(t, err, ErrInvalidTable)
	}
}

// TestRefreshIndexColumns: the index holds each compared column once,
// those compared only with = first (an index serves equalities and then
// one range), and on SQLite, after them, the columns an aggregating read
// over a range takes (the group keys, the aggregates' parts, the grain,
// which a summarized one-bucket table has not);
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
			WHERE timestamp >= {variables.from} AND event = {variables.e} GROUP BY day`, `("e", "from", "_k0", "_a0", "_a1")`}, // summarized: no grain
		{`SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.from} GROUP BY event`, `("from", "_k0", "_a0")`},
		{`SELECT event, count(*) AS n FROM events WHERE country IN {variables.c} GROUP BY event`, `("c")`},
		{`SELECT uuid FROM events WHERE amount >= {variables.lo} AND amount < {variables.lo_end} AND plan = {variables.p} ORDER BY uuid`,
			`("p", "lo", "lo_end")`},
		{`SELECT uuid FROM events WHERE event = {variables.e} AND {variables.e} = event ORDER BY uuid`, `("e")`},
		{`SELECT event, count(*) AS n FROM events GROUP BY event`, ""},
	}
	for _, c := range cases {
		r, err := mustPlan(t, c.query, opts).Refresh("m")
		require.NoError(t, err)
		var index []string
		for _, s := range r.Statements() {
			if strings.Contains(s, " INDEX ") {
				index = append(index, s)
			}
		}
		if c.index == "" {
			v := index
			require.True(t, (len(v) == 0), "%v: index = %v, want it empty", c.query, v)
			continue
		}
		got, want := index, ([]string{`CREATE INDEX IF NOT EXISTS "m_ix" ON "m" ` + c.index})
		require.Equal(t, want, got, "%v: index", c.query)
	}
}

// TestRefreshAgainSQLite: refreshing the same table again and again
// works (the index name the last refresh left on the table is freed), the
// table stays indexed, and a paged read of one value searches that index
// instead of scanning the table.
func TestRefreshAgainSQLite(t *testing.T) {
	db := testdb.SQLite(t)
	_, err := db.Exec(`CREATE TABLE sales (customer TEXT, day TEXT, amount INTEGER);
		INSERT INTO sales VALUES ('a', '2025-01-01', 1), ('a', '2025-01-02', 2), ('b', '2025-01-01', 3)`)
	require.NoError(t, err)
	plan := mustPlan(t, `SELECT day, sum(amount) AS s FROM sales WHERE customer = {variables.c} GROUP BY day ORDER BY day`,
		Options{Engine: engine.SQLite})
	for i := range 3 {
		r, err := plan.Refresh("m")
		require.NoError(t, err)
		for _, s := range r.Statements() {
			_, err := db.Exec(s)
			require.NoError(t, err, "refresh %d: %s", i, s)
		}
		var indexes []string
		rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'm'`)
		require.NoError(t, err)
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			indexes = append(indexes, n)
		}
		require.NoError(t, rows.Err())
		got, want := indexes, ([]string{"m_ix"})
		require.Equal(t, want, got, "refresh %d: indexes", i)
	}
	q, args, err := plan.ReadPage("m", map[string]any{"c": "a"}, 2, 0)
	require.NoError(t, err)
	var detail []string
	rows, err := db.Query("EXPLAIN QUERY PLAN "+q, args...)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var d string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &d))
		detail = append(detail, d)
	}
	require.NoError(t, rows.Err())
	require.Contains(t, strings.Join(detail, "\n"), `USING INDEX m_ix (c=?)`)
	got := query(t, db, q, args)
	require.Equal(t, [][]any{{"2025-01-01", int64(1)}, {"2025-01-02", int64(2)}}, got.rows)
}
