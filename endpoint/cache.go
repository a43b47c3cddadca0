package endpoint

import (
	"container/list"
	"sync"
)

// cacheKey names one version of one endpoint. A version's query never
// changes, so an entry stays right until the variables it was validated
// with change.
type cacheKey struct {
	project, id string
	version     int
}

// templateCache keeps the compiled queries of recently run versions, so that
// a run neither re-reads the variables nor re-parses the query. It is a
// bounded LRU, safe for concurrent use.
//
// gen is bumped by every purge. A run that missed the cache compiles with
// the variables it read, and stores the result only if no purge happened
// meanwhile, so that a definition changed during the compile is not cached.
type templateCache struct {
	mu      sync.Mutex
	max     int
	gen     uint64
	order   *list.List // of *cacheEntry, most recent first
	entries map[cacheKey]*list.Element
}

type cacheEntry struct {
	key cacheKey
	c   *compiled
}

func newTemplateCache(max int) *templateCache {
	return &templateCache{max: max, order: list.New(), entries: make(map[cacheKey]*list.Element)}
}

// get returns the entry for k and the current generation.
func (tc *templateCache) get(k cacheKey) (*compiled, uint64) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	el, ok := tc.entries[k]
	if !ok {
		return nil, tc.gen
	}
	tc.order.MoveToFront(el)
	return el.Value.(*cacheEntry).c, tc.gen
}

// put stores c under k unless a purge happened since generation gen.
func (tc *templateCache) put(k cacheKey, c *compiled, gen uint64) {
	if tc.max <= 0 {
		return
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if gen != tc.gen {
		return
	}
	if el, ok := tc.entries[k]; ok {
		el.Value.(*cacheEntry).c = c
		tc.order.MoveToFront(el)
		return
	}
	tc.entries[k] = tc.order.PushFront(&cacheEntry{key: k, c: c})
	for tc.order.Len() > tc.max {
		last := tc.order.Back()
		tc.order.Remove(last)
		delete(tc.entries, last.Value.(*cacheEntry).key)
	}
}

// purge drops the entries of project for which match holds (every entry of
// the project when match is nil).
func (tc *templateCache) purge(project string, match func(cacheKey) bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.gen++
	for k, el := range tc.entries {
		if k.project == project && (match == nil || match(k)) {
			tc.order.Remove(el)
			delete(tc.entries, k)
		}
	}
}

// len returns the number of entries.
func (tc *templateCache) len() int {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.order.Len()
}

// generation returns the current generation, for a put by a caller that
// compiled under Service.writeMu (which every purge also holds).
func (tc *templateCache) generation() uint64 {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.gen
}
