package endpoint_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/variable"
)

// recordReads counts the reads of an endpoint's record.
type recordReads struct {
	driver.Store
	gets atomic.Int64
}

func (s *recordReads) Get(ctx context.Context, project, name string) (driver.Endpoint, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, project, name)
}

// handoffEnv is a Service that reads an endpoint's record on every run
// (RecheckInterval negative), with the SQL endpoint "count" of one
// string variable, and the count of the record's reads.
func handoffEnv(t *testing.T) (*endpoint.Service, *recordReads) {
	t.Helper()
	store := &recordReads{}
	env := endpointtest.New(t, endpointtest.WithDemoEvents(100), endpointtest.WithConfig(func(cfg *endpoint.Config) {
		cfg.RecheckInterval = -1
		store.Store = cfg.Endpoints
		cfg.Endpoints = store
	}))
	svc := env.Service
	ctx := context.Background()
	_, err := svc.CreateVariable(ctx, "1", variable.Variable{ID: "6f1c2f8e-3a4b-4c5d-8e9f-0a1b2c3d4e5f", Name: "name", Type: variable.String})
	require.NoError(t, err)
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "count", Query: &endpoint.Query{
		Kind: endpoint.KindSQL, SQL: "SELECT count(*) AS n FROM events WHERE event = {variables.name}",
		Variables: map[string]endpoint.VariableRef{"6f1c2f8e-3a4b-4c5d-8e9f-0a1b2c3d4e5f": {VariableID: "6f1c2f8e-3a4b-4c5d-8e9f-0a1b2c3d4e5f", CodeName: "name"}},
	}})
	require.NoError(t, err)
	return svc, store
}

// TestAdmitHandsTheRunOver: the Run given the request Admit filled in
// goes on from Admit's work: the endpoint's record is read once for both,
// not once by each; and the answer is the one a run alone gives.
func TestAdmitHandsTheRunOver(t *testing.T) {
	svc, store := handoffEnv(t)
	ctx := context.Background()
	alone, err := svc.Run(ctx, "1", "count", endpoint.RunRequest{Variables: map[string]any{"name": "purchase"}})
	require.NoError(t, err)

	req := endpoint.RunRequest{Variables: map[string]any{"name": "purchase"}}
	before := store.gets.Load()
	adm, err := svc.Admit(ctx, endpoint.Budgets{}, endpoint.Caller{Project: "1"}, endpoint.Ask{Act: endpoint.ActRun, Endpoint: "count", Run: &req})
	require.NoError(t, err)
	defer adm.Release()
	res, err := svc.Run(ctx, "1", "count", req)
	require.NoError(t, err)
	assert.Equal(t, int64(1), store.gets.Load()-before, "Admit and Run read the record once between them")
	assert.Equal(t, alone.Results, res.Results)
	assert.Equal(t, alone.Columns, res.Columns)
}

// TestAdmitHandoffOnlyForTheSameRun: what Admit prepared serves one run
// of the same request, project and endpoint only: a second run of the
// request, a request whose values changed, and a run of another endpoint
// prepare anew, and answer for what they ask.
func TestAdmitHandoffOnlyForTheSameRun(t *testing.T) {
	svc, store := handoffEnv(t)
	ctx := context.Background()
	admit := func(req *endpoint.RunRequest) {
		t.Helper()
		adm, err := svc.Admit(ctx, endpoint.Budgets{}, endpoint.Caller{Project: "1"}, endpoint.Ask{Act: endpoint.ActRun, Endpoint: "count", Run: req})
		require.NoError(t, err)
		adm.Release()
	}
	count := func(req endpoint.RunRequest) int64 {
		t.Helper()
		res, err := svc.Run(ctx, "1", "count", req)
		require.NoError(t, err)
		return res.Results.([][]any)[0][0].(int64)
	}
	purchases := count(endpoint.RunRequest{Variables: map[string]any{"name": "purchase"}})
	signups := count(endpoint.RunRequest{Variables: map[string]any{"name": "signed_up"}})
	require.NotEqual(t, purchases, signups)

	req := endpoint.RunRequest{Variables: map[string]any{"name": "purchase"}}
	admit(&req)
	assert.Equal(t, purchases, count(req))
	before := store.gets.Load()
	assert.Equal(t, purchases, count(req), "a second run of the request")
	assert.Equal(t, int64(1), store.gets.Load()-before, "the second run reads the record itself")

	admit(&req)
	changed := req
	changed.Variables = map[string]any{"name": "signed_up"}
	assert.Equal(t, signups, count(changed), "a request whose values changed after Admit")

	admit(&req)
	_, err := svc.Run(ctx, "1", "nope", req)
	require.Error(t, err, "a run of another endpoint is that endpoint's")
	assert.Equal(t, 404, endpoint.StatusOf(err))
}
