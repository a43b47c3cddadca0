package sqlexec

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/endpointkit/endpointkit/internal/lru"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// stmtCache keeps prepared statements by their SQL text, at most max, the
// least recently used going first. It is safe for concurrent use.
//
// A statement may be evicted (or dropped after a failure) while queries
// still run on it; it is closed when the last of them releases it, so that
// no query finds its statement closed under it. database/sql would let
// rows outlive a closed statement, but not a query that has yet to start.
//
// A run takes the lock once, to find its statement and hold it; letting
// go of it is one atomic operation (see stmtEntry.state), but after a
// failure that drops the statement.
type stmtCache struct {
	mu      sync.Mutex
	closed  bool
	byQuery *lru.Cache[string, *stmtEntry]
	idle    []*sql.Stmt // evicted and held by no query: to close outside mu
}

type stmtEntry struct {
	query string
	stmt  *sql.Stmt
	// body is where the text checkQuery accepted begins in query: query
	// is the engine guard's prefix and that text.
	body int
	// state is the number of queries running on the statement (held),
	// and gone: the entry is out of the cache, and the statement is
	// closed by whichever of its eviction and its last release comes
	// second. Both are one atomic operation on state, so exactly one of
	// them sees the other.
	state atomic.Int64
}

// gone is the bit of stmtEntry.state that marks it out of the cache.
const gone = 1 << 62

func newStmtCache(max int) *stmtCache {
	c := &stmtCache{}
	c.byQuery = lru.New(int64(max), c.evicted)
	return c
}

// evicted marks e out of the cache, and queues its statement for closing
// if no query holds it. It runs under c.mu (every change to byQuery does).
func (c *stmtCache) evicted(_ string, e *stmtEntry) {
	if old := e.state.Or(gone); old == 0 {
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
// this call prepared it (false: it was in the cache). query is a prefix of
// body bytes and a text for checkQuery(lex, query[body:]), which is checked
// before it is prepared, and again when the cached statement of query was
// kept under another prefix; a statement kept under the same one was
// checked when it was prepared. It returns nil and no error once the cache
// is closed (the text checked): the caller then runs the query unprepared.
// The error of a text checkQuery refuses is checkQuery's.
func (c *stmtCache) acquire(ctx context.Context, db *sql.DB, query string, lex engine.Lexical, body int) (e *stmtEntry, fresh bool, err error) {
	e, closed := c.hold(query)
	if e != nil && e.body == body {
		return e, false, nil
	}
	if err := checkQuery(lex, query[body:]); err != nil {
		if e != nil {
			c.release(e, false)
		}
		return nil, false, err
	}
	if e != nil || closed {
		return e, false, nil
	}
	// Prepared without the lock: parsing may take a while, and other
	// queries should not wait for it.
	stmt, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, false, fmt.Errorf("sqlexec: query: %w", err)
	}

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		stmt.Close()
		return nil, false, nil
	}
	if e, ok := c.byQuery.Get(query); ok {
		// Another query prepared the same text meanwhile; keep one.
		e.state.Add(1)
		c.mu.Unlock()
		stmt.Close()
		return e, true, nil
	}
	e = &stmtEntry{query: query, stmt: stmt, body: body}
	e.state.Store(1)
	if !c.byQuery.Add(query, e, 1) {
		e.state.Or(gone) // a cache of size 0: closed on release
	}
	idle := c.takeIdle()
	c.mu.Unlock()
	for _, s := range idle {
		s.Close()
	}
	return e, true, nil
}

// hold returns the cached statement of query, held until release, or nil,
// and whether the cache is closed.
func (c *stmtCache) hold(query string) (*stmtEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byQuery.Get(query)
	if !ok {
		return nil, c.closed
	}
	e.state.Add(1)
	return e, c.closed
}

// release ends a query's hold on e. drop takes e out of the cache, as after
// a failure: the statement may have been prepared against a schema that
// has changed since, and the next query of its text prepares it again.
func (c *stmtCache) release(e *stmtEntry, drop bool) {
	if drop {
		c.mu.Lock()
		if e.state.Load()&gone == 0 {
			c.byQuery.Remove(e.query) // e is the entry of its query while not gone
		}
		idle := c.takeIdle()
		c.mu.Unlock()
		for _, s := range idle {
			s.Close()
		}
	}
	if e.state.Add(-1) == gone {
		e.stmt.Close()
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
