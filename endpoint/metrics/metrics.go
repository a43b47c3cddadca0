// Package metrics counts and times an endpoint.Service's runs and refreshes
// in Prometheus metrics: an endpoint.Observer on
// github.com/prometheus/client_golang. It is the only package of the
// library that imports client_golang, so that a host without Prometheus
// does not link it.
//
//	obs, err := metrics.New(prometheus.DefaultRegisterer)
//	svc, err := endpoint.New(endpoint.Config{..., Observer: endpoint.MultiObserver(endpoint.SlogObserver{}, obs)})
//	mux.Handle("/metrics", promhttp.Handler())
//
// Labels are the project and the endpoint's name; a run refused before its
// endpoint was found (an unknown name, a malformed request) is counted
// under the endpoint "" so that clients cannot add label values at will.
package metrics

import (
	"context"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/endpointkit/endpointkit/endpoint"
)

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
type Observer struct {
	runs, errors, hits, refreshes *prometheus.CounterVec
	latency, refreshTime          *prometheus.HistogramVec
	logErrors, readFailures       prometheus.Counter
}

var _ endpoint.Observer = (*Observer)(nil)

// New returns an Observer whose metrics are registered with reg.
func New(reg prometheus.Registerer) (*Observer, error) {
	o := &Observer{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "endpointkit_runs_total", Help: "Endpoint runs, by HTTP status of the answer, cached or not, from the stored table or not.",
		}, []string{"project", "endpoint", "status", "cached", "materialized"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "endpointkit_run_errors_total", Help: "Endpoint runs that failed, by error code.",
		}, []string{"project", "endpoint", "code"}),
		hits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "endpointkit_cache_hits_total", Help: "Endpoint runs answered without a query (result cache or a shared identical run).",
		}, []string{"project", "endpoint"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "endpointkit_run_duration_seconds", Help: "Duration of endpoint runs.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"project", "endpoint", "cached"}),
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "endpointkit_refreshes_total", Help: "Refreshes of materialized endpoints, by trigger and result (ok, failed).",
		}, []string{"project", "endpoint", "trigger", "result"}),
		refreshTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "endpointkit_refresh_duration_seconds", Help: "Duration of refreshes of materialized endpoints.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}, []string{"project", "endpoint"}),
		logErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "endpointkit_run_log_errors_total", Help: "Runs the run log failed to record: entries dropped from a full buffer, and background writes that failed.",
		}),
		readFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "endpointkit_stored_read_failures_total", Help: "Reads of a materialized endpoint's stored table the database refused; each run went inline.",
		}),
	}
	for _, c := range []prometheus.Collector{o.runs, o.errors, o.hits, o.latency, o.refreshes, o.refreshTime, o.logErrors, o.readFailures} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// ObserveRun implements endpoint.Observer.
func (o *Observer) ObserveRun(_ context.Context, ev endpoint.RunEvent) {
	name := ev.Endpoint
	if ev.Version == 0 {
		name = ""
	}
	cached := strconv.FormatBool(ev.Cached)
	o.runs.WithLabelValues(ev.Project, name, strconv.Itoa(ev.Status), cached, strconv.FormatBool(ev.Materialized)).Inc()
	o.latency.WithLabelValues(ev.Project, name, cached).Observe(ev.Duration.Seconds())
	if ev.Code != "" {
		o.errors.WithLabelValues(ev.Project, name, ev.Code).Inc()
	}
	if ev.Cached {
		o.hits.WithLabelValues(ev.Project, name).Inc()
	}
	if ev.LogErr != nil {
		o.logErrors.Inc()
	}
	if ev.ReadErr != nil {
		o.readFailures.Inc()
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
	o.refreshes.WithLabelValues(ev.Project, ev.Endpoint, ev.Trigger, result).Inc()
	o.refreshTime.WithLabelValues(ev.Project, ev.Endpoint).Observe(ev.Duration.Seconds())
}
