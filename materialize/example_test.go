package materialize_test

import (
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

func ExampleAnalyze() {
	query := `SELECT date(timestamp) AS day, count(*) AS events FROM events
		WHERE event = {variables.event} AND timestamp >= {variables.date_from}
		GROUP BY day ORDER BY day`
	a, err := materialize.Analyze(query, materialize.Options{
		Engine: engine.SQLite,
		Types:  map[string]variable.Type{"event": variable.String, "date_from": variable.Date},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Materializable(), a.Plan.Columns())
	for _, v := range a.Variables {
		fmt.Printf("%s %s %v %q\n", v.Name, v.Column, v.Operators, v.Bucket)
	}

	a, _ = materialize.Analyze("SELECT count(*) FROM events WHERE event REGEXP {variables.pattern}",
		materialize.Options{Engine: engine.SQLite})
	fmt.Println(a.Reasons[0].Code)
	fmt.Println("Cannot materialize endpoint. Reason: " + a.Reason())
	// Output:
	// true [day events]
	// event "event" [=] ""
	// date_from "timestamp" [>=] "day"
	// unsupported_operator
	// Cannot materialize endpoint. Reason: variable 'pattern' is used with the operator REGEXP; only =, !=, >=, >, <, <=, [NOT] IN, [NOT] LIKE and [NOT] ILIKE can be materialized
}

func ExamplePlan_Read() {
	a, _ := materialize.Analyze(
		"SELECT count(*) AS n FROM events WHERE timestamp >= {variables.date_from}",
		materialize.Options{Engine: engine.SQLite, Types: map[string]variable.Type{"date_from": variable.Date}})

	midnight := variable.Timestamp{Time: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), DateOnly: true}
	query, args, err := a.Plan.Read("endpoint_42_v3", map[string]any{"date_from": midnight})
	fmt.Println(query, args, err)

	// A date inside a day: the whole days come from the stored table, the
	// partial day from the source, merged and aggregated again.
	noon := variable.Timestamp{Time: midnight.Time.Add(12 * time.Hour)}
	query, args, err = a.Plan.Read("endpoint_42_v3", map[string]any{"date_from": noon})
	fmt.Println(query, args, err)
	// Output:
	// SELECT coalesce(sum("_a0"), 0) AS "n" FROM "endpoint_42_v3" WHERE "date_from" >= ? [2025-05-01 00:00:00] <nil>
	// SELECT coalesce(sum("_a0"), 0) AS "n" FROM (SELECT "_a0" FROM "endpoint_42_v3" WHERE "date_from" >= ? UNION ALL SELECT count(*) AS "_a0" FROM "events" WHERE "timestamp" >= ? AND "timestamp" < ? AND "timestamp" >= ?) AS "stored_parts" [2025-05-02 00:00:00 2025-05-01 12:00:00 2025-05-02 2025-05-01 12:00:00] <nil>
}

func ExamplePlan_Refresh() {
	a, _ := materialize.Analyze("SELECT count(*) AS n FROM events WHERE event = {variables.event}",
		materialize.Options{Engine: engine.SQLite})
	r, _ := a.Plan.Refresh("endpoint_42_v3")
	for _, s := range r.Build {
		fmt.Println(s)
	}
	fmt.Println("-- in one transaction:", r.InTx)
	for _, s := range r.Swap {
		fmt.Println(s)
	}
	for _, s := range r.Index {
		fmt.Println(s)
	}
	// Output:
	// DROP TABLE IF EXISTS "endpoint_42_v3_next"
	// CREATE TABLE "endpoint_42_v3_next" AS SELECT count(*) AS "_a0", "event" AS "event" FROM "events" GROUP BY "event"
	// -- in one transaction: true
	// DROP TABLE IF EXISTS "endpoint_42_v3"
	// ALTER TABLE "endpoint_42_v3_next" RENAME TO "endpoint_42_v3"
	// CREATE INDEX IF NOT EXISTS "endpoint_42_v3_ix" ON "endpoint_42_v3" ("event")
}

func ExamplePlan_ReadPage() {
	a, _ := materialize.Analyze(
		"SELECT date(timestamp) AS day, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY day ORDER BY day",
		materialize.Options{Engine: engine.PostgreSQL})

	// The second page of 20 days, and one row more to tell whether a
	// third follows.
	query, args, err := a.Plan.ReadPage("endpoint_42_v3", map[string]any{"event": "purchase"}, 21, 20)
	fmt.Println(query)
	fmt.Println(args, err)
	// Output:
	// SELECT "_k0" AS "day", CAST(coalesce(sum("_a0"), 0) AS bigint) AS "n" FROM "endpoint_42_v3" WHERE "event" = $1 GROUP BY "_k0" ORDER BY 1 ASC LIMIT $2 OFFSET $3
	// [purchase 21 20] <nil>
}
