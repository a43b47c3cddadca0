package metrics_test

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
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

// TestUnreadSplicesCounted: a query the tenant scope confined by splicing
// its text (the SQL tree could not read it) is counted in the metrics, so
// that the fallback is visible to the operator.
func TestUnreadSplicesCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := metrics.New(reg)
	require.NoError(t, err)
	value := func() float64 {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == "endpointkit_sql_unread_splices_total" {
				return mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
		t.Fatal("endpointkit_sql_unread_splices_total is not exported")
		return 0
	}
	before := value()
	rules := &access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}
	// Text the checker accepts and the tree cannot read (no engine runs
	// it): confined by the splice.
	_, err = access.ConfineFor(engine.SQLite.Lexical(), "SELECT event FROM events WHERE", rules, "tenant")
	require.NoError(t, err)
	assert.Equal(t, before+1, value())
}
