package apikey_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyClock is a clock for Keys, at 2026-01-01 UTC.
func keyClock() *endpointtest.Clock {
	return endpointtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

func newTestKeys(t *testing.T, store driver.KeyStore, c *endpointtest.Clock, cfg apikey.Config) *apikey.Keys {
	t.Helper()
	cfg.Store, cfg.Now = store, c.Now
	k, err := apikey.New(cfg)
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
	c := keyClock()
	const ttl = 5 * time.Second
	a := newTestKeys(t, store, c, apikey.Config{CacheTTL: ttl})
	b := newTestKeys(t, store, c, apikey.Config{CacheTTL: ttl})
	key, secret, err := a.Create(ctx, "1", apikey.CreateRequest{Name: "ci", Scopes: []string{apikey.ScopeEndpointRead}})
	require.NoError(t, err)
	for _, k := range []*apikey.Keys{a, b} {
		got, err := k.Authenticate(ctx, secret)
		require.NoError(t, err)
		assert.Equal(t, key.ID, got.ID)
	}
	c.Advance(time.Second)
	require.NoError(t, a.Revoke(ctx, "1", key.ID))
	_, err = a.Authenticate(ctx, secret)
	assert.ErrorIs(t, err, endpoint.ErrUnauthorized, "revoked in this process: refused at once")
	_, err = b.Authenticate(ctx, secret)
	assert.NoError(t, err, "the other process trusts its read for CacheTTL")
	c.Advance(ttl - time.Second - time.Nanosecond)
	_, err = b.Authenticate(ctx, secret)
	assert.NoError(t, err, "still within CacheTTL of the read")
	c.Advance(time.Nanosecond)
	_, err = b.Authenticate(ctx, secret)
	assert.ErrorIs(t, err, endpoint.ErrUnauthorized, "CacheTTL after its read, the other process sees the revocation")
	assert.Equal(t, http.StatusUnauthorized, endpoint.StatusOf(err))

	// Without a cache, the other process sees it on the next request.
	n := newTestKeys(t, store, c, apikey.Config{CacheTTL: -1})
	key2, secret2, err := a.Create(ctx, "1", apikey.CreateRequest{Name: "ci2", Scopes: []string{apikey.ScopeEndpointRead}})
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
	c := keyClock()
	k := newTestKeys(t, memstore.NewKeyStore(), c, apikey.Config{CacheSize: 2})
	for i := range 5 {
		_, err := k.Authenticate(ctx, apikey.Prefix+string(rune('a'+i)))
		assert.ErrorIs(t, err, endpoint.ErrUnauthorized)
	}
	_, secret, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "ci", Scopes: []string{apikey.ScopeQueryRun}})
	require.NoError(t, err)
	got, err := k.Authenticate(ctx, secret)
	require.NoError(t, err)
	assert.Equal(t, []string{apikey.ScopeQueryRun}, got.Scopes)
}

// TestKeyBudgetDefaults: a key without budgets of its own gets the host's
// (PostHog's by default: 240/min and 2,400/h inline, 1,200/min and
// 12,000/h materialized), counted apart for inline and materialized runs.
func TestKeyBudgetDefaults(t *testing.T) {
	ctx := context.Background()
	c := keyClock()
	k := newTestKeys(t, memstore.NewKeyStore(), c, apikey.Config{})
	key, _, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "ci", Scopes: []string{apikey.ScopeEndpointRead}})
	require.NoError(t, err)
	assert.Equal(t, []int{240, 2400, 1200, 12000}, []int{key.RunsPerMinute, key.RunsPerHour, key.MaterializedRunsPerMinute, key.MaterializedRunsPerHour})
	for range 240 {
		require.NoError(t, k.Admit(key, false))
	}
	err = k.Admit(key, false)
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusTooManyRequests, e.Status)
	assert.Equal(t, apikey.LimitRunsPerMinute, e.Limit)
	assert.Equal(t, int64(240), e.LimitValue)
	var le *limit.Error
	require.ErrorAs(t, err, &le, "errors.As(err, &le) is false")
	assert.Greater(t, le.RetryAfter, time.Duration(0))
	for range 1200 {
		require.NoError(t, k.Admit(key, true))
	}
	err = k.Admit(key, true)
	require.ErrorAs(t, err, &e, "errors.As(err, &e) is false")
	assert.Equal(t, apikey.LimitMaterializedRunsPerMinute, e.Limit)
	// The hour: 2,400 inline runs over twenty minutes (each batch in a
	// minute of its own, the one before it empty), then the hourly budget.
	for range 9 {
		c.Advance(2 * time.Minute)
		for range 240 {
			require.NoError(t, k.Admit(key, false))
		}
	}
	c.Advance(2 * time.Minute)
	err = k.Admit(key, false)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, apikey.LimitRunsPerHour, e.Limit)
	// A key with no limit is never refused.
	free, _, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "free", Scopes: []string{apikey.ScopeEndpointRead}, RunsPerMinute: -1, RunsPerHour: -1})
	require.NoError(t, err)
	for range 3000 {
		require.NoError(t, k.Admit(free, false))
	}
}

// TestKeysConfigRefused: a budget below -1 is named.
func TestKeysConfigRefused(t *testing.T) {
	_, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore(), MaterializedRunsPerHour: -5})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MaterializedRunsPerHour")
	_, err = apikey.New(apikey.Config{})
	assert.ErrorContains(t, err, "Store")
}

// TestKeyLastUsed: last_used_at is written on the first use and then at
// most once per UsedResolution.
func TestKeyLastUsed(t *testing.T) {
	ctx := context.Background()
	store := memstore.NewKeyStore()
	c := keyClock()
	k := newTestKeys(t, store, c, apikey.Config{UsedResolution: time.Minute})
	key, secret, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "ci", Scopes: []string{apikey.ScopeEndpointRead}})
	require.NoError(t, err)
	lastUsed := func() *time.Time {
		list, err := k.List(ctx, "1")
		require.NoError(t, err)
		return list[0].LastUsedAt
	}
	assert.Nil(t, lastUsed())
	first := c.Now()
	_, err = k.Authenticate(ctx, secret)
	require.NoError(t, err)
	got, want := *lastUsed(), first
	assert.Equal(t, want, got, "*lastUsed()")
	c.Advance(30 * time.Second)
	_, _ = k.Authenticate(ctx, secret)
	if got, want := *lastUsed(), first; !reflect.DeepEqual(got, want) {
		t.Errorf("within the resolution: *lastUsed() = %+v, want %+v", got, want)
	}
	c.Advance(31 * time.Second)
	_, _ = k.Authenticate(ctx, secret)
	if got, want := *lastUsed(), c.Now(); !reflect.DeepEqual(got, want) {
		t.Errorf("*lastUsed() = %+v, want %+v", got, want)
	}
	if got, want := key.ID, key.ID; got != want {
		t.Errorf("key.ID = %q, want %q", got, want)
	}
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
	c := keyClock()
	k := newTestKeys(t, store, c, apikey.Config{CacheTTL: time.Hour})
	key, secret, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "ci", Scopes: []string{apikey.ScopeEndpointRead}})
	require.NoError(t, err)
	done := make(chan error)
	go func() {
		_, err := k.Authenticate(ctx, secret)
		done <- err
	}()
	<-store.read
	require.NoError(t, k.Revoke(ctx, "1", key.ID))
	close(store.release)
	if err := <-done; err != nil {
		t.Fatalf("the request in flight read the key before the revocation: unexpected error: %v", err)
	}
	_, err = k.Authenticate(ctx, secret)
	assert.ErrorIs(t, err, endpoint.ErrUnauthorized)
}

// BenchmarkKeysAuthenticate is a request's cost of a stored key: the
// SHA-256 of the secret and a cached read (the store is read once per
// CacheTTL).
func BenchmarkKeysAuthenticate(b *testing.B) {
	ctx := context.Background()
	k, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore()})
	require.NoError(b, err)
	_, secret, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "b", Scopes: []string{apikey.ScopeEndpointRead}})
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		_, err := k.Authenticate(ctx, secret)
		require.NoError(b, err)
	}
}

// BenchmarkKeysAdmit is a run's cost of its key's budget.
func BenchmarkKeysAdmit(b *testing.B) {
	ctx := context.Background()
	k, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore(), RunsPerMinute: -1, RunsPerHour: 1 << 40})
	require.NoError(b, err)
	key, _, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "b", Scopes: []string{apikey.ScopeEndpointRead}})
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, k.Admit(key, false))
	}
}

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

// TestKeyNameRefusesWhatNoStoreHolds: a key name with a NUL character,
// which PostgreSQL cannot store in text, or that is not UTF-8, was
// accepted and failed in the store (a 502 on PostgreSQL). It is a 400
// naming the name, and no key is made.
func TestKeyNameRefusesWhatNoStoreHolds(t *testing.T) {
	ctx := context.Background()
	k, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore()})
	require.NoError(t, err)
	for _, name := range []string{"a\x00b", "a\xffb"} {
		_, _, err := k.Create(ctx, "1", apikey.CreateRequest{Name: name, Scopes: []string{apikey.ScopeEndpointRead}})
		var e *endpoint.Error
		if assert.True(t, errors.As(err, &e), "Create(name %q) = %v", name, err) {
			assert.Equal(t, 400, e.Status)
			assert.Equal(t, "name", e.Attr)
		}
	}
	keys, err := k.List(ctx, "1")
	require.NoError(t, err)
	assert.Empty(t, keys)
}
