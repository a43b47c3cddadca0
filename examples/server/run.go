package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/budget/redisbudget"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/httpapi/parquet"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
	"github.com/endpointkit/endpointkit/examples/server/setup"
)

// shutdownTimeout bounds how long in-flight requests may take to finish once
// a shutdown is asked for.
const shutdownTimeout = 10 * time.Second

// scheduleInterval is how often the scheduler looks for materialized
// endpoints that are due; a saved endpoint is refreshed at once anyway.
const scheduleInterval = 30 * time.Second

// metricsHandler serves the Prometheus metrics of registry at /metrics
// (routeMetrics), on an address of their own.
func metricsHandler(cfg config, registry *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	routeMetrics(mux, cfg, registry)
	return mux
}

// routeMetrics serves the Prometheus metrics of registry at GET /metrics
// of mux: behind the metrics key when there is one (always on the API's
// address), else openly.
func routeMetrics(mux *http.ServeMux, cfg config, registry *prometheus.Registry) {
	if cfg.metricsKey != "" {
		mux.Handle("GET /metrics", metrics.Handler(registry, cfg.metricsKey))
	} else {
		mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	}
}

// serveMetrics serves the metrics of registry on cfg.metricsAddr until
// ctx is done, and returns the address it listens on; the returned wait
// shuts it down and waits for it.
func serveMetrics(ctx context.Context, cfg config, registry *prometheus.Registry) (string, func(), error) {
	ln, err := net.Listen("tcp", cfg.metricsAddr)
	if err != nil {
		return "", nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	srv := &http.Server{Handler: metricsHandler(cfg, registry), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	return ln.Addr().String(), serveAside(ctx, srv, ln), nil
}

// serveAside serves srv on ln in a goroutine of its own, beside the API,
// and returns what stops it: a graceful shutdown (at most shutdownTimeout,
// even once ctx is done) that returns once srv has stopped.
func serveAside(ctx context.Context, srv *http.Server, ln net.Listener) (stop func()) {
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
	}
}

// run is the whole server: it parses args, opens the database, loads demo
// data, serves the API and prints how to use it to stdout, until ctx is
// done; then it shuts down gracefully and returns nil.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	proto := stdout // the MCP stream with -mcp-stdio: nothing else is printed there
	if cfg.mcpStdio {
		stdout = stderr
	}
	keys, err := newKeyring(cfg)
	if err != nil {
		return err
	}
	b, err := openBackend(cfg)
	if err != nil {
		return err
	}
	defer b.close()

	// Metrics of runs and refreshes for /metrics, beside a log of them.
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	if cfg.mcpStdio {
		return runMCPStdio(ctx, cfg, b, registry, logger, stderr, proto)
	}
	if cfg.demoEvents > 0 {
		fmt.Fprintf(stdout, "Preparing %d demo events...\n", cfg.demoEvents)
	}
	count, loaded, err := loadEvents(ctx, b, cfg.demoEvents, cfg.projects(), cfg.demoEnd)
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while loading: a stop asked for, not a failure
		}
		return err
	}
	svc, err := newService(ctx, cfg, b, registry, logger, stderr)
	if err != nil {
		return err
	}
	// Materialized endpoints are refreshed in the background until the
	// server stops; the scheduler is waited for, so no refresh outlives the
	// databases.
	schedCtx, stopSchedule := context.WithCancel(ctx)
	scheduled := make(chan struct{})
	go func() { defer close(scheduled); _ = svc.Schedule(schedCtx) }()
	defer func() { stopSchedule(); <-scheduled }()
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	counter, closeCounter, err := openBudgets(cfg, b, registry, logger)
	if err != nil {
		ln.Close()
		return err
	}
	defer closeCounter()
	handler, err := newHandler(cfg, svc, keys, b.store.Keys(), counter, registry, logger)
	if err != nil {
		return err
	}
	metricsURL := "http://" + ln.Addr().String() + "/metrics"
	if cfg.metricsAddr != "" {
		addr, stopMetrics, err := serveMetrics(ctx, cfg, registry)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopMetrics()
		metricsURL = "http://" + addr + "/metrics"
	}
	if cfg.pprofAddr != "" {
		addr, stopPprof, err := servePprof(ctx, cfg.pprofAddr)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopPprof()
		fmt.Fprintf(stdout, "Go profiles on http://%s/debug/pprof/\n", addr)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      max(cfg.runTimeout, 0) + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	base := "http://" + ln.Addr().String()
	printBanner(stdout, cfg, b.engine, base, metricsURL, count, loaded)
	printEditor(stdout, base)
	printEmbed(stdout, cfg, base)
	printSession(stdout, cfg, base)
	err = serveUntilDone(ctx, srv, served, stdout)
	// The run log entries still queued are written before the databases
	// close.
	cctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if cerr := svc.Close(cctx); cerr != nil && err == nil {
		err = fmt.Errorf("closing the service: %w", cerr)
	}
	return err
}

// runMCPStdio serves the MCP tools on stdin and proto at once, and loads
// the demo data in the background meanwhile (the handshake never waits for
// it; a tool call that reads the events does, see demoLoad.gate). It
// prints "Loading N demo events in the background..." and then "Demo data
// loaded: ..." to stderr. The scheduler starts once the load is over, so
// that no refresh stores half the events.
func runMCPStdio(ctx context.Context, cfg config, b *backend, registry *prometheus.Registry, logger *slog.Logger, stderr, proto io.Writer) error {
	svc, err := newService(ctx, cfg, b, registry, logger, stderr)
	if err != nil {
		return err
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	schedCtx, stopSchedule := context.WithCancel(ctx)
	scheduled := make(chan struct{})
	started := time.Now()
	if cfg.demoEvents > 0 {
		fmt.Fprintf(stderr, "Loading %d demo events in the background...\n", cfg.demoEvents)
	}
	load := startDemoLoad(cfg.demoEvents, func() error {
		count, loaded, err := loadEvents(loadCtx, b, cfg.demoEvents, cfg.projects(), cfg.demoEnd)
		switch {
		case err != nil && loadCtx.Err() != nil:
			err = nil // interrupted by a stop: not a failure
		case err != nil:
			logger.Error("demo: loading the demo data failed", "error", err)
		case loaded:
			fmt.Fprintf(stderr, "Demo data loaded: %d events in %s\n", count, time.Since(started).Round(time.Millisecond))
		default:
			fmt.Fprintf(stderr, "Demo data loaded: %d events already in the database\n", count)
		}
		if err == nil && loadCtx.Err() == nil {
			go func() { defer close(scheduled); _ = svc.Schedule(schedCtx) }()
		} else {
			close(scheduled)
		}
		return err
	})
	// The load and the scheduler are stopped and waited for, so neither
	// outlives the databases.
	defer func() { stopLoad(); <-load.done; stopSchedule(); <-scheduled }()
	return serveMCPStdio(ctx, cfg, svc, load, logger, proto)
}

// newKeyring holds the API keys of cfg, each for its project.
func newKeyring(cfg config) (*httpapi.Keyring, error) {
	keys := httpapi.NewKeyring()
	if cfg.keySource != keyFromGrant {
		if err := keys.Add(cfg.apiKey, cfg.project); err != nil {
			return nil, fmt.Errorf("-api-key: %w", err)
		}
	}
	for _, g := range cfg.grants {
		if err := keys.Add(g.key, g.project); err != nil {
			return nil, fmt.Errorf("-api-key for project %s: %w", g.project, err)
		}
	}
	return keys, nil
}

// newService migrates the store of b and returns the Service over it, with
// its metrics in registry, after dropping the tables that serve nothing.
func newService(ctx context.Context, cfg config, b *backend, registry *prometheus.Registry, logger *slog.Logger, stderr io.Writer) (*endpoint.Service, error) {
	store := b.store
	if err := store.Migrate(ctx); err != nil {
		return nil, err
	}
	counters, err := metrics.New(registry, metrics.WithMaxEndpoints(cfg.metricsMaxEndpoints))
	if err != nil {
		return nil, err
	}
	opts := setup.Options{
		RunTimeout:           cfg.runTimeout,
		RefreshTimeout:       cfg.refreshTimeout,
		MaxRefreshes:         cfg.maxRefreshes,
		MaxMaterializedBytes: cfg.maxMaterializedBytes,
		Observer:             endpoint.MultiObserver(endpoint.SlogObserver{Logger: logger}, counters),
		ScheduleInterval:     scheduleInterval,
	}
	if cfg.cacheBytes > 0 {
		opts.ResultCache = memstore.NewResultCache(cfg.cacheBytes)
		opts.MaxCachedAnswerBytes = cfg.maxCachedAnswerBytes
	}
	svcCfg := setup.ServiceConfig(store, b.exec, opts)
	svc, err := endpoint.New(svcCfg)
	if err != nil {
		return nil, err
	}
	// Tables a stopped process left mid-refresh, or of endpoints deleted
	// while their drop could not run, serve nothing: drop them.
	if n, err := svc.RemoveOrphans(ctx); err != nil {
		fmt.Fprintf(stderr, "materialization: removing orphaned tables: %v\n", err)
	} else if n > 0 {
		fmt.Fprintf(stderr, "materialization: dropped %d orphaned table(s)\n", n)
	}
	return svc, nil
}

// newHandler is the server's handler: the API behind keys and the run
// limits of cfg, the editor page, and the metrics of registry behind the
// metrics key, unless they have an address of their own. The stored API
// keys (POST .../keys/ with an -api-key key) are kept in keyStore.
func newHandler(cfg config, svc *endpoint.Service, keys *httpapi.Keyring, keyStore driver.KeyStore, counter budget.Counter, registry *prometheus.Registry, logger *slog.Logger) (http.Handler, error) {
	limits := cfg.limits
	limits.Counter, limits.Logger = counter, logger
	limiter, err := limit.New(limits)
	if err != nil {
		return nil, err
	}
	stored, err := apikey.New(apikey.Config{Store: keyStore, Logger: logger, Counter: counter})
	if err != nil {
		return nil, err
	}
	tokenKeys := &embed.StaticKeys{}
	if err := tokenKeys.Add("", "default", []byte(cfg.embedSecret)); err != nil {
		return nil, fmt.Errorf("-embed-secret: %w", err)
	}
	signer := &embed.Signer{Keys: tokenKeys}
	api := httpapi.New(svc, keys, httpapi.WithEmbedTokens(signer),
		httpapi.WithLimiter(limiter),
		httpapi.WithKeys(stored),
		httpapi.WithLogger(logger),
		httpapi.WithBaseURL(apiBaseURL(cfg.addr)), // the OpenAPI documents' servers entry
		httpapi.WithFormat(parquet.Format{}))      // answers in Parquet too: {"format": "parquet"}
	// One mux routes every request: each mux a request goes through
	// matches its path again, and a run is routed once more by the API.
	mux := http.NewServeMux()
	mux.Handle("/api/", api)
	routeMCP(mux, svc, keys, stored, signer, limiter, cfg, logger)
	routeEditor(mux, cfg)
	if cfg.metricsAddr == "" {
		routeMetrics(mux, cfg, registry)
	}
	return mux, nil
}

// openBudgets returns the counter of every run budget (keys', projects',
// embed tokens') that -budgets names, guarded as -budgets-fail-open says,
// its failures counted in registry, and the function that closes it.
func openBudgets(cfg config, b *backend, registry *prometheus.Registry, logger *slog.Logger) (budget.Counter, func(), error) {
	var c budget.Counter
	closer := func() {}
	switch cfg.budgets {
	case budgetsStore:
		c = b.store.Counter().WithLogger(logger)
	case budgetsRedis:
		opts, err := redis.ParseURL(cfg.redisURL)
		if err != nil {
			return nil, nil, fmt.Errorf("-redis: %w", err)
		}
		rdb := redis.NewClient(opts)
		c, closer = redisbudget.New(rdb, ""), func() { _ = rdb.Close() }
	default:
		c = budget.NewMemory(budget.MemoryConfig{})
	}
	g := budget.NewGuard(c, budget.GuardConfig{FailOpen: cfg.budgetsFailOpen, Logger: logger})
	err := registry.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "endpointkit_budget_counter_failures_total",
		Help: "Runs whose budget could not be counted because the budget store failed (refused, or admitted with -budgets-fail-open).",
	}, func() float64 { return float64(g.Failures()) }))
	if err != nil {
		closer()
		return nil, nil, err
	}
	return g, closer, nil
}

// serveUntilDone waits for srv to fail or ctx to be done, then shuts srv
// down gracefully; served carries what srv.Serve returned.
func serveUntilDone(ctx context.Context, srv *http.Server, served <-chan error, stdout io.Writer) error {
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "Shutting down...")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// apiBaseURL is the URL a client on this machine reaches the API at when it
// listens on addr: a host of every interface ("", 0.0.0.0, ::) is
// localhost.
func apiBaseURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
