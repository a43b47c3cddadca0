package equivalence

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/stretchr/testify/require"
)

// property is a JSON property as a user of the engine writes it in a
// materializable query: SQLite's json_extract, PostgreSQL's
// json_extract_path_text of the text column cast to json (the parser reads
// no :: cast, nor ->> after a cast), MySQL's JSON_UNQUOTE(JSON_EXTRACT()),
// ClickHouse's JSONExtract as a Nullable(String) (NULL when missing, as
// the others).
func (d *dialect) property(col, key string) string {
	switch d.name {
	case "postgres":
		return "json_extract_path_text(CAST(" + col + " AS json), '" + key + "')"
	case "mysql":
		return "JSON_UNQUOTE(JSON_EXTRACT(" + col + ", '$." + key + "'))"
	case "clickhouse":
		return "JSONExtract(" + col + ", '" + key + "', 'Nullable(String)')"
	}
	return "json_extract(" + col + ", '$." + key + "')"
}

// day is the day of the timestamp col stored as s, as a user of the
// engine groups by it: the engine's date function where it reads the
// column as a time (naming 'UTC' on ClickHouse, whose date functions
// take the column's zone), the first ten characters of text on the
// engines that read none.
func (d *dialect) day(col string, s storage) string {
	switch {
	case d.name == "sqlite" || d.name == "mysql":
		return "date(" + col + ")"
	case s == asText:
		return "substr(" + col + ", 1, 10)"
	case d.name == "clickhouse":
		return "toDate(" + col + ", 'UTC')"
	}
	return "date(" + col + ")"
}

// unalignedRanges are date ranges whose ends are off the day's boundary,
// inside and across the edge events' days, and aligned ones to compare.
var unalignedRanges = [][2]string{
	{"2025-05-01 06:30:00", "2025-05-06 12:00:00"},
	{"2025-04-30T23:59:59", "2025-05-05T00:00:01"},
	{"2025-05-04 23:59:59", "2025-05-05 00:00:00"}, // within one day
	{"2025-05-01", "2025-05-15"},
	{"2025-03-10 13:15:00", "2025-06-01 23:00:00"},
	{"2025-05-12 00:00:00", "2025-05-12 00:00:00"}, // empty
}

// expressionSpecs are the endpoints of what the materializer takes beyond
// columns: a variable compared with a row expression (a JSON property,
// lower(), coalesce), a multi-valued list (IN), DISTINCT aggregates kept
// in the stored grain, NULL keys, and ranges off the buckets' boundaries,
// whose partial buckets a read computes from the source.
func expressionSpecs() []*spec {
	var specs []*spec
	add := func(s *spec) {
		s.kind, s.mat = endpoint.KindSQL, true
		if s.storage == "" {
			s.storage = asText
		}
		specs = append(specs, s)
	}
	for _, s := range storages {
		var runs []run
		for i, country := range []string{"US", "us", "DE", "GB", "", "ZZ"} {
			r := unalignedRanges[i%len(unalignedRanges)]
			runs = append(runs, run{vars: map[string]any{"text": country, "from": r[0], "to": r[1]}})
		}
		for _, r := range unalignedRanges {
			runs = append(runs, run{vars: map[string]any{"text": "US", "from": r[0], "to": r[1]}})
		}
		add(&spec{name: "property_distinct_" + string(s), storage: s, vars: []string{"text", "from", "to"},
			sql: func(d *dialect) string {
				return `SELECT event, count(*) AS n, count(DISTINCT distinct_id) AS users, min(timestamp) AS first FROM events WHERE ` +
					d.property("properties", "country") + ` = {variables.text} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY event`
			},
			runs: runs})
		// Grouped by the day, whose every group lies in one bucket: the
		// stored rows of a day hold each user once, the partial days are
		// groups of their own (materialize's one-bucket read).
		add(&spec{name: "daily_property_distinct_" + string(s), storage: s, vars: []string{"text", "from", "to"},
			sql: func(d *dialect) string {
				return `SELECT count(DISTINCT distinct_id) AS users, count(*) AS n, min(timestamp) AS first FROM events WHERE ` +
					d.property("properties", "country") + ` = {variables.text} AND timestamp >= {variables.from} AND timestamp < {variables.to}` +
					` GROUP BY ` + d.day("timestamp", s)
			},
			runs: runs})
	}
	// No "FR": an edge event's "FR " equals it on MariaDB's PAD SPACE
	// collations (a listed difference of its own).
	add(&spec{name: "property_list", vars: []string{"countries"},
		sql: func(d *dialect) string {
			p := d.property("properties", "country")
			return `SELECT ` + p + ` AS country, count(*) AS n, count(DISTINCT distinct_id) AS users, min(timestamp) AS first` +
				` FROM events WHERE ` + p + ` IN {variables.countries} GROUP BY ` + p
		},
		runs: values("countries", []string{"US"}, []string{"US", "us", "DE"}, []string{"ZZ"},
			[]string{"GB", "JP", "US", "DE"})})
	add(&spec{name: "list_in_parentheses_range", vars: []string{"names", "from"}, ordered: true,
		sql: shared(`SELECT count(*) AS n, count(DISTINCT grp) AS groups, sum(DISTINCT qty) AS qtys FROM items
			WHERE name IN ({variables.names}) AND ts_text >= {variables.from}`),
		runs: []run{
			{vars: map[string]any{"names": []string{"apple"}, "from": "2025-04-01"}},
			{vars: map[string]any{"names": []string{"apple", "Apple", "pear"}, "from": "2025-04-30 12:00:00"}},
			{vars: map[string]any{"names": []string{"nothing"}, "from": "2025-04-01"}},
			{vars: map[string]any{"names": []string{"apple ", "café", "Ünïcode", "it's"}, "from": "2025-05-01 00:00:01"}},
		}})
	add(&spec{name: "coalesce_null_key", vars: []string{"text"}, ordered: true,
		sql:  shared(`SELECT id, qty FROM items WHERE COALESCE(grp, 'none') = {variables.text} ORDER BY id`),
		runs: values("text", "none", "x", "", "w")})
	add(&spec{name: "lower_key_distinct_edges", vars: []string{"text", "from", "to"}, ordered: true,
		// No max(timestamp): over no rows ClickHouse answers '' (a listed
		// difference of its own).
		sql: shared(`SELECT count(*) AS n, count(DISTINCT distinct_id) AS users FROM events
			WHERE lower(event) = {variables.text} AND timestamp > {variables.from} AND timestamp <= {variables.to}`),
		runs: []run{
			{vars: map[string]any{"text": "$pageview", "from": "2025-05-01 00:00:00", "to": "2025-05-05 23:59:59"}},
			{vars: map[string]any{"text": "purchase", "from": "2025-04-15 08:00:00", "to": "2025-05-20 20:00:00"}},
			{vars: map[string]any{"text": "signed_up", "from": "2025-05-04", "to": "2025-05-05"}},
			{vars: map[string]any{"text": "nothing", "from": "2025-04-01", "to": "2025-06-01"}},
		}})
	return specs
}

// TestLiveTailOnEveryEngine: on every engine, a materialized endpoint with
// the live tail answers as the inline run after rows arrive, while the
// same endpoint without it misses them until its next refresh.
func TestLiveTailOnEveryEngine(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name(), func(t *testing.T) { testLiveTail(t, tg) })
	}
}

// tailService loads the fixture on tg's database and returns a Service on
// it with clock, and what inserts rows there.
func tailService(t *testing.T, tg target, clock func() time.Time) (*endpoint.Service, demo.Loader) {
	ctx := context.Background()
	switch {
	case tg.direct != nil:
		x := tg.direct(t, asText)
		require.NoError(t, loadVia(ctx, x, tg.d, asText, 400))
		return serviceAt(t, x, clock), x
	case tg.env == "":
		db, x := tg.sqlite(t)
		require.NoError(t, load(ctx, db, tg.d, asText, 400))
		return serviceAt(t, x, clock), sqlExec{db}
	}
	testdb.Require(t, tg.env)
	loader, driver, dsn := tg.open(t)
	require.NoError(t, load(ctx, loader, tg.d, asText, 400))
	return serviceAt(t, sqlexec.New(openSession(t, driver, dsn, tg.d), tg.d.e), clock), sqlExec{loader}
}

// testLiveTail is TestLiveTailOnEveryEngine on tg.
func testLiveTail(t *testing.T, tg target) {
	ctx := context.Background()
	clock := time.Date(2025, 5, 20, 12, 0, 0, 0, time.UTC)
	svc, loader := tailService(t, tg, func() time.Time { return clock })
	q := &endpoint.Query{Kind: endpoint.KindSQL, Variables: refs([]string{"text", "from", "to"}),
		SQL: `SELECT country, count(*) AS n, count(DISTINCT distinct_id) AS users FROM events_p
			WHERE event = {variables.text} AND timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY country ORDER BY country`}
	month := endpoint.Seconds(30 * 24 * time.Hour)
	for _, req := range []endpoint.CreateRequest{
		{Name: "tail", IsMaterialized: true, MaterializationTail: "timestamp", MaterializationFreshness: month},
		{Name: "stale", IsMaterialized: true, MaterializationFreshness: month},
		{Name: "inline"},
	} {
		req.Query = q
		if _, err := svc.Create(ctx, "1", req); err != nil {
			t.Fatal(describe(err))
		}
	}
	for _, name := range []string{"tail", "stale"} {
		if err := svc.Materialize(ctx, "1", name); err != nil {
			t.Fatalf("Materialize(%s): %s", name, describe(err))
		}
	}
	// Rows arriving after the refresh, newer than it.
	var rows [][]any
	for i := range 30 {
		rows = append(rows, []any{"1", fmt.Sprintf("late-%02d", i), "purchase", fmt.Sprintf("late-user-%d", i%7),
			clock.Add(time.Duration(i+1) * 97 * time.Minute).Format("2006-01-02 15:04:05"), `{"country":"US","amount":10}`})
	}
	require.NoError(t, insert(ctx, loader, tg.d.e, "events", []string{"project_id", "uuid", "event", "distinct_id", "timestamp", "properties"}, rows))
	clock = clock.Add(3 * 24 * time.Hour)
	missed := 0
	for _, vars := range []map[string]any{
		{"text": "purchase", "from": "2025-05-01", "to": "2025-06-01"},
		{"text": "purchase", "from": "2025-05-19 07:45:00", "to": "2025-05-22 18:00:00"},
		{"text": "purchase", "from": "2025-05-21", "to": "2025-05-22"},
		{"text": "$pageview", "from": "2025-05-10", "to": "2025-06-01"},
	} {
		run := func(name string) *endpoint.RunResult {
			res, err := svc.Run(ctx, "1", name, endpoint.RunRequest{Variables: vars})
			if err != nil {
				t.Fatalf("%s %v: %s", name, vars, describe(err))
			}
			return res
		}
		tail, stale, inline := run("tail"), run("stale"), run("inline")
		require.True(t, tail.EndpointMaterialized, "%v: materialized runs went inline", vars)
		require.True(t, stale.EndpointMaterialized, "%v: materialized runs went inline", vars)
		want := normalized(t, inline)
		got := normalized(t, tail)
		require.True(t, same(got, want), "%v: tail %v\ninline %v", vars, got, want)
		if !same(normalized(t, stale), want) {
			missed++
		}
	}
	require.NotEqual(t, 0, missed, "the endpoint without the tail never missed the new rows: the test shows nothing")
}
