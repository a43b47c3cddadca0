// Package metrics counts and times an endpoint.Service's runs and refreshes
// in Prometheus metrics: an endpoint.Observer on
// github.com/prometheus/client_golang. It is the only package of the
// library that imports client_golang, so that a host without Prometheus
// does not link it.
//
//	obs, err := metrics.New(registry)
//	svc, err := endpoint.New(endpoint.Config{..., Observer: endpoint.MultiObserver(endpoint.SlogObserver{}, obs)})
//	mux.Handle("GET /metrics", metrics.Handler(registry, metricsKey))
//
// Labels are the project and the endpoint's name; a run refused before its
// endpoint was found (an unknown name, a malformed request) is counted
// under the endpoint "" so that clients cannot add label values at will.
// Endpoint names are labels for the first DefaultMaxEndpoints (project,
// name) pairs seen (WithMaxEndpoints); later ones are counted under the
// endpoint OtherEndpoint, so that a project creating endpoints by the
// thousand cannot blow up the scrape.
//
// The metrics name every project's endpoints and traffic: serve them on a
// listener of their own, or behind a credential of their own (Handler).
package metrics

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/endpointkit/endpointkit/endpoint"
)

// DefaultMaxEndpoints is how many (project, endpoint name) pairs get
// series of their own unless WithMaxEndpoints says otherwise. Each pair
// makes up to about 50 series (statuses, cached or not, histogram
// buckets), so the default bounds the endpoints' share of a scrape near
// 25,000 series.
const DefaultMaxEndpoints = 500

// OtherEndpoint is the endpoint label of the runs and refreshes of the
// endpoints past the cap (WithMaxEndpoints). No endpoint name can start
// with "_", so it never stands for a real endpoint.
const OtherEndpoint = "_other"

// Option changes how New builds its Observer.
type Option func(*Observer)

// WithMaxEndpoints sets how many (project, endpoint name) pairs are
// labelled by name: the first n seen since the process started; the runs
// and refreshes of any later one are counted under OtherEndpoint. 0 keeps
// DefaultMaxEndpoints; a negative n labels every name (no cap).
func WithMaxEndpoints(n int) Option {
	return func(o *Observer) {
		if n != 0 {
			o.maxNames = n
		}
	}
}

// Observer is an endpoint.Observer that keeps Prometheus metrics:
//
//   - endpointkit_runs_total{project, endpoint, status, cached, materialized}
//   - endpointkit_run_errors_total{project, endpoint, code}
//   - endpointkit_run_duration_seconds{project, endpoint, cached} (histogram)
//   - endpointkit_cache_hits_total{project, endpoint}
//   - endpointkit_refreshes_total{project, endpoint, trigger, result}
//   - endpointkit_refresh_duration_seconds{project, endpoint} (histogram)
//   - endpointkit_run_log_errors_total
//   - endpointkit_stored_read_failures_total
//   - endpointkit_answers_not_cached_total (answers computed with the
//     result cache on and not kept: endpoint.RunEvent.CacheErr)
//   - endpointkit_edge_index_warnings_total{project, endpoint, result}
//   - endpointkit_unchecked_saves_total (queries saved although the engine
//     failed on a value while checking them: endpoint.SaveCheckEvent)
//
// Endpoint names past the cap (WithMaxEndpoints) are counted under the
// endpoint OtherEndpoint.
type Observer struct {
	runs, errors, hits, refreshes *prometheus.CounterVec
	edgeScans                     *prometheus.CounterVec
	latency, refreshTime          *prometheus.HistogramVec
	logErrors, readFailures       prometheus.Counter
	uncheckedSaves, notCached     prometheus.Counter

	// maxNames caps named; named holds the (project, name) pairs labelled
	// by name so far. known is named for reading without mu: a run of a
	// name already labelled takes no lock.
	maxNames int
	mu       sync.Mutex
	named    map[[2]string]struct{}
	known    sync.Map // [2]string -> struct{}

	// series holds a run's counter, histogram and hit counter by their
	// labels (runKey), so that a run finds them without hashing its
	// labels again; it holds no more entries than the metrics have series.
	series sync.Map // runKey -> *runSeries
}

// runKey is the labels of a run's series, the endpoint's already capped.
type runKey struct {
	project, name        string
	status               int
	cached, materialized bool
}

// runSeries is the series a run with one runKey counts in.
type runSeries struct {
	runs    prometheus.Counter
	latency prometheus.Observer
	hits    prometheus.Counter // nil unless cached
}

var (
	_ endpoint.Observer          = (*Observer)(nil)
	_ endpoint.SaveCheckObserver = (*Observer)(nil)
)

// New returns an Observer whose metrics are registered with reg.
func New(reg prometheus.Registerer, opts ...Option) (*Observer, error) {
	o := &Observer{maxNames: DefaultMaxEndpoints, named: map[[2]string]struct{}{}}
	for _, opt := range opts {
		opt(o)
	}
	o.newMetrics()
	for _, c := range []prometheus.Collector{o.runs, o.errors, o.hits, o.latency, o.refreshes, o.refreshTime, o.edgeScans, o.logErrors, o.readFailures, o.uncheckedSaves, o.notCached} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// label is the endpoint label of name in project: the name itself while
// the cap allows, OtherEndpoint past it.
func (o *Observer) label(project, name string) string {
	if name == "" || o.maxNames < 0 {
		return name
	}
	key := [2]string{project, name}
	if _, ok := o.known.Load(key); ok {
		return name
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.named[key]; ok {
		return name
	}
	if len(o.named) >= o.maxNames {
		return OtherEndpoint
	}
	o.named[key] = struct{}{}
	o.known.Store(key, struct{}{})
	return name
}

// runSeriesOf returns the series of a run with labels k, made on its
// first run.
func (o *Observer) runSeriesOf(k runKey) *runSeries {
	if s, ok := o.series.Load(k); ok {
		return s.(*runSeries)
	}
	cached := strconv.FormatBool(k.cached)
	s := &runSeries{
		runs:    o.runs.WithLabelValues(k.project, k.name, strconv.Itoa(k.status), cached, strconv.FormatBool(k.materialized)),
		latency: o.latency.WithLabelValues(k.project, k.name, cached),
	}
	if k.cached {
		s.hits = o.hits.WithLabelValues(k.project, k.name)
	}
	got, _ := o.series.LoadOrStore(k, s)
	return got.(*runSeries)
}

// newMetrics makes the Observer's metrics.
func (o *Observer) newMetrics() {
	o.runs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "endpointkit_runs_total", Help: "Endpoint runs, by HTTP status of the answer, cached or not, from the stored table or not.",
	}, []string{"project", "endpoint", "status", "cached", "materialized"})
	o.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "endpointkit_run_errors_total", Help: "Endpoint runs that failed, by error code.",
	}, []string{"project", "endpoint", "code"})
	o.hits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "endpointkit_cache_hits_total", Help: "Endpoint runs answered without a query (result cache or a shared identical run).",
	}, []string{"project", "endpoint"})
	o.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "endpointkit_run_duration_seconds", Help: "Duration of endpoint runs.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"project", "endpoint", "cached"})
	o.refreshes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "endpointkit_refreshes_total", Help: "Refreshes of materialized endpoints, by trigger and result (ok, failed).",
	}, []string{"project", "endpoint", "trigger", "result"})
	o.refreshTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "endpointkit_refresh_duration_seconds", Help: "Duration of refreshes of materialized endpoints.",
		Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
	}, []string{"project", "endpoint"})
	o.logErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "endpointkit_run_log_errors_total", Help: "Runs the run log failed to record: entries dropped from a full buffer, and background writes that failed.",
	})
	o.edgeScans = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "endpointkit_edge_index_warnings_total", Help: "Refreshes of materialized endpoints that found a read of the source beside the stored table (partial buckets, live tail) no index serves (not_used), or could not read the engine's plan of it (check_failed).",
	}, []string{"project", "endpoint", "result"})
	o.readFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "endpointkit_stored_read_failures_total", Help: "Reads of a materialized endpoint's stored table the database refused; each run went inline.",
	})
	o.notCached = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "endpointkit_answers_not_cached_total", Help: "Answers computed with the result cache on that were not kept in it: heavier than the most one may weigh, a value JSON cannot carry, or the cache failed (the Service's log says which).",
	})
	o.uncheckedSaves = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "endpointkit_unchecked_saves_total", Help: "Queries saved unchecked: the engine failed on a value while checking them (their runs answer the fault).",
	})
}

// ObserveSaveCheck implements endpoint.SaveCheckObserver: a query saved
// unchecked is counted.
func (o *Observer) ObserveSaveCheck(context.Context, endpoint.SaveCheckEvent) {
	o.uncheckedSaves.Inc()
}

// ObserveRun implements endpoint.Observer.
func (o *Observer) ObserveRun(_ context.Context, ev endpoint.RunEvent) {
	name := ev.Endpoint
	if ev.Version == 0 {
		name = ""
	}
	name = o.label(ev.Project, name)
	s := o.runSeriesOf(runKey{ev.Project, name, ev.Status, ev.Cached, ev.Materialized})
	s.runs.Inc()
	s.latency.Observe(ev.Duration.Seconds())
	if ev.Code != "" {
		o.errors.WithLabelValues(ev.Project, name, ev.Code).Inc()
	}
	if s.hits != nil {
		s.hits.Inc()
	}
	if ev.LogErr != nil {
		o.logErrors.Inc()
	}
	if ev.ReadErr != nil {
		o.readFailures.Inc()
	}
	if ev.CacheErr != nil {
		o.notCached.Inc()
	}
}

// ObserveRunLog implements endpoint.LogObserver: a failed background write
// of the run log counts as a run log error, as a dropped entry does.
func (o *Observer) ObserveRunLog(_ context.Context, ev endpoint.RunLogEvent) {
	if ev.Err != nil {
		o.logErrors.Inc()
	}
}

// ObserveRefresh implements endpoint.Observer.
func (o *Observer) ObserveRefresh(_ context.Context, ev endpoint.RefreshEvent) {
	result := "ok"
	if ev.Err != nil {
		result = "failed"
	}
	name := o.label(ev.Project, ev.Endpoint)
	o.refreshes.WithLabelValues(ev.Project, name, ev.Trigger, result).Inc()
	o.refreshTime.WithLabelValues(ev.Project, name).Observe(ev.Duration.Seconds())
	if ev.EdgeIndex == endpoint.EdgeIndexNotUsed || ev.EdgeIndex == endpoint.EdgeIndexCheckFailed {
		o.edgeScans.WithLabelValues(ev.Project, name, ev.EdgeIndex).Inc()
	}
}

// Handler serves the metrics of g (promhttp's text format) to requests
// that carry "Authorization: Bearer <key>", and answers any other 401: the
// metrics name every project's endpoints, so they need a credential of
// their own, which no API key or embed token opens. An empty key opens
// nothing. A host that serves metrics on a listener only its scraper
// reaches may use promhttp.HandlerFor directly instead.
func Handler(g prometheus.Gatherer, key string) http.Handler {
	want := sha256.Sum256([]byte(key))
	next := promhttp.HandlerFor(g, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		given, ok := strings.CutPrefix(auth, "Bearer ")
		got := sha256.Sum256([]byte(given))
		if !ok || key == "" || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"detail":"The metrics need their own key: send 'Authorization: Bearer <metrics key>'.","code":"unauthorized","attr":null}` + "\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
