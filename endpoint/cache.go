package endpoint

import (
	"context"
	"sync"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	lrucache "github.com/endpointkit/endpointkit/internal/lru"
)

// lru is a bounded least-recently-used map, safe for concurrent use. Each
// entry remembers when it was last checked against the store, so that a
// Service can trust it for Config.RecheckInterval and then read the store
// again to see writes made by other processes.
//
// gen is bumped by every purge. A caller that missed (or found a stale
// entry) reads the store, and stores what it read only if no purge happened
// meanwhile, so that a record or definition written during the read is not
// cached in its old form.
type lru[K comparable, V any] struct {
	mu      sync.Mutex
	gen     uint64
	entries *lrucache.Cache[K, lruEntry[V]]
}

type lruEntry[V any] struct {
	val     V
	checked time.Time
}

// newLRU returns an lru of at most max entries; max <= 0 keeps none.
func newLRU[K comparable, V any](max int) *lru[K, V] {
	return &lru[K, V]{entries: lrucache.New[K, lruEntry[V]](int64(max), nil)}
}

// get returns the entry for k, when it was checked, whether there is one,
// and the current generation.
func (c *lru[K, V]) get(k K) (v V, checked time.Time, ok bool, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries.Get(k)
	return e.val, e.checked, ok, c.gen
}

// put stores v under k as checked at checked, unless a purge happened since
// generation gen.
func (c *lru[K, V]) put(k K, v V, checked time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen {
		c.entries.Add(k, lruEntry[V]{val: v, checked: checked}, 1)
	}
}

// remove drops the entry for k, if any. It is not a purge: an entry that
// was read before it went is still right.
func (c *lru[K, V]) remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Remove(k)
}

// purge drops the entries for which match holds, and makes every read
// begun before it unfit to be stored.
func (c *lru[K, V]) purge(match func(K, V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.entries.RemoveFunc(func(k K, e lruEntry[V]) bool { return match(k, e.val) })
}

// len returns the number of entries.
func (c *lru[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len()
}

// generation returns the current generation, for a put by a caller that
// read the store under Service.writeMu (which every purge by this Service's
// own writes follows, under the same lock).
func (c *lru[K, V]) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// cacheKey names one version of one endpoint. A version's query never
// changes, so an entry stays right until the variables it was validated
// with change.
type cacheKey struct {
	project, id string
	version     int
}

// templateCache keeps the compiled queries of recently run versions, so that
// a run neither re-reads the variables nor re-parses the query.
type templateCache struct {
	*lru[cacheKey, *compiled]
}

func newTemplateCache(max int) *templateCache {
	return &templateCache{newLRU[cacheKey, *compiled](max)}
}

// purge drops the entries of project for which match holds (every entry of
// the project when match is nil).
func (tc *templateCache) purge(project string, match func(cacheKey) bool) {
	tc.lru.purge(func(k cacheKey, _ *compiled) bool {
		return k.project == project && (match == nil || match(k))
	})
}

// recordKey names an endpoint as a run names it.
type recordKey struct{ project, name string }

// recordCache keeps the stored records of recently run endpoints, so that a
// run of an unchanged endpoint does not read (and decode) it from the store.
// An entry is immutable: runs share it and only read it, and a write
// replaces the pointer.
type recordCache struct {
	*lru[recordKey, *driver.Endpoint]
}

// forget drops the records of the endpoint with id in project and the
// record cached under name (a stale one that another process deleted or
// renamed); either may be "".
func (rc recordCache) forget(project, id, name string) {
	rc.purge(func(k recordKey, e *driver.Endpoint) bool {
		return k.project == project && (id != "" && e.ID == id || name != "" && k.name == name)
	})
}

// fresh reports whether an entry checked at checked may be used at now
// without reading the store again. A clock that went back makes it stale.
func (s *Service) fresh(checked, now time.Time) bool {
	age := now.Sub(checked)
	return age >= 0 && age < s.cfg.RecheckInterval
}

// forgettingStore is the Store a Service uses: the host's Store, which drops
// this Service's cached record of an endpoint as soon as the Service writes
// it, through whichever path writes (create, update, delete, a refresh's
// state). A write that fails drops it too: a conflict means another process
// changed the endpoint. MarkExecuted changes nothing a run reads, so it
// drops nothing; that a run's own bookkeeping does not empty the cache is
// the point.
type forgettingStore struct {
	driver.Store
	records  recordCache
	versions *templateCache
}

func (f forgettingStore) Create(ctx context.Context, e driver.Endpoint, first driver.Version) error {
	defer f.records.forget(e.ProjectID, e.ID, e.Name)
	return f.Store.Create(ctx, e, first)
}

func (f forgettingStore) Update(ctx context.Context, e driver.Endpoint, next *driver.Version) error {
	defer f.records.forget(e.ProjectID, e.ID, e.Name)
	return f.Store.Update(ctx, e, next)
}

func (f forgettingStore) SetMaterialization(ctx context.Context, project, id string, st driver.MaterializationState) error {
	defer f.records.forget(project, id, "")
	return f.Store.SetMaterialization(ctx, project, id, st)
}

func (f forgettingStore) Delete(ctx context.Context, project, id string) error {
	defer f.versions.purge(project, func(k cacheKey) bool { return k.id == id })
	defer f.records.forget(project, id, "")
	return f.Store.Delete(ctx, project, id)
}
