// Package lru is the one least-recently-used cache of the module: a map
// bounded by the total size of its entries, each entry weighing what its
// owner says (1 for a cache bounded in entries, its bytes for a cache
// bounded in bytes).
//
// A Cache is not safe for concurrent use, like container/list: each cache
// of the module keeps it under the lock that also guards what it adds to
// it (expiry, references, generations).
package lru

import "container/list"

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
	return el.Value.(*entry[K, V]).val, true
}

// Add stores v under k with the given size (a size below 1 counts as 1),
// replacing any value of k, and evicts the least recently used entries
// until the total fits. It reports false, storing nothing and dropping the
// old value of k, when the entry alone is larger than the cache.
func (c *Cache[K, V]) Add(k K, v V, size int64) bool {
	size = max(size, 1)
	if el, ok := c.entries[k]; ok {
		e := el.Value.(*entry[K, V])
		if size > c.max {
			c.remove(el)
			return false
		}
		c.used += size - e.size
		e.val, e.size = v, size
		c.order.MoveToFront(el)
	} else {
		if size > c.max {
			return false
		}
		c.entries[k] = c.order.PushFront(&entry[K, V]{key: k, val: v, size: size})
		c.used += size
	}
	for c.used > c.max {
		c.remove(c.order.Back())
	}
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
