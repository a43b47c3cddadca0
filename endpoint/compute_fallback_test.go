package endpoint_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
	"github.com/endpointkit/endpointkit/variable"
)

// storedReadFails fails every query that reads a stored table while fail
// is set, as a database refusing the read would (a type it cannot
// convert, ClickHouse's Code 53).
type storedReadFails struct {
	driver.Executor
	fail atomic.Bool
}

func (x *storedReadFails) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	if x.fail.Load() && strings.Contains(st.SQL(), "endpointkit_mat_") {
		return nil, errors.New("code: 53, message: Cannot convert string '2013-07-31 00:00:00' to type Date")
	}
	return x.Executor.Query(ctx, st, b)
}

// TestStoredReadFailureIsVisible: a materialized run whose read of the
// stored table fails answers inline, and says so and why in the answer
// (inline_reason); the Observer is told the database's error with the
// request id (logged as a warning, counted by package metrics), and the
// endpoint's materialization shows the failure. The run went inline
// without a word: endpoint_materialized false was the only sign.
func TestStoredReadFailureIsVisible(t *testing.T) {
	x := &storedReadFails{}
	rec := &recorder{}
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	require.NoError(t, err)
	env := endpointtest.New(t, endpointtest.WithDemoEvents(300), endpointtest.WithConfig(func(c *endpoint.Config) {
		x.Executor = c.Executor
		c.Executor = x
		c.Observer = endpoint.MultiObserver(rec, m)
	}))
	ctx := context.Background()
	v, err := env.Service.CreateVariable(ctx, env.Project, variable.Variable{Name: "Event", Type: variable.String})
	require.NoError(t, err)
	q := endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT event, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY event",
		Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID}}}
	_, err = env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "m", Query: &q, IsMaterialized: true})
	require.NoError(t, err)
	req := endpoint.RunRequest{Variables: map[string]any{"event": "purchase"}, Refresh: endpoint.RefreshForce}

	// Before the first refresh: inline, with the reason.
	res, err := env.Service.Run(ctx, env.Project, "m", req)
	require.NoError(t, err)
	assert.False(t, res.EndpointMaterialized, "res.EndpointMaterialized is true")
	assert.Contains(t, res.InlineReason, "no stored table is fresh")
	require.NoError(t, env.Service.Materialize(ctx, env.Project, "m"))
	res, err = env.Service.Run(ctx, env.Project, "m", req)
	require.NoError(t, err)
	require.True(t, res.EndpointMaterialized, "res.EndpointMaterialized is false")
	if v := res.InlineReason; !(v == "") {
		t.Errorf("the stored table answered: res.InlineReason = %v, want it empty", v)
	}
	want := res.Results

	x.fail.Store(true)
	res, err = env.Service.Run(endpoint.WithRequestID(ctx, "req-42"), env.Project, "m", req)
	require.NoError(t, err)
	assert.False(t, res.EndpointMaterialized, "res.EndpointMaterialized is true")
	if got, want := res.Results, want; !reflect.DeepEqual(got, want) {
		t.Errorf("inline answers the same: res.Results = %+v, want %+v", got, want)
	}
	assert.Contains(t, res.InlineReason, "read of the stored table failed")
	assert.NotContains(t, res.InlineReason, "Code", "no engine internals in the answer")

	last := rec.runEvents()[len(rec.runEvents())-1]
	assert.Equal(t, "req-42", last.RequestID)
	if err := last.ReadErr; err == nil || !strings.Contains(err.Error(), "Cannot convert string") {
		t.Errorf("error %v does not contain %q", err, "Cannot convert string")
	}
	assert.Equal(t, res.InlineReason, last.InlineReason)
	n, err := testutil.GatherAndCount(reg, "endpointkit_stored_read_failures_total")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
	# HELP endpointkit_stored_read_failures_total Reads of a materialized endpoint's stored table the database refused; each run went inline.
	# TYPE endpointkit_stored_read_failures_total counter
	endpointkit_stored_read_failures_total 1
	`), "endpointkit_stored_read_failures_total"), "counted once")

	ep, err := env.Service.Get(ctx, env.Project, "m")
	require.NoError(t, err)
	if v := ep.Materialization.ReadError; v == "" {
		t.Errorf("the status shows the failed read: ep.Materialization.ReadError is empty")
	}
	assert.NotNil(t, ep.Materialization.ReadFailedAt, "ep.Materialization.ReadFailedAt is nil")
	assert.NotContains(t, ep.Materialization.ReadError, "Code: 53")

	// A refresh builds a new table: the failure of the old one is gone.
	x.fail.Store(false)
	require.NoError(t, env.Service.Materialize(ctx, env.Project, "m"))
	ep, err = env.Service.Get(ctx, env.Project, "m")
	require.NoError(t, err)
	if v := ep.Materialization.ReadError; !(v == "") {
		t.Errorf("ep.Materialization.ReadError = %v, want it empty", v)
	}
}
