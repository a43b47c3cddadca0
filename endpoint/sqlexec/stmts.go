package sqlexec

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"

	"github.com/endpointkit/endpointkit/internal/lru"
)

// stmtCache keeps prepared statements by their SQL text, at most max, the
// least recently used going first. It is safe for concurrent use.
//
// A statement may be evicted (or dropped after a failure) while queries
// still run on it; it is closed when the last of them releases it, so that
// no query finds its statement closed under it. database/sql would let
// rows outlive a closed statement, but not a query that has yet to start.
type stmtCache struct {
	mu      sync.Mutex
	closed  bool
	byQuery *lru.Cache[string, *stmtEntry]
	idle    []*sql.Stmt // evicted and held by no query: to close outside mu
}

type stmtEntry struct {
	query string
	stmt  *sql.Stmt
	refs  int  // queries running on it
	gone  bool // out of the cache: closed when refs drops to 0
}

func newStmtCache(max int) *stmtCache {
	c := &stmtCache{}
	c.byQuery = lru.New(int64(max), c.evicted)
	return c
}

// evicted marks e out of the cache, and queues its statement for closing
// if no query holds it. It runs under c.mu (every change to byQuery does).
func (c *stmtCache) evicted(_ string, e *stmtEntry) {
	e.gone = true
	if e.refs == 0 {
		c.idle = append(c.idle, e.stmt)
	}
}

// takeIdle returns the statements to close, for the caller to close once
// it has let go of c.mu.
func (c *stmtCache) takeIdle() []*sql.Stmt {
	idle := c.idle
	c.idle = nil
	return idle
}

// acquire returns the statement of query, held until release, and whether
// this call prepared it (false: it was in the cache). It returns nil and no
// error once the cache is closed: the caller then runs the query
// unprepared.
func (c *stmtCache) acquire(ctx context.Context, db *sql.DB, query string) (e *stmtEntry, fresh bool, err error) {
	if e := c.hold(query); e != nil || c.isClosed() {
		return e, false, nil
	}
	// Prepared without the lock: parsing may take a while, and other
	// queries should not wait for it.
	stmt, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, false, err
	}

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		stmt.Close()
		return nil, false, nil
	}
	if e, ok := c.byQuery.Get(query); ok {
		// Another query prepared the same text meanwhile; keep one.
		e.refs++
		c.mu.Unlock()
		stmt.Close()
		return e, true, nil
	}
	e = &stmtEntry{query: query, stmt: stmt, refs: 1}
	if !c.byQuery.Add(query, e, 1) {
		e.gone = true // a cache of size 0: closed on release
	}
	idle := c.takeIdle()
	c.mu.Unlock()
	for _, s := range idle {
		s.Close()
	}
	return e, true, nil
}

// hold returns the cached statement of query, held until release, or nil.
func (c *stmtCache) hold(query string) *stmtEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byQuery.Get(query)
	if !ok {
		return nil
	}
	e.refs++
	return e
}

func (c *stmtCache) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// release ends a query's hold on e. drop takes e out of the cache, as after
// a failure: the statement may have been prepared against a schema that
// has changed since, and the next query of its text prepares it again.
func (c *stmtCache) release(e *stmtEntry, drop bool) {
	c.mu.Lock()
	e.refs--
	if drop && !e.gone {
		c.byQuery.Remove(e.query) // e is the entry of its query while not gone
	}
	idle := c.takeIdle()
	if e.gone && e.refs == 0 && !slices.Contains(idle, e.stmt) {
		idle = append(idle, e.stmt)
	}
	c.mu.Unlock()
	for _, s := range idle {
		s.Close()
	}
}

// close closes every statement no query holds, and makes the others close
// when their queries end; later queries run unprepared.
func (c *stmtCache) close() error {
	c.mu.Lock()
	c.closed = true
	c.byQuery.RemoveFunc(func(string, *stmtEntry) bool { return true })
	idle := c.takeIdle()
	c.mu.Unlock()
	var errs []error
	for _, s := range idle {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// len returns the number of statements in the cache.
func (c *stmtCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byQuery.Len()
}
