package httpapi_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec/sqliteinterrupt"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/cputime"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// BenchmarkHTTPRun sets the library's HTTP handler against a hand-written
// net/http + database/sql handler doing the same work (check the key,
// decode the body, run the query, encode the rows as JSON) on one SQLite
// file that holds both the events and the library's store. The library's
// runs read through a second pool on the file opened with query_only, as
// the example server's do (sqlexec.WithReadOnly), so that a run is
// read-only at no cost per run; library/select1-onepool is SELECT 1 on the
// one pool, where each run is made read-only by PRAGMA query_only on a
// connection held for it (the default without WithReadOnly). Each request
// goes through the handler in process, without a network. Ratios are read
// within one run:
//
//	go test -run '^$' -bench BenchmarkHTTPRun -benchmem -count 5 ./endpoint/httpapi/
//
// The library's Service keeps its run log in the store, as the example
// server does. The sub-benchmarks .../c=1 and .../c=8 send select1 and
// count from 1 and 8 clients at once and report p99-us and req/s (see
// serveConcurrently).
//
// count counts the events of a name of project 1 (the library's scoped by
// the access policy) through the (project_id, event, timestamp) index,
// select1 is SELECT 1: the library's whole overhead. by_country is a
// three-variable grouped query, for the library alone. cpu-ns/op is the
// process's CPU time per request (GC included), which a loaded machine
// disturbs less than ns/op.
func BenchmarkHTTPRun(b *testing.B) {
	db, ro := benchFile(b)
	st := fileStore(b, db)
	eps, vars := st.Endpoints(), st.Variables()
	// The example server's policy: every read of the events is scoped to
	// the project, as the hand-written handler's query is.
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
	if err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	// The example server's run log: in the store, written in the
	// background.
	drops := &logDrops{}
	svc, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Access: policy,
		RunLog:   st.RunLog(sqlstore.RunLogOptions{}),
		Observer: drops,
		Executor: sqlexec.New(db, engine.SQLite, sqlexec.WithReadOnly(ro), sqlexec.WithInterrupt(sqliteinterrupt.For))})
	if err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	b.Cleanup(func() { svc.Close(context.Background()) }) //nolint:errcheck // the file goes with the benchmark
	lib := benchHandler(b, svc)
	ctx := context.Background()
	_, err = svc.CreateVariable(ctx, "1", variable.Variable{ID: idCountry, Name: "name", Type: variable.String})
	if err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	for name, sqlText := range map[string]string{
		"count":   "SELECT count(*) AS n FROM events WHERE event = {variables.name}",
		"select1": "SELECT 1",
	} {
		q := endpoint.Query{Kind: endpoint.KindSQL, SQL: sqlText}
		if strings.Contains(sqlText, "{variables.name}") {
			q.Variables = map[string]endpoint.VariableRef{idCountry: {VariableID: idCountry, CodeName: "name"}}
		}
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &q})
		if err != nil {
			b.Fatalf("unexpected error: %v", err)
		}
	}
	// The same store, and the executor on the one pool.
	onePool, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Executor: newExecutor(db)})
	if err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	keys := httpapi.NewKeyring()
	if err := keys.Add(keyP1, "1"); err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	unlimited, err := limit.New(limit.Config{ProjectPerMinute: limit.Unlimited, ProjectPerHour: limit.Unlimited})
	if err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	libOnePool := httpapi.New(onePool, keys, httpapi.WithLimiter(unlimited))
	base := demo.HandWrittenHandler(db, keyP1)

	countBody := []byte(`{"variables": {"name": "purchase"}}`)
	select1Body := []byte(`{"variables": {}}`)
	for _, bc := range []struct {
		name string
		h    http.Handler
		path string
		body []byte
	}{
		{"library/count", lib, "/api/projects/1/endpoints/count/run", countBody},
		{"baseline/count", base, "/api/projects/1/endpoints/count/run", countBody},
		{"library/select1", lib, "/api/projects/1/endpoints/select1/run", select1Body},
		{"baseline/select1", base, "/api/projects/1/endpoints/select1/run", select1Body},
		{"library/select1-onepool", libOnePool, "/api/projects/1/endpoints/select1/run", select1Body},
		{"library/by_country", lib, "/api/projects/1/endpoints/by_country/run",
			[]byte(`{"variables": {"event": "purchase", "from": "2025-05-01", "to": "2025-05-08"}}`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0, ok := cputime.Process()
			for b.Loop() {
				serveBench(b, bc.h, bc.path, bc.body)
			}
			if cpu1, ok1 := cputime.Process(); ok && ok1 {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
	// Concurrency: c clients sending requests back to back, each request
	// timed; p99-us is the 99th percentile of a request's time and req/s
	// the throughput of all the clients together. Every request asks its
	// own limit (above the one row of the answers; the hand-written handler
	// ignores it), so that no two requests in flight are alike: the
	// library's single flight would otherwise answer identical runs with
	// one query, and the library would be measured running fewer queries.
	countVars, select1Vars := `{"name": "purchase"}`, `{}`
	for _, c := range []int{1, 8} {
		for _, bc := range []struct {
			name string
			h    http.Handler
			path string
			vars string
		}{
			{"library/select1", lib, "/api/projects/1/endpoints/select1/run", select1Vars},
			{"baseline/select1", base, "/api/projects/1/endpoints/select1/run", select1Vars},
			{"library/count", lib, "/api/projects/1/endpoints/count/run", countVars},
			{"baseline/count", base, "/api/projects/1/endpoints/count/run", countVars},
		} {
			b.Run(fmt.Sprintf("%s/c=%d", bc.name, c), func(b *testing.B) {
				if bc.h == lib {
					// The run log entries dropped because the background
					// writer fell behind (ErrRunLogFull), written out
					// first so that none is counted in the next one.
					if err := svc.Flush(ctx); err != nil {
						b.Fatal(err)
					}
					d0 := drops.n.Load()
					defer func() {
						if err := svc.Flush(ctx); err != nil {
							b.Fatal(err)
						}
						b.ReportMetric(float64(drops.n.Load()-d0)/float64(b.N), "log-drops/op")
					}()
				}
				serveConcurrently(b, c, bc.h, bc.path, func(i int64) []byte {
					// Requests in flight at once are a few apart: i%1000 tells them apart.
					return fmt.Appendf(nil, `{"variables": %s, "limit": %d}`, bc.vars, 10+i%1000)
				})
			})
		}
	}
	// Both sides in turn at one client: each iteration one request of
	// each, the side that goes first alternating, and the ratios of the
	// median request times (library/baseline) and of the mean ones
	// (library/baseline-mean, which counts the slow requests, a
	// collection's, the run log writer's turn). The sub-benchmarks above
	// run one side's iterations, then the other's (and -count repeats
	// each before the next), so a machine whose speed drifts over a run
	// tilts their ratio; this one holds.
	for _, q := range []struct{ name, path, vars string }{
		{"select1", "/api/projects/1/endpoints/select1/run", select1Vars},
		{"count", "/api/projects/1/endpoints/count/run", countVars},
	} {
		b.Run("interleaved/"+q.name+"/c=1", func(b *testing.B) {
			var times [2][]time.Duration // library, baseline
			for i := 0; b.Loop(); i++ {
				body := fmt.Appendf(nil, `{"variables": %s, "limit": %d}`, q.vars, 10+i%1000)
				for k := range 2 {
					side := (i + k) % 2
					t := time.Now()
					if err := serveOnce([2]http.Handler{lib, base}[side], q.path, body); err != nil {
						b.Fatal(err)
					}
					times[side] = append(times[side], time.Since(t))
				}
			}
			sum := func(ts []time.Duration) (total time.Duration) {
				for _, t := range ts {
					total += t
				}
				return total
			}
			lm, hm := sum(times[0]), sum(times[1])
			l, h := medianOf(times[0]), medianOf(times[1])
			b.ReportMetric(float64(l.Nanoseconds()), "library-ns")
			b.ReportMetric(float64(h.Nanoseconds()), "baseline-ns")
			b.ReportMetric(float64(l)/float64(h), "library/baseline")
			b.ReportMetric(float64(lm)/float64(hm), "library/baseline-mean")
		})
	}
}

// medianOf is the middle of times (which it sorts).
func medianOf(times []time.Duration) time.Duration {
	slices.Sort(times)
	return times[len(times)/2]
}

// logDrops is an endpoint.Observer that counts the runs whose run log
// entry was dropped (endpoint.ErrRunLogFull).
type logDrops struct{ n atomic.Int64 }

func (d *logDrops) ObserveRun(_ context.Context, ev endpoint.RunEvent) {
	if errors.Is(ev.LogErr, endpoint.ErrRunLogFull) {
		d.n.Add(1)
	}
}

func (d *logDrops) ObserveRefresh(context.Context, endpoint.RefreshEvent) {}

// serveConcurrently sends b.N run requests through h from c goroutines,
// the nth with body(n), each sending its next request when its last is
// answered, and reports the 99th percentile of a request's time (p99-us),
// the requests answered a second (req/s) and the process's CPU time a
// request (cpu-ns/op).
//
// Between two requests a client yields its processor (runtime.Gosched),
// as a server's connection goroutine does when it waits on the network
// for the next request: the goroutine goes to the back of the queue of
// goroutines ready to run. Without it, a client that never parks keeps
// its processor until the Go scheduler preempts it (10 ms) or it meets a
// lock, and the p99 at 8 clients measured which handler happened to meet
// locks (the hand-written one's: SQLite's allocator, as it prepares each
// query anew), not its work. Both sides yield alike. A single client has
// no one to yield to, and does not: the yield would only add the
// scheduler's own cost (some 3 us) to both sides' time.
func serveConcurrently(b *testing.B, c int, h http.Handler, path string, body func(i int64) []byte) {
	var next atomic.Int64
	times := make([][]time.Duration, c)
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0, cpuOK := cputime.Process()
	start := time.Now()
	for i := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				req := body(n)
				t := time.Now()
				if err := serveOnce(h, path, req); err != nil {
					b.Error(err)
					return
				}
				times[i] = append(times[i], time.Since(t))
				if c > 1 {
					runtime.Gosched()
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if cpu1, ok := cputime.Process(); cpuOK && ok {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
	all := slices.Concat(times...)
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-us")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
}

// serveOnce is serveBench's request, for any goroutine: an error for an
// answer but 200.
func serveOnce(h http.Handler, path string, body []byte) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, "POST", path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+keyP1)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return fmt.Errorf("status %d: %s", rec.Code, rec.Body)
	}
	return nil
}

// serveBench sends one run request through h and fails on any answer but
// 200. The request's context is cancelled when the handler returns, as
// net/http's server gives every request (it cancels it when the client
// goes away): a handler that passes it to database/sql then pays what a
// cancellable query costs (database/sql and the driver each watch the
// context), the library and the hand-written handler alike.
func serveBench(b *testing.B, h http.Handler, path string, body []byte) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, "POST", path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+keyP1)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
}

// benchFile returns a SQLite file database with 10,000 demo events, opened
// as the example server opens its data, and a read-only pool on it.
func benchFile(b *testing.B) (db, ro *sql.DB) {
	b.Helper()
	dsn := "file:" + filepath.Join(b.TempDir(), "bench.db") + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	b.Cleanup(func() { db.Close() })
	if err := demo.Load(context.Background(), db, 10000, demoSeed); err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	// The library's runs go to a read-only pool whose connections keep
	// their statements (sqlexec.KeepStatements), as a host that sets no
	// SQLite limits opens it: the example server sets them (its runs need
	// the driver's own connections for that) and does not.
	ro, err = sqlexec.Open("sqlite", dsn+"&_pragma=query_only(1)", engine.SQLite, sqlexec.KeepStatements(0))
	if err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	b.Cleanup(func() { ro.Close() })
	// The example server's pools (examples/server setPool) keep 16 idle
	// connections or more, the hand-written handler's (db) as many, so
	// that neither side opens a connection a run.
	idle := max(4*runtime.GOMAXPROCS(0), 16)
	db.SetMaxIdleConns(idle)
	ro.SetMaxIdleConns(idle)
	return db, ro
}

// fileStore returns the SQL store in db itself.
func fileStore(b *testing.B, db *sql.DB) *sqlstore.Store {
	b.Helper()
	st, err := sqlstore.New(db, engine.SQLite)
	if err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	if err := st.Migrate(context.Background()); err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	return st
}

// benchHandler creates the 3-variable endpoint "by_country" in project 1
// of svc and returns the handler over svc.
func benchHandler(b *testing.B, svc *endpoint.Service) http.Handler {
	b.Helper()
	ctx := context.Background()
	for _, v := range []variable.Variable{
		{ID: idEvent, Name: "event", Type: variable.String},
		{ID: idFrom, Name: "from", Type: variable.Date},
		{ID: idTo, Name: "to", Type: variable.Date},
	} {
		_, err := svc.CreateVariable(ctx, "1", v)
		if err != nil {
			b.Fatalf("unexpected error: %v", err)
		}
	}
	q := endpoint.Query{
		Kind: endpoint.KindSQL,
		SQL: "SELECT json_extract(properties, '$.country') AS country, count(*) AS n FROM events" +
			" WHERE event = {variables.event} AND timestamp >= {variables.from} AND timestamp < {variables.to}" +
			" GROUP BY country ORDER BY n DESC, country",
		Variables: map[string]endpoint.VariableRef{
			idEvent: {VariableID: idEvent, CodeName: "event"},
			idFrom:  {VariableID: idFrom, CodeName: "from"},
			idTo:    {VariableID: idTo, CodeName: "to"},
		},
	}
	_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "by_country", Query: &q})
	if err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	keys := httpapi.NewKeyring()
	if err := keys.Add(keyP1, "1"); err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	// The limiter stays, so that its cost is measured, but without the
	// rates (a benchmark runs far more than 240 times a minute) nor the
	// concurrency limit (the c=8 benchmarks run 8 at once).
	l, err := limit.New(limit.Config{ProjectPerMinute: limit.Unlimited, ProjectPerHour: limit.Unlimited, ProjectConcurrency: limit.Unlimited})
	if err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	return httpapi.New(svc, keys, httpapi.WithLimiter(l))
}

// fixedExecutor answers every query with the same rows, so that a benchmark
// measures the handler and the Service, not a database.
type fixedExecutor struct{ res *driver.Result }

func (f fixedExecutor) Engine() engine.Engine { return engine.SQLite }
func (f fixedExecutor) Query(context.Context, driver.Statement, driver.Bounds) (*driver.Result, error) {
	return &driver.Result{Columns: f.res.Columns, Types: f.res.Types, Rows: f.res.Rows}, nil
}
func (f fixedExecutor) Exec(context.Context, []driver.Statement, driver.Write) error { return nil }

// BenchmarkHTTPRunOverhead is BenchmarkHTTPRun with in-memory stores and an
// executor that returns ten fixed rows: the cost of the handler (key check,
// body decoding, JSON answer) and the Service together, without a database.
func BenchmarkHTTPRunOverhead(b *testing.B) {
	rows := make([][]any, 10)
	for i := range rows {
		rows[i] = []any{"US", int64(i)}
	}
	svc, err := endpoint.New(endpoint.Config{
		Endpoints: memstore.New(),
		Variables: variable.NewMemoryStore(),
		Executor:  fixedExecutor{&driver.Result{Columns: []string{"country", "n"}, Types: []string{"TEXT", "INTEGER"}, Rows: rows}},
	})
	if err != nil {
		b.Fatalf("unexpected error: %v", err)
	}
	h := benchHandler(b, svc)
	body := []byte(`{"variables": {"event": "purchase", "from": "2025-05-01", "to": "2025-05-08"}}`)
	for b.Loop() {
		req := httptest.NewRequest("POST", "/api/projects/1/endpoints/by_country/run", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyP1)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
