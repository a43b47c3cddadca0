// Command server is the endpointkit example server: the HTTP API of
// package httpapi over an embedded SQLite database (modernc.org/sqlite, pure
// Go) holding deterministic demo events, the stores of endpoints and
// variables, and their versions.
//
//	go run ./examples/server [-addr 127.0.0.1:8080] [-db file] [-api-key key] [-project 1] [-demo-events 100000]
//	    [-project-concurrency 3] [-project-runs-per-minute 240] [-project-runs-per-hour 2400] [-global-concurrency 64]
//	    [-cache-bytes 67108864] [-mcp-stdio]
//
// It serves the editor page (package editor) at /, the API under /api/ and
// Prometheus metrics at /metrics (behind their own key, or on -metrics-addr),
// and the endpoints as MCP tools at /mcp (or on stdin/stdout with -mcp-stdio).
// On start it prints the editor's address,
// an API key and a curl session to paste into a shell. It keeps answers in
// a result cache in memory, logs runs in the store, and refreshes
// materialized endpoints with the Service's scheduler.
// SIGINT or SIGTERM shuts it down gracefully.
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}
