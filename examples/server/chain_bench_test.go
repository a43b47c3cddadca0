package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/examples/server/setup"
	"github.com/endpointkit/endpointkit/internal/cputime"
	"github.com/endpointkit/endpointkit/variable"
)

// chainKey is the API key of project 1 in BenchmarkServerChain, given as
// the load test gives it (-api-key KEY=1).
const chainKey = "lt_chain-bench-key-of-project-1"

// chainVariableID is the id of the count's variable, name.
const chainVariableID = "44444444-4444-4444-8444-444444444444"

// BenchmarkServerChain isolates what the example server adds to the
// library's handler: it sends run requests, in process and without a
// network, to three handlers over one SQLite file of demo events:
//
//   - server: the whole handler examples/server serves (newHandler, as run
//     builds it from the flags examples/loadtest starts the server with:
//     the result cache and every run limit off), with its Service, its
//     request log, its Prometheus counters, its stored-key lookup, its
//     budgets, its MCP, editor and /metrics routes around the API;
//
//   - api: the bare httpapi handler over the same Service, behind the same
//     keyring, with a limiter of no limits (BenchmarkHTTPRun's library);
//
//   - handler: demo.HandWrittenHandler, net/http + database/sql.
//
// Run it with:
//
//	go test ./examples/server -run '^$' -bench 'BenchmarkServerChain$' -benchmem
//
// vs/<query>/c=<n> sends the three in turn, in slices of requests whose
// first side rotates, each slice from n clients at once, and reports the
// median request times (server-us, api-us, handler-us), their ratios
// (server/api, server/handler, api/handler) and the throughputs' ratios
// (server/handler-req/s, api/handler-req/s). <side>/<query> is one side
// alone, for its allocations and CPU time (cpu-ns/op), and for profiles:
//
//	go test ./examples/server -run '^$' -bench 'BenchmarkServerChain$/server/select1' -cpuprofile cpu.out -memprofile mem.out
//
// Every request asks its own limit (above the one row of the answers), so
// that no two requests in flight are alike and the single flight spares no
// query.
func BenchmarkServerChain(b *testing.B) {
	benchChain(b, inProcess(chainSides(b)))
}

// BenchmarkServerChainHTTP is BenchmarkServerChain over HTTP: each side
// served on a port of 127.0.0.1 of its own with the example server's
// timeouts, each client a keep-alive connection, as examples/loadtest
// sends its requests, but in one process:
//
//	go test ./examples/server -run '^$' -bench 'BenchmarkServerChainHTTP/vs' -benchtime 4000x
func BenchmarkServerChainHTTP(b *testing.B) {
	benchChain(b, overHTTP(b, chainSides(b)))
}

// benchChain is BenchmarkServerChain's body over sides.
func benchChain(b *testing.B, sides []chainSide) {
	for _, q := range []struct{ name, vars string }{
		{"select1", `{}`},
		{"count", `{"name": "purchase"}`},
	} {
		path := "/api/projects/1/endpoints/" + q.name + "/run"
		body := func(i int64) []byte {
			return fmt.Appendf(nil, `{"variables": %s, "limit": %d}`, q.vars, 10+i%1000)
		}
		for _, s := range sides {
			b.Run(s.name+"/"+q.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu0, ok := cputime.Process()
				var i int64
				for b.Loop() {
					i++
					if err := s.do(path, body(i)); err != nil {
						b.Fatal(err)
					}
				}
				if cpu1, ok1 := cputime.Process(); ok && ok1 {
					b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
				}
			})
		}
		for _, c := range []int{1, 8} {
			b.Run(fmt.Sprintf("vs/%s/c=%d", q.name, c), func(b *testing.B) {
				rotate(b, c, sides, path, body)
			})
		}
	}
}

// chainSide is one handler BenchmarkServerChain measures, and how a
// request reaches it (do): in process, or over HTTP.
type chainSide struct {
	name string
	h    http.Handler
	do   func(path string, body []byte) error
}

// inProcess sends each request of sides through its handler in process.
func inProcess(sides []chainSide) []chainSide {
	out := slices.Clone(sides)
	for i := range out {
		h := out[i].h
		out[i].do = func(path string, body []byte) error { return endpointtest.PostOK(h, path, chainKey, body) }
	}
	return out
}

// overHTTP serves each of sides on a port of 127.0.0.1 of its own, with
// the example server's timeouts, and sends each request over a
// keep-alive connection of a client of its own.
func overHTTP(b *testing.B, sides []chainSide) []chainSide {
	out := slices.Clone(sides)
	for i := range out {
		srv := httptest.NewUnstartedServer(out[i].h)
		srv.Config.ReadHeaderTimeout, srv.Config.ReadTimeout = 10*time.Second, 30*time.Second
		srv.Config.WriteTimeout, srv.Config.IdleTimeout = endpoint.DefaultRunTimeout+30*time.Second, 2*time.Minute
		srv.Start()
		b.Cleanup(srv.Close)
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		b.Cleanup(client.CloseIdleConnections)
		base := srv.URL
		out[i].do = func(path string, body []byte) error { return chainPost(client, base+path, body) }
	}
	return out
}

// chainPost POSTs body to url as a client of the load test does; an error
// for any answer but 200.
func chainPost(client *http.Client, url string, body []byte) error {
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+chainKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, got)
	}
	return nil
}

// chainSides builds the example server's handler as run does, from the
// flags examples/loadtest gives it, over a temporary SQLite file of
// 10,000 demo events a project, the bare API over its Service, and the
// hand-written handler on the same file, with the endpoints select1 and
// count the load test creates.
func chainSides(b *testing.B) []chainSide {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	dbPath := filepath.Join(dir, "events.db")
	cfg, err := parseFlags([]string{
		"-addr", "127.0.0.1:0", "-db", dbPath, "-cache-bytes", "0",
		"-project-runs-per-minute", "0", "-project-runs-per-hour", "0",
		"-project-concurrency", "0", "-global-concurrency", "0",
		"-api-key", chainKey + "=1", "-metrics-key", "lm_chain-bench-metrics-key", "-demo-events", "10000",
	}, func(string) string { return "" }, io.Discard)
	require.NoError(b, err)
	keys, err := newKeyring(cfg)
	require.NoError(b, err)
	bk, err := openBackend(cfg)
	require.NoError(b, err)
	b.Cleanup(bk.close)
	_, _, err = loadEvents(ctx, bk, cfg.demoEvents, cfg.projects(), cfg.demoEnd)
	require.NoError(b, err)
	registry := prometheus.NewRegistry()
	// The server logs to stderr; here to nothing, at the same level.
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err := newService(ctx, cfg, bk, registry, logger, io.Discard)
	require.NoError(b, err)
	b.Cleanup(func() { _ = svc.Close(context.Background()) })
	counter, closeCounter, err := openBudgets(cfg, bk, registry, logger)
	require.NoError(b, err)
	b.Cleanup(closeCounter)
	server, err := newHandler(cfg, svc, keys, bk.store.Keys(), counter, registry, logger)
	require.NoError(b, err)

	l, err := limit.New(limit.Config{ProjectPerMinute: limit.Unlimited, ProjectPerHour: limit.Unlimited, ProjectConcurrency: limit.Unlimited})
	require.NoError(b, err)
	api := httpapi.New(svc, keys, httpapi.WithLimiter(l))

	_, err = svc.CreateVariable(ctx, "1", variable.Variable{ID: chainVariableID, Name: "name", Type: variable.String})
	require.NoError(b, err)
	for name, text := range map[string]string{
		"count":   "SELECT count(*) AS n FROM events WHERE event = {variables.name}",
		"select1": "SELECT 1",
	} {
		q := endpoint.Query{Kind: endpoint.KindSQL, SQL: text}
		if name == "count" {
			q.Variables = map[string]endpoint.VariableRef{chainVariableID: {VariableID: chainVariableID, CodeName: "name"}}
		}
		_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &q})
		require.NoError(b, err)
	}
	data, err := setup.OpenFile(dbPath)
	require.NoError(b, err)
	b.Cleanup(func() { data.Close() })
	return []chainSide{{name: "server", h: server}, {name: "api", h: api}, {name: "handler", h: demo.HandWrittenHandler(data, chainKey)}}
}

// rotate sends b.N requests through each side, the nth with body(n), in
// slices of 200 that the sides take in turn, the side that goes first
// rotating from slice to slice, so that a machine whose speed drifts tilts
// none; each slice is sent by c clients at once. It reports each side's
// median request time and the ratios of the medians and of the
// throughputs (requests over the time the side's slices took) of the
// first side (the server) and the second (the API) to the last (the
// hand-written handler), and of the first to the second.
func rotate(b *testing.B, c int, sides []chainSide, path string, body func(int64) []byte) {
	const slice = 200
	times := make([][]time.Duration, len(sides))
	elapsed := make([]time.Duration, len(sides))
	var n int64
	b.ResetTimer()
	for k := 0; n < int64(b.N); k++ {
		m := min(int64(slice), int64(b.N)-n)
		for j := range sides {
			s := (k + j) % len(sides)
			do := sides[s].do
			ts, took, err := endpointtest.SendSlice(c, func(b []byte) error { return do(path, b) }, n, m, body)
			if err != nil {
				b.Fatalf("%s: %v", sides[s].name, err)
			}
			times[s] = append(times[s], ts...)
			elapsed[s] += took
		}
		n += m
	}
	b.StopTimer()
	med := make([]float64, len(sides))
	for i, ts := range times {
		slices.Sort(ts)
		med[i] = float64(ts[len(ts)/2])
		b.ReportMetric(med[i]/1e3, sides[i].name+"-us")
	}
	last := len(sides) - 1
	for i := range last {
		b.ReportMetric(med[i]/med[last], sides[i].name+"/"+sides[last].name)
		b.ReportMetric(float64(elapsed[last])/float64(elapsed[i]), sides[i].name+"/"+sides[last].name+"-req/s")
	}
	b.ReportMetric(med[0]/med[1], sides[0].name+"/"+sides[1].name)
}
