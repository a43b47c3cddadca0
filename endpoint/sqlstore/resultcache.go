package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// DefaultCacheMaxEntryBytes is the largest answer a ResultCache keeps
// unless CacheOptions says otherwise.
const DefaultCacheMaxEntryBytes = 1 << 20

// cachePruneEvery is how many writes of a ResultCache pass between two
// deletions of its expired entries.
const cachePruneEvery = 64

// CacheOptions configure Store.ResultCache.
type CacheOptions struct {
	// MaxEntryBytes is the largest value kept (a larger one is not
	// stored); 0 means DefaultCacheMaxEntryBytes.
	MaxEntryBytes int
	// Now is the clock that prunes expired entries; nil means time.Now.
	// Give the Service's clock.
	Now func() time.Time
}

// ResultCache returns an driver.ResultCache in the store's database, for
// servers that share answers across processes. An entry is one row; Set
// replaces it. Expired rows are deleted every 64th Set (entries of more
// than MaxEntryBytes are not kept, so the table is bounded by the answers
// of one freshness period).
func (s *Store) ResultCache(opts CacheOptions) driver.ResultCache {
	if opts.MaxEntryBytes <= 0 {
		opts.MaxEntryBytes = DefaultCacheMaxEntryBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	d := s.dialect
	return &resultCache{
		s: s, opts: opts,
		get:   rebind(d, `SELECT body, expires_ns FROM `+cacheTable+` WHERE cache_key = ?`),
		upd:   rebind(d, `UPDATE `+cacheTable+` SET expires_ns = ?, body = ? WHERE cache_key = ?`),
		ins:   rebind(d, `INSERT INTO `+cacheTable+` (cache_key, expires_ns, body) VALUES (?, ?, ?)`),
		prune: rebind(d, `DELETE FROM `+cacheTable+` WHERE expires_ns <= ?`),
	}
}

type resultCache struct {
	s                    *Store
	opts                 CacheOptions
	get, upd, ins, prune string
	writes               atomic.Int64
}

// Get implements driver.ResultCache.
func (c *resultCache) Get(ctx context.Context, key string, now time.Time) ([]byte, bool, error) {
	var (
		body    string
		expires int64
	)
	err := c.s.queryRow(ctx, c.get, key).Scan(&body, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("sqlstore: result cache: %w", err)
	}
	if now.UnixNano() >= expires {
		return nil, false, nil
	}
	return []byte(body), true, nil
}

// Set implements driver.ResultCache. A value that is not UTF-8 text
// (the Service's never is) is not kept, since text columns refuse it.
func (c *resultCache) Set(ctx context.Context, key string, value []byte, expires time.Time) error {
	if len(value) > c.opts.MaxEntryBytes || !utf8.Valid(value) {
		return nil
	}
	// One statement at a time, no transaction: an UPDATE of the row, and
	// an INSERT when there was none. A unique violation is a concurrent
	// Set that inserted first, and a deadlock (InnoDB's gap locks between
	// concurrent writers) a write the cache may drop: either way a value
	// as good is there or the key misses, which a cache may.
	res, err := c.s.exec(ctx, c.upd, expires.UnixNano(), string(value), key)
	if err == nil {
		if n, nerr := res.RowsAffected(); nerr == nil && n == 0 {
			_, err = c.s.exec(ctx, c.ins, key, expires.UnixNano(), string(value))
		}
	}
	if err != nil && !isUniqueViolation(err) && !isDeadlock(err) {
		return fmt.Errorf("sqlstore: result cache: %w", err)
	}
	if c.writes.Add(1)%cachePruneEvery == 0 {
		if _, err := c.s.exec(ctx, c.prune, c.opts.Now().UnixNano()); err != nil {
			return fmt.Errorf("sqlstore: result cache: pruning: %w", err)
		}
	}
	return nil
}
