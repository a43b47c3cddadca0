package apikey_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
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

func newTestKeys(t *testing.T, store driver.KeyStore, c *keyClock, cfg apikey.Config) *apikey.Keys {
	t.Helper()
	cfg.Store, cfg.Now = store, c.now
	k, err := apikey.New(cfg)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
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
	a := newTestKeys(t, store, c, apikey.Config{CacheTTL: ttl})
	b := newTestKeys(t, store, c, apikey.Config{CacheTTL: ttl})
	key, secret, err := a.Create(ctx, "1", apikey.CreateRequest{Name: "ci", Scopes: []string{apikey.ScopeEndpointRead}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	for _, k := range []*apikey.Keys{a, b} {
		got, err := k.Authenticate(ctx, secret)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if got, want := got.ID, key.ID; got != want {
			t.Errorf("got.ID = %q, want %q", got, want)
		}
	}
	c.add(time.Second)
	if err := a.Revoke(ctx, "1", key.ID); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = a.Authenticate(ctx, secret)
	if err := err; !errors.Is(err, endpoint.ErrUnauthorized) {
		t.Errorf("revoked in this process: refused at once: error %v is not %v", err, endpoint.ErrUnauthorized)
	}
	_, err = b.Authenticate(ctx, secret)
	if err != nil {
		t.Errorf("the other process trusts its read for CacheTTL: unexpected error: %v", err)
	}
	c.add(ttl - time.Second - time.Nanosecond)
	_, err = b.Authenticate(ctx, secret)
	if err != nil {
		t.Errorf("still within CacheTTL of the read: unexpected error: %v", err)
	}
	c.add(time.Nanosecond)
	_, err = b.Authenticate(ctx, secret)
	if err := err; !errors.Is(err, endpoint.ErrUnauthorized) {
		t.Errorf("CacheTTL after its read, the other process sees the revocation: error %v is not %v", err, endpoint.ErrUnauthorized)
	}
	if got, want := endpoint.StatusOf(err), http.StatusUnauthorized; got != want {
		t.Errorf("endpoint.StatusOf(err) = %v, want %v", got, want)
	}

	// Without a cache, the other process sees it on the next request.
	n := newTestKeys(t, store, c, apikey.Config{CacheTTL: -1})
	key2, secret2, err := a.Create(ctx, "1", apikey.CreateRequest{Name: "ci2", Scopes: []string{apikey.ScopeEndpointRead}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = n.Authenticate(ctx, secret2)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := a.Revoke(ctx, "1", key2.ID); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = n.Authenticate(ctx, secret2)
	if err := err; !errors.Is(err, endpoint.ErrUnauthorized) {
		t.Errorf("error %v is not %v", err, endpoint.ErrUnauthorized)
	}
}

// TestKeyUnknownAndCacheSize: an unknown secret is refused (and its miss
// cached, within CacheSize); a key created after a miss of another secret
// is found.
func TestKeyUnknownAndCacheSize(t *testing.T) {
	ctx := context.Background()
	c := &keyClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	k := newTestKeys(t, memstore.NewKeyStore(), c, apikey.Config{CacheSize: 2})
	for i := range 5 {
		_, err := k.Authenticate(ctx, apikey.Prefix+string(rune('a'+i)))
		if err := err; !errors.Is(err, endpoint.ErrUnauthorized) {
			t.Errorf("error %v is not %v", err, endpoint.ErrUnauthorized)
		}
	}
	_, secret, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "ci", Scopes: []string{apikey.ScopeQueryRun}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	got, err := k.Authenticate(ctx, secret)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := got.Scopes, ([]string{apikey.ScopeQueryRun}); !reflect.DeepEqual(got, want) {
		t.Errorf("got.Scopes = %+v, want %+v", got, want)
	}
}

// TestKeyBudgetDefaults: a key without budgets of its own gets the host's
// (PostHog's by default: 240/min and 2,400/h inline, 1,200/min and
// 12,000/h materialized), counted apart for inline and materialized runs.
func TestKeyBudgetDefaults(t *testing.T) {
	ctx := context.Background()
	c := &keyClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	k := newTestKeys(t, memstore.NewKeyStore(), c, apikey.Config{})
	key, _, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "ci", Scopes: []string{apikey.ScopeEndpointRead}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := ([]int{key.RunsPerMinute, key.RunsPerHour, key.MaterializedRunsPerMinute, key.MaterializedRunsPerHour}), ([]int{240, 2400, 1200, 12000}); !reflect.DeepEqual(got, want) {
		t.Errorf("got = %+v, want %+v", got, want)
	}
	for range 240 {
		if err := k.Admit(key, false); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	err = k.Admit(key, false)
	var e *endpoint.Error
	if !errors.As(err, &e) {
		t.Fatalf("%v: errors.As(err, &e) is false", err)
	}
	if got, want := e.Status, http.StatusTooManyRequests; got != want {
		t.Errorf("e.Status = %v, want %v", got, want)
	}
	if got, want := e.Limit, apikey.LimitRunsPerMinute; got != want {
		t.Errorf("e.Limit = %q, want %q", got, want)
	}
	if got, want := e.LimitValue, int64(240); got != want {
		t.Errorf("e.LimitValue = %d, want %d", got, want)
	}
	var le *limit.Error
	if !errors.As(err, &le) {
		t.Fatalf("errors.As(err, &le) is false")
	}
	if v := le.RetryAfter; v <= 0 {
		t.Errorf("le.RetryAfter = %v, want > 0", v)
	}
	for range 1200 {
		if err := k.Admit(key, true); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	err = k.Admit(key, true)
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(err, &e) is false")
	}
	if got, want := e.Limit, apikey.LimitMaterializedRunsPerMinute; got != want {
		t.Errorf("e.Limit = %q, want %q", got, want)
	}
	// The hour: 2,400 inline runs over twenty minutes (each batch in a
	// minute of its own, the one before it empty), then the hourly budget.
	for range 9 {
		c.add(2 * time.Minute)
		for range 240 {
			if err := k.Admit(key, false); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
		}
	}
	c.add(2 * time.Minute)
	err = k.Admit(key, false)
	if !errors.As(err, &e) {
		t.Fatalf("%v: errors.As(err, &e) is false", err)
	}
	if got, want := e.Limit, apikey.LimitRunsPerHour; got != want {
		t.Errorf("e.Limit = %q, want %q", got, want)
	}
	// A key with no limit is never refused.
	free, _, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "free", Scopes: []string{apikey.ScopeEndpointRead}, RunsPerMinute: -1, RunsPerHour: -1})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	for range 3000 {
		if err := k.Admit(free, false); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
}

// TestKeysConfigRefused: a budget below -1 is named.
func TestKeysConfigRefused(t *testing.T) {
	_, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore(), MaterializedRunsPerHour: -5})
	if err == nil {
		t.Fatalf("got no error, want one")
	}
	if s, sub := err.Error(), "MaterializedRunsPerHour"; !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
	_, err = apikey.New(apikey.Config{})
	if err := err; err == nil || !strings.Contains(err.Error(), "Store") {
		t.Errorf("error %v does not contain %q", err, "Store")
	}
}

// TestKeyLastUsed: last_used_at is written on the first use and then at
// most once per UsedResolution.
func TestKeyLastUsed(t *testing.T) {
	ctx := context.Background()
	store := memstore.NewKeyStore()
	c := &keyClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	k := newTestKeys(t, store, c, apikey.Config{UsedResolution: time.Minute})
	key, secret, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "ci", Scopes: []string{apikey.ScopeEndpointRead}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	lastUsed := func() *time.Time {
		list, err := k.List(ctx, "1")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return list[0].LastUsedAt
	}
	if v := lastUsed(); v != nil {
		t.Errorf("lastUsed() = %v, want nil", v)
	}
	first := c.now()
	_, err = k.Authenticate(ctx, secret)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := *lastUsed(), first; !reflect.DeepEqual(got, want) {
		t.Errorf("*lastUsed() = %+v, want %+v", got, want)
	}
	c.add(30 * time.Second)
	_, _ = k.Authenticate(ctx, secret)
	if got, want := *lastUsed(), first; !reflect.DeepEqual(got, want) {
		t.Errorf("within the resolution: *lastUsed() = %+v, want %+v", got, want)
	}
	c.add(31 * time.Second)
	_, _ = k.Authenticate(ctx, secret)
	if got, want := *lastUsed(), c.now(); !reflect.DeepEqual(got, want) {
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
	c := &keyClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	k := newTestKeys(t, store, c, apikey.Config{CacheTTL: time.Hour})
	key, secret, err := k.Create(ctx, "1", apikey.CreateRequest{Name: "ci", Scopes: []string{apikey.ScopeEndpointRead}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	done := make(chan error)
	go func() {
		_, err := k.Authenticate(ctx, secret)
		done <- err
	}()
	<-store.read
	if err := k.Revoke(ctx, "1", key.ID); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	close(store.release)
	if err := <-done; err != nil {
		t.Fatalf("the request in flight read the key before the revocation: unexpected error: %v", err)
	}
	_, err = k.Authenticate(ctx, secret)
	if err := err; !errors.Is(err, endpoint.ErrUnauthorized) {
		t.Errorf("error %v is not %v", err, endpoint.ErrUnauthorized)
	}
}
