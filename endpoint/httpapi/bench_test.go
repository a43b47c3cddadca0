package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/examples/server/setup"
	"github.com/endpointkit/endpointkit/internal/cputime"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// BenchmarkHTTPRun sets the example server's own configuration against a
// hand-written net/http + database/sql handler doing the same work (check
// the key, decode the body, run the query, encode the rows as JSON) on one
// SQLite file: the library's Service, pools and executor are built by
// examples/server/setup, the package examples/server builds them with (the
// read-only run pool that keeps its statements, the SQLite length limit,
// the interrupt, the access policy scoping every read to the project, the
// run log in the store file beside the data, written in the background),
// with the result cache and every run limit off, as examples/loadtest runs
// the server, so that every request runs its query. Each request goes
// through the handler in process, without a network:
//
//	go test -run '^$' -bench 'BenchmarkHTTPRun$' -benchmem -count 5 ./endpoint/httpapi/
//
// vs/<query>/c=<n> are the ratios, measured in one run: both sides take
// turns, in slices of requests whose first side alternates, each slice
// sent by n clients at once (see alternate). library/baseline is the ratio
// of the median request times (at c=1, the figure to read),
// library/baseline-req/s that of the throughputs (at c=8). Every request
// asks its own limit (above the one row of the answers; the hand-written
// handler ignores it), so that no two requests in flight are alike: the
// library's single flight would otherwise answer identical runs with one
// query, and the library would be measured running fewer queries.
//
// library/<query> and baseline/<query> are one side alone, for its
// allocations (allocs/op) and CPU time (cpu-ns/op, the process's, GC
// included, which a loaded machine disturbs less than ns/op).
//
// count counts the events of a name of project 1 (the library's scoped by
// the access policy) through the (project_id, event, timestamp) index;
// select1 is SELECT 1: the library's whole overhead. by_country is a
// three-variable grouped query, for the library alone.
func BenchmarkHTTPRun(b *testing.B) {
	lib, base, svc, drops := exampleServer(b)
	ctx := context.Background()
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
	for _, q := range []struct{ name, path, vars string }{
		{"select1", "/api/projects/1/endpoints/select1/run", `{}`},
		{"count", "/api/projects/1/endpoints/count/run", `{"name": "purchase"}`},
	} {
		for _, c := range []int{1, 8} {
			b.Run(fmt.Sprintf("vs/%s/c=%d", q.name, c), func(b *testing.B) {
				// The run log entries dropped because the background
				// writer fell behind (ErrRunLogFull), written out first
				// so that none is counted in the next one.
				require.NoError(b, svc.Flush(ctx))
				d0 := drops.n.Load()
				alternate(b, c, [2]http.Handler{lib, base}, q.path, func(i int64) []byte {
					// Requests in flight at once are a few apart: i%1000 tells them apart.
					return fmt.Appendf(nil, `{"variables": %s, "limit": %d}`, q.vars, 10+i%1000)
				})
				require.NoError(b, svc.Flush(ctx))
				b.ReportMetric(float64(drops.n.Load()-d0)/float64(b.N), "log-drops/op")
			})
		}
	}
}

// exampleServer returns the example server's API handler (lib) over a
// SQLite file of 10,000 demo events, built as examples/server builds it
// (examples/server/setup), the hand-written handler (base) on the same
// file, the Service, and the count of its dropped run log entries. Its
// endpoints are select1, count and by_country of project 1.
func exampleServer(b *testing.B) (lib, base http.Handler, svc *endpoint.Service, drops *logDrops) {
	b.Helper()
	dir := b.TempDir()
	data, err := setup.OpenFile(filepath.Join(dir, "events.db"))
	require.NoError(b, err)
	b.Cleanup(func() { data.Close() })
	require.NoError(b, demo.Load(context.Background(), data, 10000, demoSeed))
	runs, err := setup.OpenRuns(filepath.Join(dir, "events.db"))
	require.NoError(b, err)
	b.Cleanup(func() { runs.Close() })
	storeDB, err := setup.OpenFile(filepath.Join(dir, "events-store.db"))
	require.NoError(b, err)
	b.Cleanup(func() { storeDB.Close() })
	st, err := sqlstore.New(storeDB, engine.SQLite)
	require.NoError(b, err)
	require.NoError(b, st.Migrate(context.Background()))
	exec := setup.Executor(data, runs, 0)
	b.Cleanup(func() { exec.Close() })
	// The example server's observers: its log (quiet but for failures)
	// and its Prometheus counters; and the count of dropped log entries.
	counters, err := metrics.New(prometheus.NewRegistry())
	require.NoError(b, err)
	drops = &logDrops{}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err = endpoint.New(setup.ServiceConfig(st, exec, setup.Options{
		RunTimeout:     endpoint.DefaultRunTimeout,
		RefreshTimeout: endpoint.DefaultRefreshTimeout,
		Observer:       endpoint.MultiObserver(endpoint.SlogObserver{Logger: logger}, counters, drops),
	}))
	require.NoError(b, err)
	b.Cleanup(func() { svc.Close(context.Background()) }) //nolint:errcheck // the files go with the benchmark
	lib = benchHandler(b, svc)
	ctx := context.Background()
	_, err = svc.CreateVariable(ctx, "1", variable.Variable{ID: idCountry, Name: "name", Type: variable.String})
	require.NoError(b, err)
	for name, sqlText := range map[string]string{
		"count":   "SELECT count(*) AS n FROM events WHERE event = {variables.name}",
		"select1": "SELECT 1",
	} {
		q := endpoint.Query{Kind: endpoint.KindSQL, SQL: sqlText}
		if strings.Contains(sqlText, "{variables.name}") {
			q.Variables = map[string]endpoint.VariableRef{idCountry: {VariableID: idCountry, CodeName: "name"}}
		}
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &q})
		require.NoError(b, err)
	}
	return lib, demo.HandWrittenHandler(data, keyP1), svc, drops
}

// alternate sends b.N run requests through each of sides (the library,
// then the baseline), the nth with body(n), in slices of requests that
// the two sides take in turn, the side that goes first alternating from
// slice to slice, so that a machine whose speed drifts over the run
// (another process, a collection) tilts neither side. Each slice is sent
// by c clients at once, each sending its next request when its last is
// answered. It reports, for each side, the median request time (library-us,
// baseline-us), and the ratios library/baseline of the medians, of the
// means (library/baseline-mean, which counts the slow requests: a
// collection's, the run log writer's turn) and of the throughputs over
// the time each side's slices took (library/baseline-req/s).
//
// Between two requests a client of several yields its processor
// (runtime.Gosched), as a server's connection goroutine does when it
// waits on the network for the next request; both sides yield alike.
func alternate(b *testing.B, c int, sides [2]http.Handler, path string, body func(i int64) []byte) {
	const slice = 200
	var (
		times   [2][]time.Duration
		elapsed [2]time.Duration
		n       int64
	)
	b.ResetTimer()
	for k := 0; n < int64(b.N); k++ {
		m := min(int64(slice), int64(b.N)-n)
		for j := range 2 {
			side := (k + j) % 2
			ts, took := sendSlice(b, c, sides[side], path, n, m, body)
			times[side] = append(times[side], ts...)
			elapsed[side] += took
		}
		n += m
	}
	b.StopTimer()
	sum := func(ts []time.Duration) (total time.Duration) {
		for _, t := range ts {
			total += t
		}
		return total
	}
	lm, hm := sum(times[0]), sum(times[1])
	l, h := medianOf(times[0]), medianOf(times[1])
	b.ReportMetric(float64(l.Nanoseconds())/1e3, "library-us")
	b.ReportMetric(float64(h.Nanoseconds())/1e3, "baseline-us")
	b.ReportMetric(float64(l)/float64(h), "library/baseline")
	b.ReportMetric(float64(lm)/float64(hm), "library/baseline-mean")
	// Throughput: requests over the time their slices took; both sides
	// sent as many requests.
	b.ReportMetric(float64(elapsed[1])/float64(elapsed[0]), "library/baseline-req/s")
}

// sendSlice sends m requests through h, numbered from first, from c
// clients at once, and returns each request's time and the slice's.
func sendSlice(b *testing.B, c int, h http.Handler, path string, first, m int64, body func(i int64) []byte) ([]time.Duration, time.Duration) {
	times := make([][]time.Duration, c)
	var next atomic.Int64
	next.Store(first)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := next.Add(1); n <= first+m; n = next.Add(1) {
				req := body(n)
				t := time.Now()
				if !assert.NoError(b, serveOnce(h, path, req)) {
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
	return slices.Concat(times...), time.Since(start)
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
	require.NoError(b, serveOnce(h, path, body))
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
		require.NoError(b, err)
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
	require.NoError(b, err)
	keys := httpapi.NewKeyring()
	require.NoError(b, keys.Add(keyP1, "1"))
	// The limiter stays, so that its cost is measured, but without the
	// rates (a benchmark runs far more than 240 times a minute) nor the
	// concurrency limit (the c=8 benchmarks run 8 at once).
	l, err := limit.New(limit.Config{ProjectPerMinute: limit.Unlimited, ProjectPerHour: limit.Unlimited, ProjectConcurrency: limit.Unlimited})
	require.NoError(b, err)
	return httpapi.New(svc, keys, httpapi.WithLimiter(l))
}

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
		// the same rows for every query, so that it measures the handler and
		// the Service, not a database
		Executor: heldexec.NewFake(nil, heldexec.Answer(&driver.Result{Columns: []string{"country", "n"}, Types: []string{"TEXT", "INTEGER"}, Rows: rows}),
			heldexec.Unrecorded()),
	})
	require.NoError(b, err)
	h := benchHandler(b, svc)
	body := []byte(`{"variables": {"event": "purchase", "from": "2025-05-01", "to": "2025-05-08"}}`)
	for b.Loop() {
		req := httptest.NewRequest("POST", "/api/projects/1/endpoints/by_country/run", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyP1)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(b, http.StatusOK, rec.Code, "status: %s", rec.Body)
	}
}
