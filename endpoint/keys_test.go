package endpoint_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
)

// keyClock is a settable clock.
type keyClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *keyClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *keyClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestKeys(t *testing.T, store driver.KeyStore, c *keyClock, cfg endpoint.KeysConfig) *endpoint.Keys {
	t.Helper()
	cfg.Store, cfg.Now = store, c.now
	k, err := endpoint.NewKeys(cfg)
	require.NoError(t, err)
	return k
}

// TestKeyRevocationCacheBound: two processes share a store. A key revoked
// by one is refused by it at once, and by the other once its cached read
// is CacheTTL old, not before (it is still within the documented bound)
// and not after.
func TestKeyRevocationCacheBound(t *testing.T) {
	ctx := context.Background()
	store := memstore.NewKeyStore()
	c := &keyClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	const ttl = 5 * time.Second
	a := newTestKeys(t, store, c, endpoint.KeysConfig{CacheTTL: ttl})
	b := newTestKeys(t, store, c, endpoint.KeysConfig{CacheTTL: ttl})
	key, secret, err := a.Create(ctx, "1", endpoint.CreateKeyRequest{Name: "ci", Scopes: []string{endpoint.ScopeEndpointRead}})
	require.NoError(t, err)
	for _, k := range []*endpoint.Keys{a, b} {
		got, err := k.Authenticate(ctx, secret)
		require.NoError(t, err)
		assert.Equal(t, key.ID, got.ID)
	}
	c.add(time.Second)
	require.NoError(t, a.Revoke(ctx, "1", key.ID))
	_, err = a.Authenticate(ctx, secret)
	assert.ErrorIs(t, err, endpoint.ErrUnauthorized, "revoked in this process: refused at once")
	_, err = b.Authenticate(ctx, secret)
	assert.NoError(t, err, "the other process trusts its read for CacheTTL")
	c.add(ttl - time.Second - time.Nanosecond)
	_, err = b.Authenticate(ctx, secret)
	assert.NoError(t, err, "still within CacheTTL of the read")
	c.add(time.Nanosecond)
	_, err = b.Authenticate(ctx, secret)
	assert.ErrorIs(t, err, endpoint.ErrUnauthorized, "CacheTTL after its read, the other process sees the revocation")
	assert.Equal(t, http.StatusUnauthorized, endpoint.StatusOf(err))

	// Without a cache, the other process sees it on the next request.
	n := newTestKeys(t, store, c, endpoint.KeysConfig{CacheTTL: -1})
	key2, secret2, err := a.Create(ctx, "1", endpoint.CreateKeyRequest{Name: "ci2", Scopes: []string{endpoint.ScopeEndpointRead}})
	require.NoError(t, err)
	_, err = n.Authenticate(ctx, secret2)
	require.NoError(t, err)
	require.NoError(t, a.Revoke(ctx, "1", key2.ID))
	_, err = n.Authenticate(ctx, secret2)
	assert.ErrorIs(t, err, endpoint.ErrUnauthorized)
}

// TestKeyUnknownAndCacheSize: an unknown secret is refused (and its miss
// cached, within CacheSize); a key created after a miss of another secret
// is found.
func TestKeyUnknownAndCacheSize(t *testing.T) {
	ctx := context.Background()
	c := &keyClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	k := newTestKeys(t, memstore.NewKeyStore(), c, endpoint.KeysConfig{CacheSize: 2})
	for i := range 5 {
		_, err := k.Authenticate(ctx, endpoint.KeyPrefix+string(rune('a'+i)))
		assert.ErrorIs(t, err, endpoint.ErrUnauthorized)
	}
	_, secret, err := k.Create(ctx, "1", endpoint.CreateKeyRequest{Name: "ci", Scopes: []string{endpoint.ScopeQueryRun}})
	require.NoError(t, err)
	got, err := k.Authenticate(ctx, secret)
	require.NoError(t, err)
	assert.Equal(t, []string{endpoint.ScopeQueryRun}, got.Scopes)
}

// TestKeyBudgetDefaults: a key without budgets of its own gets the host's
// (PostHog's by default: 240/min and 2,400/h inline, 1,200/min and
// 12,000/h materialized), counted apart for inline and materialized runs.
func TestKeyBudgetDefaults(t *testing.T) {
	ctx := context.Background()
	c := &keyClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	k := newTestKeys(t, memstore.NewKeyStore(), c, endpoint.KeysConfig{})
	key, _, err := k.Create(ctx, "1", endpoint.CreateKeyRequest{Name: "ci", Scopes: []string{endpoint.ScopeEndpointRead}})
	require.NoError(t, err)
	assert.Equal(t, []int{240, 2400, 1200, 12000}, []int{key.RunsPerMinute, key.RunsPerHour, key.MaterializedRunsPerMinute, key.MaterializedRunsPerHour})
	for range 240 {
		require.NoError(t, k.Admit(key, false))
	}
	err = k.Admit(key, false)
	var e *endpoint.Error
	require.True(t, errors.As(err, &e), "%v", err)
	assert.Equal(t, http.StatusTooManyRequests, e.Status)
	assert.Equal(t, endpoint.LimitKeyRunsPerMinute, e.Limit)
	assert.EqualValues(t, 240, e.LimitValue)
	var le *limit.Error
	require.True(t, errors.As(err, &le))
	assert.Positive(t, le.RetryAfter)
	for range 1200 {
		require.NoError(t, k.Admit(key, true))
	}
	err = k.Admit(key, true)
	require.True(t, errors.As(err, &e))
	assert.Equal(t, endpoint.LimitKeyMaterializedRunsPerMinute, e.Limit)
	// The hour: 2,400 inline runs over twenty minutes (each batch in a
	// minute of its own, the one before it empty), then the hourly budget.
	for range 9 {
		c.add(2 * time.Minute)
		for range 240 {
			require.NoError(t, k.Admit(key, false))
		}
	}
	c.add(2 * time.Minute)
	err = k.Admit(key, false)
	require.True(t, errors.As(err, &e), "%v", err)
	assert.Equal(t, endpoint.LimitKeyRunsPerHour, e.Limit)
	// A key with no limit is never refused.
	free, _, err := k.Create(ctx, "1", endpoint.CreateKeyRequest{Name: "free", Scopes: []string{endpoint.ScopeEndpointRead}, RunsPerMinute: -1, RunsPerHour: -1})
	require.NoError(t, err)
	for range 3000 {
		require.NoError(t, k.Admit(free, false))
	}
}

// TestKeysConfigRefused: a budget below -1 is named.
func TestKeysConfigRefused(t *testing.T) {
	_, err := endpoint.NewKeys(endpoint.KeysConfig{Store: memstore.NewKeyStore(), MaterializedRunsPerHour: -5})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MaterializedRunsPerHour")
	_, err = endpoint.NewKeys(endpoint.KeysConfig{})
	assert.ErrorContains(t, err, "Store")
}

// TestKeyLastUsed: last_used_at is written on the first use and then at
// most once per UsedResolution.
func TestKeyLastUsed(t *testing.T) {
	ctx := context.Background()
	store := memstore.NewKeyStore()
	c := &keyClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	k := newTestKeys(t, store, c, endpoint.KeysConfig{UsedResolution: time.Minute})
	key, secret, err := k.Create(ctx, "1", endpoint.CreateKeyRequest{Name: "ci", Scopes: []string{endpoint.ScopeEndpointRead}})
	require.NoError(t, err)
	lastUsed := func() *time.Time {
		list, err := k.List(ctx, "1")
		require.NoError(t, err)
		return list[0].LastUsedAt
	}
	assert.Nil(t, lastUsed())
	first := c.now()
	_, err = k.Authenticate(ctx, secret)
	require.NoError(t, err)
	assert.Equal(t, first, *lastUsed())
	c.add(30 * time.Second)
	_, _ = k.Authenticate(ctx, secret)
	assert.Equal(t, first, *lastUsed(), "within the resolution")
	c.add(31 * time.Second)
	_, _ = k.Authenticate(ctx, secret)
	assert.Equal(t, c.now(), *lastUsed())
	assert.Equal(t, key.ID, key.ID)
}

// slowKeyStore holds KeyByHash, after its read, until release is closed.
type slowKeyStore struct {
	*memstore.KeyStore
	read, release chan struct{}
	once          sync.Once
}

func (s *slowKeyStore) KeyByHash(ctx context.Context, h [driver.KeyHashSize]byte) (driver.KeyRecord, error) {
	r, err := s.KeyStore.KeyByHash(ctx, h)
	s.once.Do(func() {
		close(s.read)
		<-s.release
	})
	return r, err
}

// TestKeyRevokeOvertakesRead: a request that read the key before a
// revocation, and finishes after it, does not put the key back in the
// cache: the next request is refused.
func TestKeyRevokeOvertakesRead(t *testing.T) {
	ctx := context.Background()
	store := &slowKeyStore{KeyStore: memstore.NewKeyStore(), read: make(chan struct{}), release: make(chan struct{})}
	c := &keyClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	k := newTestKeys(t, store, c, endpoint.KeysConfig{CacheTTL: time.Hour})
	key, secret, err := k.Create(ctx, "1", endpoint.CreateKeyRequest{Name: "ci", Scopes: []string{endpoint.ScopeEndpointRead}})
	require.NoError(t, err)
	done := make(chan error)
	go func() {
		_, err := k.Authenticate(ctx, secret)
		done <- err
	}()
	<-store.read
	require.NoError(t, k.Revoke(ctx, "1", key.ID))
	close(store.release)
	require.NoError(t, <-done, "the request in flight read the key before the revocation")
	_, err = k.Authenticate(ctx, secret)
	assert.ErrorIs(t, err, endpoint.ErrUnauthorized)
}
