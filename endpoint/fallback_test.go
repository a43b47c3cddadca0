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
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	env := endpointtest.New(t, endpointtest.WithDemoEvents(300), endpointtest.WithConfig(func(c *endpoint.Config) {
		x.Executor = c.Executor
		c.Executor = x
		c.Observer = endpoint.MultiObserver(rec, m)
	}))
	ctx := context.Background()
	v, err := env.Service.CreateVariable(ctx, env.Project, variable.Variable{Name: "Event", Type: variable.String})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	q := endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT event, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY event",
		Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID}}}
	_, err = env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "m", Query: &q, IsMaterialized: true})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	req := endpoint.RunRequest{Variables: map[string]any{"event": "purchase"}, Refresh: endpoint.RefreshForce}

	// Before the first refresh: inline, with the reason.
	res, err := env.Service.Run(ctx, env.Project, "m", req)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if res.EndpointMaterialized {
		t.Errorf("res.EndpointMaterialized is true")
	}
	if s, sub := res.InlineReason, "no stored table is fresh"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
	if err := env.Service.Materialize(ctx, env.Project, "m"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	res, err = env.Service.Run(ctx, env.Project, "m", req)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if !res.EndpointMaterialized {
		t.Fatalf("res.EndpointMaterialized is false")
	}
	if v := res.InlineReason; !(v == "") {
		t.Errorf("the stored table answered: res.InlineReason = %v, want it empty", v)
	}
	want := res.Results

	x.fail.Store(true)
	res, err = env.Service.Run(endpoint.WithRequestID(ctx, "req-42"), env.Project, "m", req)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if res.EndpointMaterialized {
		t.Errorf("res.EndpointMaterialized is true")
	}
	if got, want := res.Results, want; !reflect.DeepEqual(got, want) {
		t.Errorf("inline answers the same: res.Results = %+v, want %+v", got, want)
	}
	if s, sub := res.InlineReason, "read of the stored table failed"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
	if s, sub := res.InlineReason, "Code"; strings.Contains(s, sub) {
		t.Errorf("no engine internals in the answer: %q contains %q", s, sub)
	}

	last := rec.runEvents()[len(rec.runEvents())-1]
	if got, want := last.RequestID, "req-42"; got != want {
		t.Errorf("last.RequestID = %q, want %q", got, want)
	}
	if err := last.ReadErr; err == nil || !strings.Contains(err.Error(), "Cannot convert string") {
		t.Errorf("error %v does not contain %q", err, "Cannot convert string")
	}
	if got, want := last.InlineReason, res.InlineReason; got != want {
		t.Errorf("last.InlineReason = %q, want %q", got, want)
	}
	n, err := testutil.GatherAndCount(reg, "endpointkit_stored_read_failures_total")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := n, 1; got != want {
		t.Fatalf("n = %v, want %v", got, want)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
	# HELP endpointkit_stored_read_failures_total Reads of a materialized endpoint's stored table the database refused; each run went inline.
	# TYPE endpointkit_stored_read_failures_total counter
	endpointkit_stored_read_failures_total 1
	`), "endpointkit_stored_read_failures_total"); err != nil {
		t.Errorf("counted once: unexpected error: %v", err)
	}

	ep, err := env.Service.Get(ctx, env.Project, "m")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if v := ep.Materialization.ReadError; v == "" {
		t.Errorf("the status shows the failed read: ep.Materialization.ReadError is empty")
	}
	if ep.Materialization.ReadFailedAt == nil {
		t.Errorf("ep.Materialization.ReadFailedAt is nil")
	}
	if s, sub := ep.Materialization.ReadError, "Code: 53"; strings.Contains(s, sub) {
		t.Errorf("%q contains %q", s, sub)
	}

	// A refresh builds a new table: the failure of the old one is gone.
	x.fail.Store(false)
	if err := env.Service.Materialize(ctx, env.Project, "m"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	ep, err = env.Service.Get(ctx, env.Project, "m")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if v := ep.Materialization.ReadError; !(v == "") {
		t.Errorf("ep.Materialization.ReadError = %v, want it empty", v)
	}
}
