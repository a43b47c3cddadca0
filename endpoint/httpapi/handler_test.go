package httpapi_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
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
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllowHeader(t *testing.T) {
	h := newHarness(t, nil)
	cases := []struct{ method, path, allow string }{
		{"PUT", "/api/projects/1/endpoints/", "GET, HEAD, POST"},
		{"PUT", "/api/projects/1/endpoints/x", "GET, HEAD, PATCH, DELETE"},
		{"GET", "/api/projects/1/endpoints/x/run", "POST"},
		{"POST", "/api/projects/1/insight_variables/" + idFrom + "/", "GET, HEAD, PATCH, DELETE"},
	}
	for _, c := range cases {
		r := h.do(c.method, c.path, keyP1, nil)
		mustStatus(t, http.StatusMethodNotAllowed, r)
		got, want := r.Header.Get("Allow"), c.allow
		assert.Equal(t, want, got, "%s %s: r.Header.Get(\"Allow\")", c.method, c.path)
	}
}

func TestNewPanicsOnNil(t *testing.T) {
	svc := newService(t, newExecutor(openEvents(t, 1)))
	assert.True(t, panics(func() { httpapi.New(nil, httpapi.NewKeyring()) }), "httpapi.New(nil, keyring) did not panic")
	assert.True(t, panics(func() { httpapi.New(svc, nil) }), "httpapi.New(svc, nil) did not panic")
}

// panics reports whether f panics.
func panics(f func()) (did bool) {
	defer func() {
		if recover() != nil {
			did = true
		}
	}()
	f()
	return false
}

// serve answers one request through h.
func serve(t *testing.T, h http.Handler, method, path, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Authorization", "Bearer "+keyP1)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return decodeResponse(t, rec.Code, rec.Header(), rec.Body.Bytes())
}

func newKeys(t *testing.T) *httpapi.Keyring {
	t.Helper()
	keys := httpapi.NewKeyring()
	require.NoError(t, keys.Add(keyP1, "1"))
	return keys
}

func TestWithPrefix(t *testing.T) {
	svc := newService(t, newExecutor(openEvents(t, 10)))
	h := httpapi.New(svc, newKeys(t), httpapi.WithPrefix("/analytics/"))
	r := serve(t, h, "POST", "/analytics/api/projects/1/endpoints", `{"name": "one", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`)
	mustStatus(t, http.StatusCreated, r)
	assert.Equal(t, "/analytics/api/projects/1/endpoints/one/run", r.Body["endpoint_path"])
	mustStatus(t, http.StatusOK, serve(t, h, "POST", "/analytics/api/projects/1/endpoints/one/run/", ""))
	r = serve(t, h, "GET", "/api/projects/1/endpoints/", "")
	mustStatus(t, http.StatusNotFound, r)
	checkErrorBody(t, r)
	mustStatus(t, http.StatusMethodNotAllowed, serve(t, h, "PUT", "/analytics/api/projects/1/endpoints/one", "{}"))
}

func TestWithMaxBodyBytes(t *testing.T) {
	svc := newService(t, newExecutor(openEvents(t, 10)))
	h := httpapi.New(svc, newKeys(t), httpapi.WithMaxBodyBytes(64))
	body := `{"name": "one", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`
	a, b := len(body), 64
	require.True(t, (a > b), "len(body) = %v, want > %v", a, b)
	r := serve(t, h, "POST", "/api/projects/1/endpoints/", body)
	mustStatus(t, http.StatusRequestEntityTooLarge, r)
	assert.Contains(t, r.detail(), "the limit is 64 bytes")
	mustStatus(t, http.StatusCreated, serve(t, httpapi.New(svc, newKeys(t), httpapi.WithMaxBodyBytes(0)), "POST", "/api/projects/1/endpoints/", body))
}

func TestHead(t *testing.T) {
	svc := newService(t, newExecutor(openEvents(t, 10)))
	h := httpapi.New(svc, newKeys(t))
	req := httptest.NewRequest("HEAD", "/api/projects/1/endpoints/", nil)
	req.Header.Set("Authorization", "Bearer "+keyP1)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code)
}

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
			ts, took, err := endpointtest.SendSlice(c, func(req []byte) error { return endpointtest.PostOK(sides[side], path, keyP1, req) }, n, m, body)
			require.NoError(b, err)
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

// serveBench sends one run request through h and fails on any answer but
// 200. The request's context is cancelled when the handler returns, as
// net/http's server gives every request (it cancels it when the client
// goes away): a handler that passes it to database/sql then pays what a
// cancellable query costs (database/sql and the driver each watch the
// context), the library and the hand-written handler alike.
func serveBench(b *testing.B, h http.Handler, path string, body []byte) {
	require.NoError(b, endpointtest.PostOK(h, path, keyP1, body))
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

const createPath = "/api/projects/1/endpoints/"

// TestBodyEncodingIsChecked: a body that encoding/json would repair
// silently (invalid UTF-8, a lone surrogate) is refused with a 400 that
// says what is wrong and where.
func TestBodyEncodingIsChecked(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	cases := []struct {
		name, method, path, body, detail string
	}{
		{"invalid UTF-8 in a description", "POST", createPath, "{\"name\": \"a\", \"description\": \"caf\xe9\", \"query\": {\"kind\": \"HogQLQuery\", \"query\": \"SELECT 1\"}}", "not valid UTF-8: byte 0xe9 at byte 33"},
		{"invalid UTF-8 in a variable value", "POST", runPath, "{\"variables\": {\"from\": \"2025-05-01\", \"to\": \"2025-05-02\xff\"}}", "not valid UTF-8: byte 0xff"},
		{"invalid UTF-8 in a key", "PATCH", "/api/projects/1/endpoints/in_range", "{\"description\": \"d\", \"\xc3\": 1}", "not valid UTF-8: byte 0xc3 at byte 22"},
		{"invalid UTF-8 in SQL", "PATCH", "/api/projects/1/endpoints/in_range", "{\"query\": {\"kind\": \"HogQLQuery\", \"query\": \"SELECT '\xfe' AS x\"}}", "not valid UTF-8: byte 0xfe"},
		{"lone surrogate", "POST", createPath, `{"name": "b", "description": "\ud800", "query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`, `\ud800 is half of a UTF-16 surrogate pair`},
		{"lone low surrogate in a variable", "POST", "/api/projects/1/insight_variables/", `{"name": "c", "type": "String", "default_value": "x\udc01"}`, `\udc01 is half`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantParseError(t, h, c.method, c.path, c.body, c.detail)
		})
	}
	// Nothing was created or changed.
	mustStatus(t, http.StatusNotFound, h.do("GET", createPath+"a", keyP1, nil))
	mustStatus(t, http.StatusNotFound, h.do("GET", createPath+"b", keyP1, nil))
	r := h.do("GET", createPath+"in_range", keyP1, nil)
	assert.Equal(t, "", r.Body["description"])
	// A valid pair and a literal U+FFFD are fine.
	mustStatus(t, http.StatusCreated, h.do("POST", createPath, keyP1, `{"name": "ok", "description": "\ud83d\ude00 `+"\uFFFD"+`", "query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`))
}

// wantParseError sends body with keyP1 and checks the answer is a 400
// parse_error, in the error body's form, whose detail holds detail.
func wantParseError(t *testing.T, h *harness, method, path, body, detail string) response {
	t.Helper()
	r := h.do(method, path, keyP1, body)
	mustStatus(t, http.StatusBadRequest, r)
	checkErrorBody(t, r)
	assert.Equal(t, "parse_error", r.Body["code"])
	assert.Contains(t, r.detail(), detail)
	return r
}

// TestDuplicateKeysAreRefused: a key given twice, at any depth, is a 400
// naming the key and where it is, instead of the last one silently winning.
func TestDuplicateKeysAreRefused(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	cases := []struct {
		name, method, path, body, detail, attr string
	}{
		{"top level", "POST", createPath, `{"name": "a", "name": "b", "query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`, `Duplicate key "name" in the request body at byte 14`, "name"},
		{"run variables", "POST", runPath, `{"variables": {"from": "2020-01-01", "to": "2025-05-02", "from": "2025-05-01"}}`, `Duplicate key "from" in 'variables'`, "variables.from"},
		{"run option", "POST", runPath, `{"variables": {"from": "2025-05-01", "to": "2025-05-02"}, "limit": 1, "limit": 1000}`, `Duplicate key "limit"`, "limit"},
		{"inside the query", "PATCH", "/api/projects/1/endpoints/in_range", `{"query": {"kind": "HogQLQuery", "query": "SELECT 1", "query": "SELECT 2"}}`, `Duplicate key "query" in 'query'`, "query.query"},
		{"in an insight series", "POST", createPath, `{"name": "t", "query": {"kind": "TrendsQuery", "series": [{"event": "a"}, {"event": "b", "event": "c"}]}}`, `Duplicate key "event" in 'query.series.1'`, "query.series.1.event"},
		{"escaped spelling", "POST", "/api/projects/1/insight_variables/", `{"name": "n", "type": "String", "\u006eame": "m"}`, `Duplicate key "name"`, "name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := wantParseError(t, h, c.method, c.path, c.body, c.detail)
			assert.Equal(t, c.attr, r.Body["attr"])
		})
	}
	mustStatus(t, http.StatusNotFound, h.do("GET", createPath+"b", keyP1, nil))
	r := h.do("GET", createPath+"in_range", keyP1, nil)
	assert.Contains(t, string(r.Raw), "{variables.from}", "the endpoint was not changed")
}

// echoRand makes the client input of TestDetailsDoNotEchoInput: random
// letters, so that a long repeat in a detail can only be an echo.
var echoRand = rand.New(rand.NewPCG(11, 12))

func letters(n int) string {
	const abc = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		b[i] = abc[echoRand.IntN(len(abc))]
	}
	return string(b)
}

// TestDetailsDoNotEchoInput sends a long input to every place a detail
// repeats client input, and checks that no detail repeats more than 200
// characters of the request, in one stretch or in all (counting stretches
// of 16 bytes or more, so that words the body happens to share with the
// message do not count), while still showing its start so that the client
// recognises it. The origin column says where the echo is made:
// cut at the source in httpapi, or by the final guard for the endpoint and
// variable packages.
func TestDetailsDoNotEchoInput(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	long := letters(20000)
	name := "a" + letters(5000)
	uuids := make([]string, 300)
	for i := range uuids {
		uuids[i] = fmt.Sprintf("%08x-1111-4111-8111-%012x", i, i)
	}
	var escaped strings.Builder // the same name, every letter \u-escaped
	for _, c := range name {
		fmt.Fprintf(&escaped, `\u%04x`, c)
	}
	manyKeys := map[string]any{"variables": map[string]any{}}
	for i := range 500 {
		manyKeys[fmt.Sprintf("k%03d%s", i, letters(30))] = 1
	}
	refs := map[string]any{}
	for _, id := range uuids {
		refs[id] = map[string]any{"variableId": id, "code_name": "v" + id[:8]}
	}

	cases := []struct {
		name, origin string
		method, path string
		contentType  string
		body         any
		status       int
		shows        string // a part of the input the detail still shows
	}{
		{"unknown key", "httpapi", "POST", runPath, "", `{"variables": {}, "` + long + `": 1}`, 400, long[:40]},
		{"many unknown keys", "httpapi", "POST", runPath, "", manyKeys, 400, "k000"},
		{"number literal", "httpapi", "POST", runPath, "", `{"variables": {}, "limit": 1` + strings.Repeat("9", 20000) + `}`, 400, "number 1999"},
		{"field path of a type error", "httpapi", "POST", "/api/projects/1/insight_variables/", "", `{"name": "x", "type": "List", "values": ["a", ` + strings.Repeat("1", 5000) + `]}`, 400, ""},
		{"content type", "httpapi", "POST", runPath, "application/" + long, `{}`, 415, long[:40]},
		{"charset", "httpapi", "POST", runPath, "application/json; charset=" + long, `{}`, 415, long[:40]},
		{"duplicate key", "httpapi", "POST", runPath, "", `{"variables": {"` + long + `": 1, "` + long + `": 2}}`, 400, long[:40]},
		{"method", "httpapi", strings.ToUpper(long[:3000]), runPath, "", nil, 405, strings.ToUpper(long[:40])},
		{"project", "httpapi", "GET", "/api/projects/" + long + "/endpoints/", "", nil, 403, long[:40]},

		{"endpoint not found", "endpoint", "GET", createPath + name, "", nil, 404, name[:40]},
		{"run of an unknown endpoint", "endpoint", "POST", createPath + name + "/run", "", `{}`, 404, name[:40]},
		{"invalid endpoint name", "endpoint", "POST", createPath, "", map[string]any{"name": "1" + name, "query": sqlQuery("SELECT 1", nil)}, 400, name[:40]},
		{"invalid name, escaped", "endpoint", "POST", createPath, "", `{"name": "1` + escaped.String() + `", "query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`, 400, name[:40]},
		{"unknown variable", "endpoint", "POST", runPath, "", map[string]any{"variables": map[string]any{"from": "2025-05-01", "to": "2025-05-02", name: 1}}, 400, name[:40]},
		{"many unknown variables", "endpoint", "POST", runPath, "", map[string]any{"variables": func() map[string]any {
			m := map[string]any{"from": "2025-05-01", "to": "2025-05-02"}
			for i := range 400 {
				m[fmt.Sprintf("u%03d%s", i, letters(20))] = 1
			}
			return m
		}()}, 400, "u000"},
		{"undefined placeholders", "endpoint", "POST", createPath, "", map[string]any{"name": "x", "query": sqlQuery("SELECT {variables."+name+"}", nil)}, 400, name[:40]},
		{"variable ids not UUIDs", "endpoint", "POST", createPath, "", map[string]any{"name": "x", "query": map[string]any{"kind": "HogQLQuery", "query": "SELECT {variables.a}", "variables": map[string]any{name: map[string]any{"variableId": name, "code_name": "a"}}}}, 400, name[:40]},
		{"variable ids not found", "endpoint", "POST", createPath, "", map[string]any{"name": "x", "query": map[string]any{"kind": "HogQLQuery", "query": "SELECT 1", "variables": refs}}, 400, uuids[0]},
		{"refresh mode", "endpoint", "POST", runPath, "", map[string]any{"variables": okVars, "refresh": long}, 400, long[:40]},
		{"query kind", "endpoint", "POST", createPath, "", map[string]any{"name": "x", "query": map[string]any{"kind": long}}, 400, long[:40]},
		{"query variable key", "endpoint", "POST", createPath, "", map[string]any{"name": "x", "query": map[string]any{"kind": "HogQLQuery", "query": "SELECT 1", "variables": map[string]any{long: 1}}}, 400, ""},
		{"variable not found", "endpoint", "GET", "/api/projects/1/insight_variables/" + name, "", nil, 404, ""},
		{"variable id", "variable", "POST", "/api/projects/1/insight_variables/", "", map[string]any{"id": long, "name": "x", "type": "String"}, 400, long[:40]},
		{"variable type", "variable", "POST", "/api/projects/1/insight_variables/", "", map[string]any{"name": "x", "type": long}, 400, long[:40]},
		{"variable code_name", "variable", "POST", "/api/projects/1/insight_variables/", "", map[string]any{"name": "x", "code_name": "1" + long}, 400, long[:40]},
		{"repeated list value", "variable", "POST", "/api/projects/1/insight_variables/", "", map[string]any{"name": "x", "type": "List", "values": []string{long, long}}, 400, long[:40]},
		{"variable value", "variable", "POST", runPath, "", map[string]any{"variables": map[string]any{"from": long, "to": "2025-05-02"}}, 400, long[:40]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var raw []byte
			switch b := c.body.(type) {
			case nil:
			case string:
				raw = []byte(b)
			default:
				var err error
				raw, err = jsonMarshal(b)
				require.NoError(t, err)
			}
			req := httptest.NewRequest(c.method, c.path, bytes.NewReader(raw))
			if c.path != "" && strings.Contains(c.path, "%") {
				t.Fatal("paths are sent unescaped")
			}
			req.Header.Set("Authorization", "Bearer "+keyAdmin)
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			} else if raw != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			rec := httptest.NewRecorder()
			h.handler.ServeHTTP(rec, req)
			r := decodeResponse(t, rec.Code, rec.Header(), rec.Body.Bytes())
			if c.name == "project" {
				// The admin key may use every project: ask with one that may not.
				req.Header.Set("Authorization", "Bearer "+keyP1)
				rec = httptest.NewRecorder()
				h.handler.ServeHTTP(rec, req)
				r = decodeResponse(t, rec.Code, rec.Header(), rec.Body.Bytes())
			}
			mustStatus(t, c.status, r)
			checkErrorBody(t, r)
			input := c.method + " " + c.path + " " + c.contentType + " " + string(raw) + " " + name + " " + long
			detail := r.detail()
			a, b := longestRepeat(detail, input), 200
			assert.True(t, (a <= b), "%s echo: %s: longestRepeat(detail, input) = %v, want <= %v", c.origin, detail, a, b)
			if a, b := repeatedRunes(detail, input), 200; !(a <= b) {
				t.Errorf("%s echo: %s: repeatedRunes(detail, input) = %v, want <= %v", c.origin, detail, a, b)
			}
			if attr, ok := r.Body["attr"].(string); ok {
				a, b := utf8.RuneCountInString(attr), 201
				assert.True(t, (a <= b), "attr: %s: utf8.RuneCountInString(attr) = %v, want <= %v", attr, a, b)
			}
			if c.shows != "" {
				assert.Contains(t, detail, c.shows, "the echo is cut, not removed")
			}
		})
	}
}

// longestRepeat returns the length in runes of the longest stretch of
// detail that occurs in input.
func longestRepeat(detail, input string) int {
	best := 0
	runes := []rune(detail)
	for i := range runes {
		lo, hi := 0, len(runes)-i
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if strings.Contains(input, string(runes[i:i+mid])) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		best = max(best, lo)
	}
	return best
}

// repeatedRunes counts the runes of detail that lie in a stretch of 16
// bytes or more occurring in input.
func repeatedRunes(detail, input string) int {
	const w = 16
	covered := make([]bool, len(detail))
	for i := 0; i+w <= len(detail); i++ {
		if strings.Contains(input, detail[i:i+w]) {
			for j := i; j < i+w; j++ {
				covered[j] = true
			}
		}
	}
	n := 0
	for i := range detail { // the first byte of each rune
		if covered[i] {
			n++
		}
	}
	return n
}

// TestRequestID: every answer carries X-Request-Id, the client's when it is
// short and printable, a fresh one otherwise.
func TestRequestID(t *testing.T) {
	h := newHarness(t, nil)
	h.setupRange("1", keyP1)
	requests := []struct{ method, path, key string }{
		{"GET", createPath, keyP1},             // 200
		{"POST", runPath, keyP1},               // 400
		{"GET", createPath, ""},                // 401
		{"GET", createPath, keyP2},             // 403
		{"GET", "/nowhere", ""},                // 404
		{"PUT", createPath, keyP1},             // 405
		{"DELETE", createPath + "nope", keyP1}, // 404
		{"DELETE", "/api/projects/1/insight_variables/" + idCountry, keyP1}, // 404
	}
	seen := map[string]bool{}
	for _, rq := range requests {
		r := h.do(rq.method, rq.path, rq.key, nil)
		id := r.Header.Get("X-Request-Id")
		re := regexp.MustCompile(`^[A-Z2-7]{26}$`)
		assert.True(t, re.MatchString(id), "%s %s: X-Request-Id = %q, want a match of %s", rq.method, rq.path, id, re)
		if seen[id] {
			t.Errorf("ids are unique: seen[id] is true")
		}
		seen[id] = true
	}
	mustStatus(t, http.StatusCreated, h.do("POST", createPath, keyP1, map[string]any{"name": "gone", "query": sqlQuery("SELECT 1", nil)}))
	r := h.do("DELETE", createPath+"gone", keyP1, nil)
	mustStatus(t, http.StatusNoContent, r)
	assert.NotEqual(t, "", r.Header.Get("X-Request-Id"), "204 too: r.Header.Get(\"X-Request-Id\") is empty")

	cases := []struct {
		sent []string
		kept bool
	}{
		{[]string{"abc-123"}, true},
		{[]string{"req:7f3a/9?x=1"}, true},
		{[]string{strings.Repeat("a", 128)}, true},
		{[]string{strings.Repeat("a", 129)}, false},
		{[]string{"has space"}, false},
		{[]string{"tab\there"}, false},
		{[]string{"caf\u00e9"}, false},
		{[]string{""}, false},
		{[]string{"one", "two"}, false},
	}
	for _, c := range cases {
		req, err := http.NewRequest("GET", h.server.URL+createPath, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+keyP1)
		for _, v := range c.sent {
			req.Header.Add("X-Request-Id", v)
		}
		r := h.send(req)
		got := r.Header.Get("X-Request-Id")
		if c.kept {
			assert.Equal(t, c.sent[0], got)
		} else {
			re := regexp.MustCompile(`^[A-Z2-7]{26}$`)
			assert.True(t, re.MatchString(got), "%q replaced: got %q, want a match of %s", c.sent, got, re)
		}
	}
}

// TestServerErrorsAreLogged: every 5xx (an executor's failure, its
// timeout, a panic) is logged with its cause, engine detail included, and
// the request id the client got; the client gets an error body with
// neither the cause nor anything of it.
func TestServerErrorsAreLogged(t *testing.T) {
	secret := "dial tcp 10.9.8.7:9000: password=swordfish"
	cases := []struct {
		name   string
		err    error
		status int
	}{
		{"failure", errors.New(secret), http.StatusBadGateway},
		{"timeout", fmt.Errorf("%s: %w", secret, context.DeadlineExceeded), http.StatusGatewayTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, func(*sql.DB) driver.Executor { return failingExecutor(c.err) })
			h.setupRange("1", keyP1)
			r := h.do("POST", runPath, keyP1, map[string]any{"variables": okVars})
			mustStatus(t, c.status, r)
			checkErrorBody(t, r)
			assert.NotContains(t, string(r.Raw), "swordfish")
			assert.NotContains(t, string(r.Raw), "10.9.8.7")
			id := r.Header.Get("X-Request-Id")
			require.NotEmpty(t, id)
			logs := h.logs.String()
			assert.Contains(t, logs, "level=ERROR")
			assert.Contains(t, logs, "swordfish", "the cause is logged")
			assert.Contains(t, logs, "request_id="+id)
			assert.Contains(t, logs, fmt.Sprintf("status=%d", c.status))
		})
	}
	t.Run("panic", func(t *testing.T) {
		r, logs := serveWith(t, authFunc(func(context.Context, string, string) error { panic("boom-7") }))
		require.Equal(t, http.StatusInternalServerError, r.Status)
		assert.Contains(t, logs, "boom-7")
		s, sub := logs, "request_id="+r.Header.Get("X-Request-Id")
		assert.Contains(t, s, sub)
		assert.Contains(t, logs, "stack=")
		assert.Equal(t, 1, strings.Count(logs, "level=ERROR"), "one entry per failure: %s: strings.Count(logs, \"level=ERROR\")", logs)
	})
	t.Run("client errors are not logged", func(t *testing.T) {
		h := newHarness(t, nil)
		h.setupRange("1", keyP1)
		mustStatus(t, http.StatusBadRequest, h.do("POST", runPath, keyP1, `{"variables": {}}`))
		mustStatus(t, http.StatusNotFound, h.do("GET", createPath+"nope", keyP1, nil))
		v := h.logs.String()
		assert.True(t, (v == ""), "h.logs.String() = %v, want it empty", v)
	})
}

// TestDefaultLogger: without WithLogger, 5xx go to slog.Default().
func TestDefaultLogger(t *testing.T) {
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	var buf bytes.Buffer
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))

	svc := newService(t, failingExecutor(errors.New("engine said no-42")))
	h := httpapi.New(svc, newKeys(t), httpapi.WithLogger(nil))
	mustStatus(t, http.StatusCreated, serve(t, h, "POST", createPath, `{"name": "one", "query": {"kind": "HogQLQuery", "query": "SELECT 1 AS one"}}`))
	r := serve(t, h, "POST", "/api/projects/1/endpoints/one/run", "")
	mustStatus(t, http.StatusBadGateway, r)
	assert.Contains(t, buf.String(), "engine said no-42")
	s, sub := buf.String(), r.Header.Get("X-Request-Id")
	assert.Contains(t, s, sub)
}

// TestRequestIDInContext: the executor sees the request's id.
func TestRequestIDInContext(t *testing.T) {
	var got string
	h := newHarness(t, func(events *sql.DB) driver.Executor {
		return heldexec.NewFake(newExecutor(events), heldexec.Around(func(ctx context.Context) { got = httpapi.RequestID(ctx) }, nil))
	})
	h.setupRange("1", keyP1)
	req, err := http.NewRequest("POST", h.server.URL+runPath, strings.NewReader(`{"variables": {"from": "2025-05-01", "to": "2025-05-02"}}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyP1)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "trace-77")
	mustStatus(t, http.StatusOK, h.send(req))
	assert.Equal(t, "trace-77", got)
	v := httpapi.RequestID(context.Background())
	assert.True(t, (v == ""), "httpapi.RequestID(context.Background()) = %v, want it empty", v)
}

// jsonMarshal is json.Marshal without HTML escaping, as a client sends.
func jsonMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return buf.Bytes(), err
}
