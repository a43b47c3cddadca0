package insight_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"time"

	_ "modernc.org/sqlite"

	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/sql/engine"
)

const pageviewsByBrowser = `{
	"kind": "TrendsQuery",
	"series": [{"kind": "EventsNode", "event": "$pageview"}],
	"interval": "day",
	"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-03"},
	"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}
}`

// exampleDB holds a few events in the schema of the example server.
func exampleDB() *sql.DB {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		panic(err)
	}
	db.SetMaxOpenConns(1)
	for _, stmt := range []string{
		`CREATE TABLE events (uuid TEXT, event TEXT, distinct_id TEXT, timestamp TEXT, properties TEXT)`,
		`INSERT INTO events VALUES
			('1', '$pageview', 'ann', '2025-05-01 09:00:00', '{"$browser": "Chrome"}'),
			('2', '$pageview', 'ann', '2025-05-01 10:00:00', '{"$browser": "Chrome"}'),
			('3', '$pageview', 'bob', '2025-05-03 23:59:59', '{"$browser": "Safari"}'),
			('4', '$pageview', 'cat', '2025-05-02 12:00:00', '{}'),
			('5', 'purchase', 'ann', '2025-05-02 12:00:00', '{"$browser": "Chrome"}')`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			panic(err)
		}
	}
	return db
}

// query runs a compiled insight and shapes its rows.
func query(db *sql.DB, c *insight.Compiled) *insight.Result {
	rows, err := db.Query(c.SQL, c.Args...)
	if err != nil {
		panic(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var all [][]any
	for rows.Next() {
		row := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			panic(err)
		}
		all = append(all, row)
	}
	res, err := c.Shape(all)
	if err != nil {
		panic(err)
	}
	return res
}

func printJSON(v any) {
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
}

func ExampleDecode() {
	q, err := insight.Decode([]byte(pageviewsByBrowser))
	if err != nil {
		panic(err)
	}
	fmt.Println(q.Variables(false))
	fmt.Println(q.Variables(true))

	_, err = insight.Decode([]byte(`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "math": "weekly_active"}]}`))
	fmt.Println(err)
	// Output:
	// [$browser date_from date_to]
	// [$browser]
	// insight: series[0].math: unsupported math "weekly_active" (supported: total, dau, sum, avg, min, max)
}

func ExampleQuery_Apply() {
	saved, _ := insight.Decode([]byte(pageviewsByBrowser))
	q, err := saved.Apply(map[string]any{"$browser": "Chrome", "date_to": "2025-05-02"})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v %+v\n", q.Properties, q.DateRange)
	fmt.Printf("%+v %+v\n", saved.Properties, saved.DateRange)

	_, err = saved.Apply(map[string]any{"country": "US"})
	fmt.Println(err)
	// Output:
	// [{Key:$browser Operator:exact Values:[Chrome] Number:0}] {From:2025-05-01 To:2025-05-02}
	// [] {From:2025-05-01 To:2025-05-03}
	// Unknown variable(s): country
}

func ExampleCompile() {
	db := exampleDB()
	defer db.Close()
	saved, _ := insight.Decode([]byte(pageviewsByBrowser))
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

	c, err := insight.Compile(saved, engine.SQLite, now)
	if err != nil {
		panic(err)
	}
	for _, s := range query(db, c).Series {
		fmt.Printf("%q %v %v %v\n", s.BreakdownValue, s.Label, s.Data, s.Days)
	}

	// A run with a breakdown variable: only that series.
	q, _ := saved.Apply(map[string]any{"$browser": "Safari"})
	c, _ = insight.Compile(q, engine.SQLite, now)
	printJSON(query(db, c))
	// Output:
	// "Chrome" Chrome [2 0 0] [2025-05-01 2025-05-02 2025-05-03]
	// "" none [0 1 0] [2025-05-01 2025-05-02 2025-05-03]
	// "Safari" Safari [0 0 1] [2025-05-01 2025-05-02 2025-05-03]
	// [{"label":"Safari","breakdown_value":"Safari","count":1,"data":[0,0,1],"days":["2025-05-01","2025-05-02","2025-05-03"],"labels":["1-May-2025","2-May-2025","3-May-2025"]}]
}

// A breakdown limit keeps the values with the most events in each series
// and sums the others, interval by interval, into one series, as PostHog
// does; breakdown_hide_other_aggregation drops that series.
func ExampleCompile_breakdownLimit() {
	db := exampleDB()
	defer db.Close()
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, filter := range []string{
		`{"breakdown": "$browser", "breakdown_limit": 1}`,
		`{"breakdown": "$browser", "breakdown_limit": 1, "breakdown_hide_other_aggregation": true}`,
	} {
		q, err := insight.Decode([]byte(`{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}],
			"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-03"}, "breakdownFilter": ` + filter + `}`))
		if err != nil {
			panic(err)
		}
		c, _ := insight.Compile(q, engine.SQLite, now)
		for _, s := range query(db, c).Series {
			fmt.Printf("%q %v %v\n", s.BreakdownValue, s.Label, s.Data)
		}
	}
	// Output:
	// "Chrome" Chrome [2 0 0]
	// "$$_posthog_breakdown_other_$$" Other (i.e. all remaining values) [0 1 1]
	// "Chrome" Chrome [2 0 0]
}

func ExampleCompile_retention() {
	db := exampleDB()
	defer db.Close()
	q, err := insight.Decode([]byte(`{
		"kind": "RetentionQuery",
		"retentionFilter": {
			"targetEntity": {"id": "$pageview", "type": "events"},
			"returningEntity": {"id": "purchase", "type": "events"},
			"period": "Day", "totalIntervals": 3, "retentionType": "retention_first_time"
		},
		"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-02"}
	}`))
	if err != nil {
		panic(err)
	}
	c, _ := insight.Compile(q, engine.SQLite, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	printJSON(query(db, c))
	// Output:
	// [{"date":"2025-05-01T00:00:00Z","label":"Day 0","values":[{"count":1,"label":"Day 0"},{"count":1,"label":"Day 1"},{"count":0,"label":"Day 2"}]},{"date":"2025-05-02T00:00:00Z","label":"Day 1","values":[{"count":1,"label":"Day 0"},{"count":0,"label":"Day 1"},{"count":0,"label":"Day 2"}]}]
}

func ExampleCompile_lifecycle() {
	db := exampleDB()
	defer db.Close()
	q, err := insight.Decode([]byte(`{
		"kind": "LifecycleQuery",
		"series": [{"kind": "EventsNode", "event": "$pageview"}],
		"interval": "day",
		"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-03"}
	}`))
	if err != nil {
		panic(err)
	}
	c, _ := insight.Compile(q, engine.SQLite, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	for _, s := range query(db, c).Lifecycle {
		fmt.Println(s.Label, s.Data, s.Days)
	}
	// Output:
	// $pageview - new [1 1 1] [2025-05-01 2025-05-02 2025-05-03]
	// $pageview - returning [0 0 0] [2025-05-01 2025-05-02 2025-05-03]
	// $pageview - resurrecting [0 0 0] [2025-05-01 2025-05-02 2025-05-03]
	// $pageview - dormant [0 -1 -1] [2025-05-01 2025-05-02 2025-05-03]
}

func ExampleMaterialize() {
	db := exampleDB()
	defer db.Close()
	saved, _ := insight.Decode([]byte(pageviewsByBrowser))
	at := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

	// Once, and again at each refresh: every series into one table.
	stmts, err := insight.Materialize(saved, engine.SQLite, "endpoint_7_v1", at)
	if err != nil {
		panic(err)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s.SQL, s.Args...); err != nil {
			panic(err)
		}
	}

	// Each run: only the stored series of the given breakdown value, the
	// breakdown limit applied to them as an inline run applies it (with a
	// value for every breakdown, one combination, which the limit keeps:
	// no ranking is needed). The value is bound.
	c, err := insight.ReadMaterialized(saved, engine.SQLite, "endpoint_7_v1", map[string]any{"$browser": "Chrome"}, at)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Args)
	printJSON(query(db, c))

	_, err = insight.ReadMaterialized(saved, engine.SQLite, "endpoint_7_v1", map[string]any{"date_from": "2025-05-02"}, at)
	fmt.Println(err)
	// Output:
	// [Chrome]
	// [{"label":"Chrome","breakdown_value":"Chrome","count":2,"data":[2,0,0],"days":["2025-05-01","2025-05-02","2025-05-03"],"labels":["1-May-2025","2-May-2025","3-May-2025"]}]
	// Unknown variable(s): date_from
}
