package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
)

// TestUncheckedSavesCounted: each query saved unchecked (the engine failed
// on a value while checking it) is counted, so that the fallback is
// visible to the operator, not only in a log line.
func TestUncheckedSavesCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := metrics.New(reg)
	require.NoError(t, err)
	var obs endpoint.Observer = o
	so, ok := obs.(endpoint.SaveCheckObserver)
	require.True(t, ok, "the metrics Observer is told of unchecked saves")
	ev := endpoint.SaveCheckEvent{Project: "1", Endpoint: "zero", Err: errors.New("division by zero")}
	so.ObserveSaveCheck(context.Background(), ev)
	endpoint.MultiObserver(endpoint.SlogObserver{}, o).(endpoint.SaveCheckObserver).ObserveSaveCheck(context.Background(), ev)
	n, err := testutil.GatherAndCount(reg, "endpointkit_unchecked_saves_total")
	require.NoError(t, err)
	assert.Equal(t, 1, n, "one series")
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var got float64
	for _, mf := range mfs {
		if mf.GetName() == "endpointkit_unchecked_saves_total" {
			got = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	assert.Equal(t, float64(2), got, "both saves counted, the second through MultiObserver")
}

// TestAnswersNotCachedCounted: an answer computed with the result cache on
// and not kept (RunEvent.CacheErr) is counted, so that an operator sees
// exports too heavy for the cache, not only a log line; an answer kept is
// not.
func TestAnswersNotCachedCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := metrics.New(reg)
	require.NoError(t, err)
	ctx := context.Background()
	o.ObserveRun(ctx, endpoint.RunEvent{Project: "1", Endpoint: "export", Version: 1, Status: 200,
		CacheErr: fmt.Errorf("%w: too heavy", endpoint.ErrAnswerNotCached)})
	o.ObserveRun(ctx, endpoint.RunEvent{Project: "1", Endpoint: "daily", Version: 1, Status: 200})
	assert.Equal(t, float64(1), counterNamed(t, reg, "endpointkit_answers_not_cached_total"))
}

// counterNamed is the value of the counter without labels named name, as
// reg gathers it.
func counterNamed(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			require.Len(t, mf.GetMetric(), 1)
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
