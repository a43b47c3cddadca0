package apikey_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/stretchr/testify/require"
)

// TestKeysShareACounter: two Keys (two processes) on one counter store
// allow a key its budget once between them; each counted its own before.
func TestKeysShareACounter(t *testing.T) {
	store := memstore.NewKeyStore()
	shared := budget.NewMemory(budget.MemoryConfig{})
	a, err := apikey.New(apikey.Config{Store: store, Counter: shared})
	require.NoError(t, err)
	b, err := apikey.New(apikey.Config{Store: store, Counter: shared})
	require.NoError(t, err)
	key, _, err := a.Create(context.Background(), "p", apikey.CreateRequest{Name: "k", Scopes: []string{apikey.ScopeEndpointRead}, RunsPerMinute: 2})
	require.NoError(t, err)
	require.NoError(t, a.Admit(key, false))
	require.NoError(t, b.Admit(key, false))
	for _, k := range []*apikey.Keys{a, b} {
		err := k.Admit(key, false)
		var e *endpoint.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, http.StatusTooManyRequests, e.Status)
		require.Equal(t, apikey.LimitRunsPerMinute, e.Limit)
	}
	// The materialized budget is another count.
	require.NoError(t, b.Admit(key, true))
}

// brokenCounter fails every Take, as a store that is down.
type brokenCounter struct{ calls int }

func (c *brokenCounter) Take(context.Context, string, int64, time.Duration) (budget.Decision, error) {
	c.calls++
	return budget.Decision{}, errors.New("dial tcp 127.0.0.1:6379: connection refused")
}

// TestKeysBrokenCounter: a counter store that fails refuses the run by
// default (503, its own code), logged and counted; a Guard failing open
// admits it, counted too.
func TestKeysBrokenCounter(t *testing.T) {
	store := memstore.NewKeyStore()
	closed, err := apikey.New(apikey.Config{Store: store, Counter: &brokenCounter{}})
	require.NoError(t, err)
	key, _, err := closed.Create(context.Background(), "p", apikey.CreateRequest{Name: "k", Scopes: []string{apikey.ScopeEndpointRead}})
	require.NoError(t, err)
	err = closed.Admit(key, false)
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, http.StatusServiceUnavailable, e.Status)
	require.Equal(t, endpoint.CodeBudgetUnavailable, e.Code)
	require.Contains(t, e.Detail, "budget store is unavailable")
	var le *limit.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, limit.CounterUnavailable, le.Limit)
	require.EqualValues(t, 1, closed.CounterFailures())

	guard := budget.NewGuard(&brokenCounter{}, budget.GuardConfig{FailOpen: true})
	open, err := apikey.New(apikey.Config{Store: store, Counter: guard})
	require.NoError(t, err)
	require.NoError(t, open.Admit(key, false))
	require.EqualValues(t, 2, guard.Failures(), "the minute's and the hour's counts failed")
	require.EqualValues(t, 2, open.CounterFailures())
}
