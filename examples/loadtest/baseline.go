package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/endpointkit/endpointkit/examples/demo"
	_ "modernc.org/sqlite" // the "sqlite" driver
)

// baselineCommand is the first argument that makes this binary the
// baseline server instead of the load test.
const baselineCommand = "baseline"

// baselineBanner starts the line the baseline prints once it listens,
// followed by its base URL.
const baselineBanner = "baseline server on "

// baselineMain serves the hand-written handler until SIGINT or SIGTERM:
//
//	loadtest baseline -db FILE -key KEY [-addr 127.0.0.1:0]
//
// It returns the process's exit code.
func baselineMain(args []string) int {
	fs := flag.NewFlagSet("loadtest baseline", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	path := fs.String("db", "", "the SQLite file of the events (required)")
	key := fs.String("key", "", "the API key of project 1 (required)")
	pprofAddr := fs.String("pprof-addr", "", "serve Go's profiles (/debug/pprof/) on this address, for a profile of the handler under the load (off when empty)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" || *key == "" {
		fmt.Fprintln(os.Stderr, "loadtest baseline: -db and -key are required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *pprofAddr != "" {
		stopProfiles, err := serveProfiles(*pprofAddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadtest baseline:", err)
			return 1
		}
		defer stopProfiles()
	}
	if err := serveBaseline(ctx, *addr, *path, *key); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest baseline:", err)
		return 1
	}
	return 0
}

// serveProfiles serves Go's profiles under /debug/pprof/ on addr, on a
// mux of its own, until the returned stop is called.
func serveProfiles(addr string) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-pprof-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	return func() { srv.Close() }, nil
}

// serveBaseline opens the file at path as examples/server opens its data
// file (WAL, a busy timeout, immediate transactions) and serves
// demo.HandWrittenHandler on addr until ctx is done, printing baselineBanner and
// its URL to stdout once it listens.
func serveBaseline(ctx context.Context, addr, path, key string) error {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// The example server's timeouts.
	srv := &http.Server{Handler: demo.HandWrittenHandler(db, key), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("%shttp://%s\n", baselineBanner, ln.Addr())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
