// Package lru is the one least-recently-used cache of the module: a map
// bounded by the total size of its entries, each entry weighing what its
// owner says (1 for a cache bounded in entries, its bytes for a cache
// bounded in bytes).
//
// A Cache is not safe for concurrent use, like container/list: each cache
// of the module keeps it under the lock that also guards what it adds to
// it (expiry, references, generations). Only Peek may be called by many
// goroutines at once (under a sync.RWMutex's read lock, say), so that a
// cache read far more often than written takes no write lock on a hit.
package lru

import (
	"container/list"
	"sync/atomic"
)

// Cache is a map of at most Max total size, dropping the least recently
// used entries first to make room. The zero value is not usable; make one
// with New.
type Cache[K comparable, V any] struct {
	max     int64
	used    int64
	order   list.List // of *entry[K, V], most recent first
	entries map[K]*list.Element
	onEvict func(K, V)
}

type entry[K comparable, V any] struct {
	key  K
	val  V
	size int64
	// seen marks an entry Peek found since it was last moved to the
	// front: eviction moves it to the front rather than drop it (a second
	// chance), as if Get had moved it then.
	seen atomic.Bool
}

// New returns an empty Cache holding entries of at most max total size
// (max <= 0 holds none). onEvict, if not nil, is called with each entry
// that leaves the cache other than by being replaced by Add: evicted to make
// room, removed, or purged.
func New[K comparable, V any](max int64, onEvict func(K, V)) *Cache[K, V] {
	return &Cache[K, V]{max: max, entries: make(map[K]*list.Element), onEvict: onEvict}
}

// Get returns the value of k and marks it the most recently used.
func (c *Cache[K, V]) Get(k K) (v V, ok bool) {
	el, ok := c.entries[k]
	if !ok {
		return v, false
	}
	c.order.MoveToFront(el)
	e := el.Value.(*entry[K, V])
	e.seen.Store(false)
	return e.val, true
}

// Peek returns the value of k and marks it used, without moving it: it may
// be called by many goroutines at once, while no other method runs (under
// a read lock that every other method's caller holds for writing). An entry
// Peek marked is not evicted while an unmarked one is left: eviction moves
// it to the front instead, once, and unmarks it (the second-chance, or
// clock, approximation of least recently used). Get and Add still move an
// entry to the front at once.
func (c *Cache[K, V]) Peek(k K) (v V, ok bool) {
	el, ok := c.entries[k]
	if !ok {
		return v, false
	}
	e := el.Value.(*entry[K, V])
	if !e.seen.Load() { // a cache line written once per eviction round, not per hit
		e.seen.Store(true)
	}
	return e.val, true
}

// Add stores v under k with the given size (a size below 1 counts as 1),
// replacing any value of k, and evicts the least recently used entries
// until the total fits. It reports false, storing nothing and dropping the
// old value of k, when the entry alone is larger than the cache.
func (c *Cache[K, V]) Add(k K, v V, size int64) bool {
	size = max(size, 1)
	el, ok := c.entries[k]
	if ok {
		e := el.Value.(*entry[K, V])
		if size > c.max {
			c.remove(el)
			return false
		}
		c.used += size - e.size
		e.val, e.size = v, size
		e.seen.Store(false)
		c.order.MoveToFront(el)
	} else {
		if size > c.max {
			return false
		}
		el = c.order.PushFront(&entry[K, V]{key: k, val: v, size: size})
		c.entries[k] = el
		c.used += size
	}
	for c.used > c.max {
		// Never el, the entry added: it fits alone, so another is left.
		old := c.order.Back()
		if old == el {
			old = el.Prev()
		}
		if e := old.Value.(*entry[K, V]); e.seen.Load() {
			// Peeked since it was last moved: its second chance. Each
			// turn unmarks one entry and nothing marks one meanwhile, so
			// the loop ends.
			e.seen.Store(false)
			c.order.MoveToFront(old)
			continue
		}
		c.remove(old)
	}
	c.order.MoveToFront(el) // ahead of the entries given a second chance
	return true
}

// Remove drops the entry of k and reports whether there was one.
func (c *Cache[K, V]) Remove(k K) bool {
	el, ok := c.entries[k]
	if ok {
		c.remove(el)
	}
	return ok
}

// RemoveFunc drops every entry for which match holds and returns how many
// it dropped.
func (c *Cache[K, V]) RemoveFunc(match func(K, V) bool) int {
	n := 0
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*entry[K, V]); match(e.key, e.val) {
			c.remove(el)
			n++
		}
		el = next
	}
	return n
}

// Len returns the number of entries.
func (c *Cache[K, V]) Len() int { return c.order.Len() }

// Size returns the total size of the entries; it never exceeds the bound.
func (c *Cache[K, V]) Size() int64 { return c.used }

// Max returns the bound on the total size.
func (c *Cache[K, V]) Max() int64 { return c.max }

func (c *Cache[K, V]) remove(el *list.Element) {
	e := el.Value.(*entry[K, V])
	c.order.Remove(el)
	delete(c.entries, e.key)
	c.used -= e.size
	if c.onEvict != nil {
		c.onEvict(e.key, e.val)
	}
}
