package insight

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// benchQuery is a daily trend of $pageview broken down by $browser over the
// last 30 days of the demo data.
const benchQuery = `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"day",
	"dateRange":{"date_from":"2025-05-02","date_to":"2025-05-31"},"breakdownFilter":{"breakdown":"$browser","breakdown_type":"event"}}`

var (
	benchOnce sync.Once
	benchDB   *sql.DB
	benchErr  error
)

// demoDB loads 1,000,000 demo events once for all benchmarks.
func demoDB(b *testing.B) *sql.DB {
	benchOnce.Do(func() {
		benchDB, benchErr = sql.Open("sqlite", ":memory:")
		if benchErr != nil {
			return
		}
		benchDB.SetMaxOpenConns(1)
		benchErr = demo.Load(context.Background(), benchDB, 1_000_000, 1)
	})
	require.NoError(b, benchErr)
	return benchDB
}

// runRows runs a compiled statement and shapes its rows, as the endpoint
// service does through its executor.
func runRows(b *testing.B, db *sql.DB, c *Compiled) *Result {
	res, err := c.Shape(queryRows(b, db, c.SQL, c.Args))
	require.NoError(b, err)
	return res
}

// execAll runs stmts on db in order.
func execAll(b *testing.B, db *sql.DB, stmts []Statement) {
	for _, s := range stmts {
		_, err := db.Exec(s.SQL, s.Args...)
		require.NoError(b, err)
	}
}

// countRows runs query on db, reads each row with scan (when not nil) and
// requires at least one row.
func countRows(b *testing.B, db *sql.DB, scan func(*sql.Rows) error, query string, args ...any) {
	rows, err := db.Query(query, args...)
	require.NoError(b, err)
	n := 0
	for rows.Next() {
		if scan != nil {
			require.NoError(b, scan(rows))
		}
		n++
	}
	require.NoError(b, rows.Close())
	require.NotEqual(b, 0, n)
}

var benchValues = map[string]any{"$browser": "Safari"}

func BenchmarkTrendsInline(b *testing.B) {
	db := demoDB(b)
	saved := mustDecode(b, benchQuery)
	now := demo.End
	for b.Loop() {
		q, err := saved.Apply(benchValues)
		require.NoError(b, err)
		c, err := Compile(q, engine.SQLite, now)
		require.NoError(b, err)
		res := runRows(b, db, c)
		require.Len(b, res.Series, 1)
		require.NotEqual(b, float64(0), res.Series[0].Count)
	}
}

func BenchmarkTrendsMaterialized(b *testing.B) {
	db := demoDB(b)
	saved := mustDecode(b, benchQuery)
	at := demo.End
	start := time.Now()
	stmts, err := Materialize(saved, engine.SQLite, "bench_insight", at)
	require.NoError(b, err)
	if ddl := Index(saved, engine.SQLite, "bench_insight"); ddl != "" {
		stmts = append(stmts, Statement{SQL: ddl})
	}
	execAll(b, db, stmts)
	build := time.Since(start)
	b.ReportMetric(float64(build.Milliseconds()), "build-ms")
	// library: the read ReadMaterialized writes, run and shaped;
	// handwritten: the stored rows of the same value read by a fixed
	// SELECT and scanned, the floor a read could reach. Their ratio is
	// read within one run:
	//
	//	go test ./insight -run '^$' -bench 'BenchmarkTrendsMaterialized/' -count 5
	b.Run("library", func(b *testing.B) {
		for b.Loop() {
			c, err := ReadMaterialized(saved, engine.SQLite, "bench_insight", benchValues, at)
			require.NoError(b, err)
			res := runRows(b, db, c)
			require.Len(b, res.Series, 1)
			require.NotEqual(b, float64(0), res.Series[0].Count)
		}
	})
	b.Run("handwritten", func(b *testing.B) {
		for b.Loop() {
			countRows(b, db, func(rows *sql.Rows) error {
				var (
					series        int64
					bucket, value any
					b0            string
				)
				return rows.Scan(&series, &bucket, &b0, &value)
			}, `SELECT "series", "bucket", "b0", "value" FROM "bench_insight" WHERE "b0" = ?`, benchValues["$browser"])
		}
	})
}

// BenchmarkBreakdownLimit measures what the breakdown limit's ranking
// costs: the same trends query over every event of the 30 days, broken
// down by browser and country (50 pairs, limit 25), read with and without
// the limit's windows around the grouped rows.
func BenchmarkBreakdownLimit(b *testing.B) {
	db := demoDB(b)
	q := mustDecode(b, `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"day",
		"dateRange":{"date_from":"2025-05-02","date_to":"2025-05-31"},"breakdownFilter":{"breakdowns":[{"property":"$browser"},{"property":"country"}]}}`)
	for _, limited := range []bool{false, true} {
		c, err := compile(q, engine.SQLite, demo.End, limited)
		require.NoError(b, err)
		name := map[bool]string{false: "every_value", true: "limited"}[limited]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				countRows(b, db, nil, c.SQL, c.Args...)
			}
		})
	}
}

// BenchmarkLifecycle measures a weekly lifecycle of $pageview over the
// last eight weeks of the demo data: inline (both reads of the events:
// the series' events of the range, and every event of their users for
// first seen), and from its stored table.
func BenchmarkLifecycle(b *testing.B) {
	db := demoDB(b)
	saved := mustDecode(b, `{"kind":"LifecycleQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"week",
		"dateRange":{"date_from":"2025-04-07","date_to":"2025-05-31"}}`)
	at := demo.End
	check := func(res *Result) {
		require.Len(b, res.Lifecycle, 4)
		require.NotEqual(b, float64(0), res.Lifecycle[1].Count)
	}
	b.Run("inline", func(b *testing.B) {
		for b.Loop() {
			c, err := Compile(saved, engine.SQLite, at)
			require.NoError(b, err)
			check(runRows(b, db, c))
		}
	})
	stmts, err := Materialize(saved, engine.SQLite, "bench_lifecycle", at)
	require.NoError(b, err)
	execAll(b, db, stmts)
	b.Run("materialized", func(b *testing.B) {
		for b.Loop() {
			c, err := ReadMaterialized(saved, engine.SQLite, "bench_lifecycle", nil, at)
			require.NoError(b, err)
			check(runRows(b, db, c))
		}
	})
}
