package limit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/stretchr/testify/require"
)

// TestLimitersShareACounter: two Limiters (two processes) on one counter
// store allow a project its rate once between them, and a token its rpm.
func TestLimitersShareACounter(t *testing.T) {
	shared := budget.NewMemory(budget.MemoryConfig{})
	cfg := limit.Config{ProjectPerMinute: 3, ProjectPerHour: limit.Unlimited, Counter: shared}
	a, err := limit.New(cfg)
	require.NoError(t, err)
	b, err := limit.New(cfg)
	require.NoError(t, err)
	for _, l := range []*limit.Limiter{a, b, a} {
		release, err := l.Acquire("p")
		require.NoError(t, err)
		release()
	}
	for _, l := range []*limit.Limiter{a, b} {
		_, err := l.Acquire("p")
		var le *limit.Error
		require.ErrorAs(t, err, &le)
		require.Equal(t, limit.ProjectPerMinute, le.Limit)
		require.Positive(t, le.RetryAfter)
	}
	require.NoError(t, a.AdmitToken(context.Background(), "t", 1))
	err = b.AdmitToken(context.Background(), "t", 1)
	var le *limit.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, limit.TokenPerMinute, le.Limit)
	require.Equal(t, "rpm", le.Limit.String())
}

type downCounter struct{}

func (downCounter) Take(context.Context, string, int64, time.Duration) (budget.Decision, error) {
	return budget.Decision{}, errors.New("connection refused")
}

// TestLimiterBrokenCounter: a failing store refuses the run as the
// server's (Global, 503), frees the slot it took, and counts the failure.
func TestLimiterBrokenCounter(t *testing.T) {
	l, err := limit.New(limit.Config{ProjectConcurrency: 1, Counter: downCounter{}})
	require.NoError(t, err)
	for range 2 { // the slot taken first is given back
		_, err = l.Acquire("p")
		var le *limit.Error
		require.ErrorAs(t, err, &le)
		require.Equal(t, limit.CounterUnavailable, le.Limit)
		require.True(t, le.Global())
	}
	require.EqualValues(t, 2, l.CounterFailures())

	open, err := limit.New(limit.Config{Counter: budget.NewGuard(downCounter{}, budget.GuardConfig{FailOpen: true})})
	require.NoError(t, err)
	release, err := open.Acquire("p")
	require.NoError(t, err)
	release()
	require.NoError(t, open.AdmitToken(context.Background(), "t", 1))
	require.EqualValues(t, 3, open.CounterFailures())
}

// TestLongProjectNames: a project name too long for a counter's key, or
// not UTF-8, is counted all the same, apart from its neighbours.
func TestLongProjectNames(t *testing.T) {
	l, err := limit.New(limit.Config{ProjectPerMinute: 1})
	require.NoError(t, err)
	long := strings.Repeat("p", 1000)
	for _, p := range []string{long, long + "q", "bad\xff"} {
		release, err := l.Acquire(p)
		require.NoError(t, err, "the first run of %.20q", p)
		release()
		_, err = l.Acquire(p)
		var le *limit.Error
		require.ErrorAs(t, err, &le, "the second run of %.20q", p)
		require.Equal(t, limit.ProjectPerMinute, le.Limit)
	}
}
