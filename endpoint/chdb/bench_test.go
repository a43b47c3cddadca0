//go:build chdb && long

package chdb

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// The benchmarks of ClickHouse at scale: demo events (examples/demo, the
// same for the same count and seed) loaded into chDB and into SQLite, and
// the same endpoints run on both through endpoint.Service. They need
// -tags 'chdb long' and load their data once per process, which takes
// minutes at the default sizes:
//
//	go test -tags 'chdb long' -run '^$' -bench . -benchtime 1x -timeout 2h ./endpoint/chdb/
var (
	benchEvents       = flag.Int("chdb.bench-events", 10_000_000, "demo events the ClickHouse benchmarks load into chDB")
	benchSQLiteEvents = flag.Int("chdb.bench-sqlite-events", 10_000_000, "demo events the ClickHouse benchmarks load into SQLite, to compare with")
	benchRuns         = flag.Int("chdb.bench-runs", 20, "runs of each ClickHouse query whose median a benchmark reports")
	benchSQLiteRuns   = flag.Int("chdb.bench-sqlite-runs", 3, "runs of each SQLite query whose median a benchmark reports")
)

// benchSeed is the demo events' seed.
const benchSeed = 7

// trendsQuery is a daily trend of pageviews broken down by browser over
// the demo data's last 30 days.
const trendsQuery = `{"kind": "TrendsQuery", "series": [{"kind": "EventsNode", "event": "$pageview"}], "interval": "day",
	"dateRange": {"date_from": "2025-05-02", "date_to": "2025-05-31"},
	"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`

// The benchmarks' Services: on chDB, and on SQLite over the same events.
var bench struct {
	once       sync.Once
	ch, sqlite *endpoint.Service
	loaded     string
	err        error
}

func benchServices(b *testing.B) (ch, lite *endpoint.Service) {
	b.Helper()
	bench.once.Do(func() {
		bench.ch, bench.sqlite, bench.loaded, bench.err = newBenchServices(executor(b))
	})
	require.NoError(b, bench.err)
	return bench.ch, bench.sqlite
}

func newBenchServices(x *Executor) (ch, lite *endpoint.Service, loaded string, err error) {
	ctx := context.Background()
	start := time.Now()
	if err := loadChDB(ctx, x, *benchEvents); err != nil {
		return nil, nil, "", err
	}
	chLoad := time.Since(start)
	start = time.Now()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, nil, "", err
	}
	db.SetMaxOpenConns(1) // each connection of :memory: is a database of its own
	if err := demo.Load(ctx, db, *benchSQLiteEvents, benchSeed); err != nil {
		return nil, nil, "", err
	}
	loaded = fmt.Sprintf("loaded %d events into chDB in %s, %d into SQLite in %s",
		*benchEvents, chLoad.Round(time.Second), *benchSQLiteEvents, time.Since(start).Round(time.Second))
	if ch, err = benchService(x); err != nil {
		return nil, nil, "", err
	}
	if lite, err = benchService(sqlexec.New(db, engine.SQLite)); err != nil {
		return nil, nil, "", err
	}
	return ch, lite, loaded, nil
}

// benchService is a Service over x, at the end of the demo data (so that
// stored tables stay fresh), with the benchmarks' endpoints saved inline
// and materialized (and materialized).
func benchService(x driver.Executor) (*endpoint.Service, error) {
	ctx := context.Background()
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x,
		Now: func() time.Time { return demo.End }, RunTimeout: 10 * time.Minute, RefreshTimeout: 30 * time.Minute})
	if err != nil {
		return nil, err
	}
	trends := &endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(trendsQuery)}
	refs := map[string]endpoint.VariableRef{}
	for _, v := range []variable.Variable{{Name: "country", Type: variable.String}, {Name: "from", Type: variable.Date}, {Name: "to", Type: variable.Date}} {
		got, err := svc.CreateVariable(ctx, "1", v)
		if err != nil {
			return nil, err
		}
		refs[got.ID] = endpoint.VariableRef{VariableID: got.ID, CodeName: got.CodeName}
	}
	daily := &endpoint.Query{Kind: endpoint.KindSQL, SQL: dailyPurchases(x.Engine()), Variables: refs}
	for _, e := range []struct {
		name string
		q    *endpoint.Query
		mat  bool
	}{{"trends", trends, false}, {"trends_mat", trends, true}, {"daily", daily, false}, {"daily_mat", daily, true}} {
		if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: e.name, Query: e.q, IsMaterialized: e.mat}); err != nil {
			return nil, fmt.Errorf("%s: %w", e.name, err)
		}
		if e.mat {
			if err := svc.Materialize(ctx, "1", e.name); err != nil {
				return nil, fmt.Errorf("materialize %s: %w", e.name, err)
			}
		}
	}
	return svc, nil
}

// dailyPurchases is a SQL endpoint with a string equality and a date
// range: purchases and revenue per day of one country between two dates,
// the properties read by ClickHouse's JSON rule (engine.JSONText and
// JSONNumber) or SQLite's json_extract (the demo's properties are
// plain strings and whole numbers, which both read alike; the library's
// SQL parser does not read SQLite's form of the rule).
func dailyPurchases(e engine.Engine) string {
	country, amount := literalJSON(e, e.JSONText, "country"), literalJSON(e, e.JSONNumber, "amount")
	if e == engine.SQLite {
		country, amount = `json_extract(properties, '$.country')`, `json_extract(properties, '$.amount')`
	}
	return `SELECT substr(timestamp, 1, 10) AS day, count(*) AS purchases, sum(amount) AS revenue
FROM (SELECT timestamp, ` + country + ` AS country, ` + amount + ` AS amount
      FROM events WHERE event = 'purchase') AS p
WHERE country = {variables.country} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY day ORDER BY day`
}

// literalJSON writes an engine's JSON expression with the key as a string
// literal, as a user writes it in a saved query.
func literalJSON(e engine.Engine, f func(engine.Writer, string, string), key string) string {
	w := &literalWriter{e: e}
	f(w, "properties", key)
	return string(w.b)
}

type literalWriter struct {
	e engine.Engine
	b []byte
}

func (w *literalWriter) WriteString(s string) { w.b = append(w.b, s...) }
func (w *literalWriter) Bind(v any)           { w.b = w.e.AppendString(w.b, fmt.Sprint(v)) }

// loadChDB creates the events table in a database of its own (made the
// session's) and loads n demo events in files of a million rows each,
// which chDB reads with the file table function: INSERTs of bound rows,
// as demo.InsertWith sends them, would take an hour. The table is sorted
// by (project_id, event, timestamp), as a ClickHouse user lays out
// events (the demo schema's sort key starts with the uuid); SQLite's
// demo table has an index on (event, timestamp).
func loadChDB(ctx context.Context, x *Executor, n int) error {
	for _, q := range []string{
		"DROP DATABASE IF EXISTS bench",
		"CREATE DATABASE bench",
		"USE bench",
		"CREATE TABLE events (project_id String, uuid String, event String, distinct_id String, timestamp String, properties String) " +
			"ENGINE = MergeTree ORDER BY (project_id, event, timestamp)",
	} {
		if err := x.Exec(ctx, []driver.Statement{stmt.New(q, nil)}, driver.Write{Tx: false}); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	dir, err := os.MkdirTemp("", "endpointkit-chdb-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "events.tsv")
	const chunk = 1_000_000
	var f *os.File
	var w *bufio.Writer
	rows := 0
	flush := func() error {
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		q := "INSERT INTO events SELECT * FROM file(" + string(engine.ClickHouse.AppendString(nil, path)) +
			", 'TabSeparated', 'project_id String, uuid String, event String, distinct_id String, timestamp String, properties String')"
		if err := x.Exec(ctx, []driver.Statement{stmt.New(q, nil)}, driver.Write{Tx: false}); err != nil {
			return err
		}
		rows = 0
		return nil
	}
	err = demo.Generate(n, benchSeed, func(ev demo.Event) error {
		if rows == 0 {
			var err error
			if f, err = os.Create(path); err != nil {
				return err
			}
			w = bufio.NewWriterSize(f, 1<<20)
		}
		props, err := json.Marshal(ev.Properties)
		if err != nil {
			return err
		}
		for i, v := range []string{"1", ev.UUID, ev.Event, ev.DistinctID, ev.Timestamp.Format(demo.TimeLayout), string(props)} {
			if i > 0 {
				w.WriteByte('\t')
			}
			w.WriteString(tsv.Replace(v))
		}
		w.WriteByte('\n')
		if rows++; rows == chunk {
			return flush()
		}
		return nil
	})
	if err == nil && rows > 0 {
		err = flush()
	}
	if err != nil {
		return err
	}
	res, err := x.Query(ctx, stmt.New("SELECT count() AS n FROM events", nil), driver.Bounds{})
	if err != nil {
		return err
	}
	if got := res.Rows[0][0]; got != int64(n) {
		return fmt.Errorf("chDB holds %v events, want %d", got, n)
	}
	return nil
}

// tsv escapes a value of ClickHouse's TabSeparated format.
var tsv = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`)

// timeRuns runs req on svc n times and returns the median time; every run
// must answer as the first did, read the stored table when materialized
// says so, and the first answer is returned for comparison.
func timeRuns(b *testing.B, svc *endpoint.Service, name string, req endpoint.RunRequest, n int, materialized bool) (time.Duration, string) {
	b.Helper()
	ctx := context.Background()
	times := make([]time.Duration, n)
	var first string
	for i := range n {
		start := time.Now()
		res, err := svc.Run(ctx, "1", name, req)
		times[i] = time.Since(start)
		require.NoError(b, err, "%s", name)
		require.Equal(b, materialized, res.EndpointMaterialized, "%s: endpoint_materialized", name)
		out, err := json.Marshal(res.Results)
		require.NoError(b, err)
		if i == 0 {
			first = string(out)
		} else if string(out) != first {
			b.Fatalf("%s: run %d answered otherwise than run 0", name, i)
		}
	}
	slices.Sort(times)
	return times[n/2], first
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkTrends10M runs the daily pageviews-by-browser trend over the
// demo events (10,000,000 by default), for the browser Chrome (a
// materialized insight is read by its breakdown values): inline on chDB, materialized on
// chDB, and inline on SQLite over the same events, and reports the median
// time of each (over -chdb.bench-runs runs on chDB, -chdb.bench-sqlite-runs
// on SQLite) and their ratios: materialized_speedup (chDB inline /
// materialized) and chdb_vs_sqlite (SQLite inline / chDB inline). The
// answers must be the same everywhere (SQLite's only when it holds as
// many events).
func BenchmarkTrends10M(b *testing.B) {
	ch, lite := benchServices(b)
	b.Log(bench.loaded)
	req := endpoint.RunRequest{Variables: map[string]any{"$browser": "Chrome"}}
	var inline, mat, sqlite time.Duration
	for b.Loop() {
		var a, c, s string
		inline, a = timeRuns(b, ch, "trends", req, *benchRuns, false)
		mat, c = timeRuns(b, ch, "trends_mat", req, *benchRuns, true)
		sqlite, s = timeRuns(b, lite, "trends", req, *benchSQLiteRuns, false)
		require.Equal(b, c, a, "materialized on chDB")
		if *benchSQLiteEvents == *benchEvents && s != a {
			b.Fatalf("SQLite:\n%s\nchDB:\n%s", s, a)
		}
	}
	b.ReportMetric(ms(inline), "chdb_inline_p50_ms")
	b.ReportMetric(ms(mat), "chdb_materialized_p50_ms")
	b.ReportMetric(ms(sqlite), "sqlite_inline_p50_ms")
	b.ReportMetric(float64(inline)/float64(mat), "materialized_speedup")
	b.ReportMetric(float64(sqlite)/float64(inline), "chdb_vs_sqlite")
}

// BenchmarkSQLEndpoint10M runs the SQL endpoint of a string equality and a
// date range (a month of one country's purchases and revenue per day)
// over the demo events on chDB, inline and materialized, and reports the
// median of -chdb.bench-runs runs of each; the answers must be the same,
// and SQLite's too when it holds as many events.
func BenchmarkSQLEndpoint10M(b *testing.B) {
	ch, lite := benchServices(b)
	b.Log(bench.loaded)
	req := endpoint.RunRequest{Variables: map[string]any{"country": "US", "from": "2025-04-01", "to": "2025-05-01"}}
	var inline, mat time.Duration
	for b.Loop() {
		var a, c string
		inline, a = timeRuns(b, ch, "daily", req, *benchRuns, false)
		mat, c = timeRuns(b, ch, "daily_mat", req, *benchRuns, true)
		require.Equal(b, c, a, "materialized")
		require.True(b, strings.HasPrefix(a, `[["2025-04-01",`), "want 30 days of April, got %s", a)
		require.Equal(b, 29, strings.Count(a, "],["), "want 30 days of April, got %s", a)
		if *benchSQLiteEvents == *benchEvents {
			_, s := timeRuns(b, lite, "daily_mat", req, 1, true)
			require.Equal(b, a, s, "SQLite")
		}
	}
	b.ReportMetric(ms(inline), "inline_p50_ms")
	b.ReportMetric(ms(mat), "materialized_p50_ms")
	b.ReportMetric(float64(inline)/float64(mat), "materialized_speedup")
}
