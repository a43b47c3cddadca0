package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// pprofHandler serves Go's profiles under /debug/pprof/, on a mux of its
// own. (Importing net/http/pprof also registers them on
// http.DefaultServeMux, which this server never serves: its API and
// /metrics have muxes of their own.)
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return mux
}

// servePprof serves Go's profiles on addr (-pprof-addr) until the returned
// stop is called, and returns the address it listens on. A CPU profile or
// trace is asked for a number of seconds, so its writes have no time limit.
func servePprof(ctx context.Context, addr string) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("-pprof-addr: %w", err)
	}
	srv := &http.Server{Handler: pprofHandler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	return ln.Addr().String(), serveAside(ctx, srv, ln), nil
}
