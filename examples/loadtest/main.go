// Command loadtest measures the example server over real HTTP beside a
// hand-written net/http + database/sql handler doing the same work on the
// same SQLite file, each in a process of its own, and prints a markdown
// table of their latencies and throughputs:
//
//	go run ./examples/loadtest -rounds 4 -duration 2s
//
// It builds examples/server into a temporary directory and starts it on a
// free port of 127.0.0.1 over a fresh SQLite file that the server fills
// with -demo-events demo events, with the result cache and every run limit
// off (-cache-bytes 0, -project-* 0, -global-concurrency 0), so that every
// request runs its query. It creates two endpoints through the server's
// HTTP API: select1 (SELECT 1, the library's whole overhead) and count
// (SELECT count(*) AS n FROM events WHERE event = {variables.name}, which
// the server's access policy scopes to the project). Then it starts this
// same binary again as the baseline ("loadtest baseline"): a bearer key
// compared in constant time, the body decoded into a struct, the project's
// count (project_id = '1' AND event = ?) or SELECT 1 run on the file
// opened as the server opens it, the rows encoded as JSON: the
// demo.HandWrittenHandler that endpoint/httpapi's BenchmarkHTTPRun measures too.
//
// Both answers of each query are compared once before any measurement
// (columns and rows equal, the count above zero). Each round then sends
// each query from each number of clients (-concurrency) for -duration to
// the library and to the handler, alternating which goes first; each
// client is a keep-alive connection that sends its next request when its
// last is answered. Every answer is checked (status 200, a JSON answer
// with results); the first that is not stops the run with an error and no
// table. The table pools the rounds: p50 and p99 of every request's time,
// req/s the requests over the time the clients took, and the ratios
// library/handler of both; and, where /proc can be read, the CPU time each
// process used per request and the times its threads were switched out per
// request (voluntary and preempted: the scheduling a request costs, which
// neither a CPU profile nor an in-process benchmark shows).
//
// The library answers identical runs in flight at once with one query
// (single flight), which would spare it work the handler does at a
// concurrency above 1: no two requests in flight are alike (each asks its
// own limit, above the answers' one row), and at the end the server's
// /metrics must count every answer the load test got as a run with a query
// of its own. -same-body sends identical requests instead, and reports how
// many runs shared a query.
//
// The clients run on the same machine as both servers, and share its
// cores with them.
//
// -queries measures some of the queries only (select1, count), and
// -server-args gives the server more flags, as for a profile of it under
// the load (its -pprof-addr, docs/server.md):
//
//	go run ./examples/loadtest -queries select1 -concurrency 1 -server-args '-pprof-addr 127.0.0.1:6161'
//	go tool pprof -top 'http://127.0.0.1:6161/debug/pprof/profile?seconds=20'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == baselineCommand {
		os.Exit(baselineMain(os.Args[2:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}
