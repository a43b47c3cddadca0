package redisbudget_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/budget/budgettest"
	"github.com/endpointkit/endpointkit/endpoint/budget/redisbudget"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// client connects to the Redis of $ENDPOINTKIT_TEST_REDIS (a redis:// URL,
// as scripts/engines prints it), or skips.
func client(t testing.TB) *redis.Client {
	t.Helper()
	url := os.Getenv("ENDPOINTKIT_TEST_REDIS")
	if url == "" {
		t.Skip("set ENDPOINTKIT_TEST_REDIS to a redis:// URL (scripts/engines up redis) to test the Redis counter")
	}
	opts, err := redis.ParseURL(url)
	require.NoError(t, err, "ENDPOINTKIT_TEST_REDIS")
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// TestConformance runs budgettest on Redis, each Counter with a client of
// its own, as another process would have.
func TestConformance(t *testing.T) {
	client(t)
	budgettest.Run(t, func(t *testing.T) budget.Counter {
		return redisbudget.New(client(t), "")
	}, budgettest.Options{Shared: true})
}

// TestUnreachable: a Redis that cannot be reached is an error, never a
// decision.
func TestUnreachable(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer rdb.Close()
	d, err := redisbudget.New(rdb, "").Take(context.Background(), "k", 1, time.Minute)
	require.Error(t, err)
	require.False(t, errors.Is(err, budget.ErrInvalid))
	require.Equal(t, budget.Decision{}, d)
}

// TestExpires: a counter's Redis key expires after two of its windows and
// a little more, so Redis holds only counters of use.
func TestExpires(t *testing.T) {
	rdb := client(t)
	c := redisbudget.New(rdb, "endpointkit:test:expires:")
	_, err := c.Take(context.Background(), "k", 1, time.Minute)
	require.NoError(t, err)
	ttl, err := rdb.PTTL(context.Background(), "endpointkit:test:expires:60000:k").Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 2*time.Minute-time.Second)
	require.LessOrEqual(t, ttl, 3*time.Minute)
}
