package memstore

import (
	"context"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	lrucache "github.com/endpointkit/endpointkit/internal/lru"
)

// DefaultResultCacheBytes is the bound of a ResultCache made with a
// non-positive size.
const DefaultResultCacheBytes = 64 << 20

// entryOverhead is what a ResultCache counts for an entry on top of
// its key and value: the list element, the map slot and the entry itself,
// roughly, so that many tiny entries cannot exceed the bound by their
// bookkeeping.
const entryOverhead = 160

// ResultCache is a ResultCache in memory, bounded in bytes (keys,
// values and per-entry bookkeeping), evicting the least recently used
// entries first. A value larger than an eighth of the bound is not kept,
// so that one large answer cannot empty the cache. It is safe for
// concurrent use; make one with NewResultCache.
type ResultCache struct {
	mu      sync.Mutex
	entries *lrucache.Cache[string, memCacheEntry]
}

type memCacheEntry struct {
	value   []byte
	expires time.Time
}

// entrySize is what an entry of key and value counts for.
func entrySize(key string, value []byte) int64 {
	return int64(len(key)+len(value)) + entryOverhead
}

// NewResultCache returns an empty ResultCache holding at most
// maxBytes; maxBytes <= 0 means DefaultResultCacheBytes.
func NewResultCache(maxBytes int64) *ResultCache {
	if maxBytes <= 0 {
		maxBytes = DefaultResultCacheBytes
	}
	return &ResultCache{entries: lrucache.New[string, memCacheEntry](maxBytes, nil)}
}

var _ driver.ResultCache = (*ResultCache)(nil)

// Get implements ResultCache. An expired entry is dropped when found.
func (c *ResultCache) Get(_ context.Context, key string, now time.Time) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries.Get(key)
	if !ok {
		return nil, false, nil
	}
	if !now.Before(e.expires) {
		c.entries.Remove(key)
		return nil, false, nil
	}
	// Stored values are never written to again (Set replaces the entry),
	// so the caller may keep this one as long as it does not write to it;
	// a copy keeps a careless caller from corrupting the cache.
	return append([]byte(nil), e.value...), true, nil
}

// Set implements ResultCache. It evicts the least recently used entries
// until the new one fits.
func (c *ResultCache) Set(_ context.Context, key string, value []byte, expires time.Time) error {
	e := memCacheEntry{value: append([]byte(nil), value...), expires: expires}
	size := entrySize(key, value)
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.entries.Max()/8 {
		c.entries.Remove(key)
		return nil
	}
	c.entries.Add(key, e, size)
	return nil
}

// Bytes returns what the entries take by the cache's count: keys, values
// and a fixed overhead per entry. It never exceeds the bound.
func (c *ResultCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Size()
}

// Len returns the number of entries, expired ones not yet dropped
// included.
func (c *ResultCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len()
}
