package materialize

import (
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/placeholder"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// benchEvents is the size of the benchmarks' demo data set.
const benchEvents = 1_000_000

var bench struct {
	once  sync.Once
	db    *sql.DB
	err   error
	tpl   *placeholder.Template
	plan  *Plan
	built bool
}

// benchSetup loads the demo events once per process, on the first
// benchmark that needs them, so that plain go test never pays for it.
func benchSetup(b *testing.B) {
	bench.once.Do(func() {
		db, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			bench.err = err
			return
		}
		db.SetMaxOpenConns(1)
		bench.db = db
		if bench.err = loadDemo(db, benchEvents); bench.err != nil {
			return
		}
		if bench.tpl, bench.err = placeholder.Compile(dailyRevenue); bench.err != nil {
			return
		}
		a, err := Analyze(dailyRevenue, Options{Engine: engine.SQLite,
			Types: map[string]variable.Type{"date_from": variable.Date, "date_to": variable.Date}})
		if err != nil {
			bench.err = err
			return
		}
		bench.plan = a.Plan
	})
	require.NoError(b, bench.err)
	require.NotNil(b, bench.plan, "the benchmark query is not materializable")
}

// benchValues: a month of one country's purchases.
var benchValues = map[string]any{
	"country":   "US",
	"date_from": variable.Timestamp{Time: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), DateOnly: true},
	"date_to":   variable.Timestamp{Time: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), DateOnly: true},
}

func buildTable(b *testing.B) {
	r, err := bench.plan.Refresh("bench_daily_revenue")
	require.NoError(b, err)
	for _, st := range r.Statements() {
		_, err := bench.db.Exec(st)
		require.NoError(b, err)
	}
	bench.built = true
}

func drain(b *testing.B, q string, args []any) int {
	rows, err := bench.db.Query(q, args...)
	require.NoError(b, err)
	defer rows.Close()
	n := 0
	var day string
	var purchases, revenue int64
	for rows.Next() {
		require.NoError(b, rows.Scan(&day, &purchases, &revenue))
		n++
	}
	require.NoError(b, rows.Err())
	return n
}

// BenchmarkBuildTable measures a refresh: the pre-compute query over all
// the events into the stored table.
func BenchmarkBuildTable(b *testing.B) {
	benchSetup(b)
	for b.Loop() {
		buildTable(b)
	}
	var rows int64
	require.NoError(b, bench.db.QueryRow(`SELECT count(*) FROM "bench_daily_revenue"`).Scan(&rows))
	b.ReportMetric(float64(rows), "stored-rows")
}

// BenchmarkRunInline runs "daily purchases and revenue for a country
// between two dates" on the events.
func BenchmarkRunInline(b *testing.B) {
	benchSetup(b)
	for b.Loop() {
		q, args, err := bench.tpl.Render(engine.SQLite, benchValues)
		require.NoError(b, err)
		require.Equal(b, 30, drain(b, q, args), "want 30 days")
	}
}

// BenchmarkRunMaterialized answers the same run from the stored table.
func BenchmarkRunMaterialized(b *testing.B) {
	benchSetup(b)
	if !bench.built {
		start := time.Now()
		buildTable(b)
		b.Logf("stored table built in %v", time.Since(start))
	}
	for b.Loop() {
		q, args, err := bench.plan.Read("bench_daily_revenue", benchValues)
		require.NoError(b, err)
		require.Equal(b, 30, drain(b, q, args), "want 30 days")
	}
}

// BenchmarkAnalyze measures analysis and rewrite, done once per saved
// version of an endpoint.
func BenchmarkAnalyze(b *testing.B) {
	opts := Options{Engine: engine.SQLite, Types: map[string]variable.Type{"date_from": variable.Date, "date_to": variable.Date}}
	for b.Loop() {
		a, err := Analyze(dailyRevenue, opts)
		if err != nil || a.Plan == nil {
			b.Fatal(err, a.Reasons)
		}
	}
}

// BenchmarkRead measures building the read query of one run, the
// library's own cost on the materialized path.
func BenchmarkRead(b *testing.B) {
	a, err := Analyze(dailyRevenue, Options{Engine: engine.SQLite,
		Types: map[string]variable.Type{"date_from": variable.Date, "date_to": variable.Date}})
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		_, _, err := a.Plan.Read("endpointkit_mat_x_v1", benchValues)
		require.NoError(b, err)
	}
}
