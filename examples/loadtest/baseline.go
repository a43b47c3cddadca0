package main

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

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
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" || *key == "" {
		fmt.Fprintln(os.Stderr, "loadtest baseline: -db and -key are required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serveBaseline(ctx, *addr, *path, *key); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest baseline:", err)
		return 1
	}
	return 0
}

// serveBaseline opens the file at path as examples/server opens its data
// file (WAL, a busy timeout, immediate transactions) and serves
// baselineHandler on addr until ctx is done, printing baselineBanner and
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
	srv := &http.Server{Handler: baselineHandler(db, key), ReadHeaderTimeout: 10 * time.Second,
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

// baselineHandler is what a host would write by hand for the count and
// select1 endpoints: one route per query, a bearer key compared in
// constant time, the body decoded into a struct, the variable checked for
// its type, the query run with the value bound, and the rows encoded as
// JSON. It is baselineHandler of endpoint/httpapi's bench_test.go.
func baselineHandler(db *sql.DB, key string) http.Handler {
	type runBody struct {
		Variables map[string]any `json:"variables"`
	}
	type answer struct {
		Columns []string `json:"columns"`
		Results [][]any  `json:"results"`
	}
	serve := func(query string, params ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(tok), []byte(key)) != 1 || r.PathValue("project") != project {
				http.Error(w, `{"detail": "unauthorized"}`, http.StatusUnauthorized)
				return
			}
			var body runBody
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				http.Error(w, `{"detail": "bad body"}`, http.StatusBadRequest)
				return
			}
			args := make([]any, len(params))
			for i, p := range params {
				s, ok := body.Variables[p].(string)
				if !ok {
					http.Error(w, `{"detail": "bad variable"}`, http.StatusBadRequest)
					return
				}
				args[i] = s
			}
			rows, err := db.QueryContext(r.Context(), query, args...)
			if err != nil {
				http.Error(w, `{"detail": "query failed"}`, http.StatusBadGateway)
				return
			}
			defer rows.Close()
			cols, err := rows.Columns()
			if err != nil {
				http.Error(w, `{"detail": "query failed"}`, http.StatusBadGateway)
				return
			}
			out := answer{Columns: cols, Results: [][]any{}}
			for rows.Next() {
				row := make([]any, len(cols))
				dest := make([]any, len(cols))
				for i := range row {
					dest[i] = &row[i]
				}
				if err := rows.Scan(dest...); err != nil {
					http.Error(w, `{"detail": "query failed"}`, http.StatusBadGateway)
					return
				}
				out.Results = append(out.Results, row)
			}
			if rows.Err() != nil {
				http.Error(w, `{"detail": "query failed"}`, http.StatusBadGateway)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(out) //nolint:errcheck // the client went away
		}
	}
	mux := http.NewServeMux()
	// The count is the project's, as the library's scoped count is.
	mux.Handle("POST /api/projects/{project}/endpoints/count/run", serve("SELECT count(*) AS n FROM events WHERE project_id = '1' AND event = ?", "name"))
	mux.Handle("POST /api/projects/{project}/endpoints/select1/run", serve("SELECT 1"))
	return mux
}
