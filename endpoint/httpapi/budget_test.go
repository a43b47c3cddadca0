package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/stretchr/testify/require"
)

type unreachableCounter struct{}

func (unreachableCounter) Take(context.Context, string, int64, time.Duration) (budget.Decision, error) {
	return budget.Decision{}, errors.New("dial tcp 127.0.0.1:6379: connection refused")
}

// TestBrokenBudgetStore: a run whose budget cannot be counted is answered
// 503 with Retry-After and its own code, never run, and the failure is
// logged.
func TestBrokenBudgetStore(t *testing.T) {
	var logs bytes.Buffer
	l := newLimiter(t, limit.Config{Counter: unreachableCounter{}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	lh := newLimitHarness(t, newExecutor(openEvents(t, 1)), httpapi.WithLimiter(l))
	res := lh.run("1")
	require.Equal(t, http.StatusServiceUnavailable, res.Status, "%s", res.Raw)
	require.Equal(t, "1", res.Header.Get("Retry-After"))
	require.Contains(t, string(res.Raw), endpoint.CodeBudgetUnavailable)
	require.Contains(t, string(res.Raw), "budget store is unavailable")
	require.Contains(t, logs.String(), "connection refused")
	require.EqualValues(t, 1, l.CounterFailures())
}
