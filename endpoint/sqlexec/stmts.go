package sqlexec

import (
	"container/list"
	"context"
	"database/sql"
	"errors"
	"sync"
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
	max     int
	closed  bool
	order   list.List // of *stmtEntry, most recent first
	byQuery map[string]*list.Element
}

type stmtEntry struct {
	query string
	stmt  *sql.Stmt
	refs  int  // queries running on it
	gone  bool // out of the cache: closed when refs drops to 0
}

func newStmtCache(max int) *stmtCache {
	return &stmtCache{max: max, byQuery: make(map[string]*list.Element)}
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
	if el, ok := c.byQuery[query]; ok {
		// Another query prepared the same text meanwhile; keep one.
		e := el.Value.(*stmtEntry)
		e.refs++
		c.order.MoveToFront(el)
		c.mu.Unlock()
		stmt.Close()
		return e, true, nil
	}
	e = &stmtEntry{query: query, stmt: stmt, refs: 1}
	c.byQuery[query] = c.order.PushFront(e)
	var idle []*sql.Stmt
	for c.order.Len() > c.max {
		if s := c.evictLocked(c.order.Back()); s != nil {
			idle = append(idle, s)
		}
	}
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
	el, ok := c.byQuery[query]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	e := el.Value.(*stmtEntry)
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
		if el, ok := c.byQuery[e.query]; ok && el.Value == e {
			c.evictLocked(el)
		}
	}
	closeNow := e.gone && e.refs == 0
	c.mu.Unlock()
	if closeNow {
		e.stmt.Close()
	}
}

// evictLocked takes el out of the cache and returns its statement if no
// query holds it, for the caller to close once it has let go of c.mu.
func (c *stmtCache) evictLocked(el *list.Element) *sql.Stmt {
	e := el.Value.(*stmtEntry)
	c.order.Remove(el)
	delete(c.byQuery, e.query)
	e.gone = true
	if e.refs == 0 {
		return e.stmt
	}
	return nil
}

// close closes every statement no query holds, and makes the others close
// when their queries end; later queries run unprepared.
func (c *stmtCache) close() error {
	c.mu.Lock()
	c.closed = true
	var idle []*sql.Stmt
	for c.order.Len() > 0 {
		if s := c.evictLocked(c.order.Back()); s != nil {
			idle = append(idle, s)
		}
	}
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
	return c.order.Len()
}
