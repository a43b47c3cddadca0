package endpoint

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// DefaultResultCacheBytes is the bound of a MemoryResultCache made with a
// non-positive size.
const DefaultResultCacheBytes = 64 << 20

// entryOverhead is what a MemoryResultCache counts for an entry on top of
// its key and value: the list element, the map slot and the entry itself,
// roughly, so that many tiny entries cannot exceed the bound by their
// bookkeeping.
const entryOverhead = 160

// MemoryResultCache is a ResultCache in memory, bounded in bytes (keys,
// values and per-entry bookkeeping), evicting the least recently used
// entries first. A value larger than an eighth of the bound is not kept,
// so that one large answer cannot empty the cache. It is safe for
// concurrent use; make one with NewMemoryResultCache.
type MemoryResultCache struct {
	mu      sync.Mutex
	max     int64
	used    int64
	order   list.List // of *memCacheEntry, most recent first
	entries map[string]*list.Element
}

type memCacheEntry struct {
	key     string
	value   []byte
	expires time.Time
}

func (e *memCacheEntry) size() int64 {
	return int64(len(e.key)+len(e.value)) + entryOverhead
}

// NewMemoryResultCache returns an empty MemoryResultCache holding at most
// maxBytes; maxBytes <= 0 means DefaultResultCacheBytes.
func NewMemoryResultCache(maxBytes int64) *MemoryResultCache {
	if maxBytes <= 0 {
		maxBytes = DefaultResultCacheBytes
	}
	return &MemoryResultCache{max: maxBytes, entries: make(map[string]*list.Element)}
}

var _ driver.ResultCache = (*MemoryResultCache)(nil)

// Get implements ResultCache. An expired entry is dropped when found.
func (c *MemoryResultCache) Get(_ context.Context, key string, now time.Time) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false, nil
	}
	e := el.Value.(*memCacheEntry)
	if !now.Before(e.expires) {
		c.remove(el)
		return nil, false, nil
	}
	c.order.MoveToFront(el)
	// Stored values are never written to again (Set replaces the entry),
	// so the caller may keep this one as long as it does not write to it;
	// a copy keeps a careless caller from corrupting the cache.
	return append([]byte(nil), e.value...), true, nil
}

// Set implements ResultCache. It evicts the least recently used entries
// until the new one fits.
func (c *MemoryResultCache) Set(_ context.Context, key string, value []byte, expires time.Time) error {
	e := &memCacheEntry{key: key, value: append([]byte(nil), value...), expires: expires}
	size := e.size()
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	if size > c.max/8 {
		return nil
	}
	for c.used+size > c.max {
		c.remove(c.order.Back())
	}
	c.entries[key] = c.order.PushFront(e)
	c.used += size
	return nil
}

func (c *MemoryResultCache) remove(el *list.Element) {
	e := el.Value.(*memCacheEntry)
	c.order.Remove(el)
	delete(c.entries, e.key)
	c.used -= e.size()
}

// Bytes returns what the entries take by the cache's count: keys, values
// and a fixed overhead per entry. It never exceeds the bound.
func (c *MemoryResultCache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Len returns the number of entries, expired ones not yet dropped
// included.
func (c *MemoryResultCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
