package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// countersTable holds budget counters (Store.Counter): one row per key and
// window size, with its two fixed windows.
const countersTable = "endpointkit_budget_counters"

// countersMigration is version 10: the budget counters. Instants are Unix
// milliseconds. counter_key is the hex SHA-256 of the caller's key, so
// that any key fits the primary key on every engine.
func countersMigration(d engine.Store) []string {
	return []string{strings.NewReplacer("KEY_T", d.KeyType()).Replace(`CREATE TABLE IF NOT EXISTS ` + countersTable + ` (
	counter_key KEY_T NOT NULL,
	window_ms BIGINT NOT NULL,
	start_ms BIGINT NOT NULL,
	prev BIGINT NOT NULL,
	curr BIGINT NOT NULL,
	ok SMALLINT NOT NULL,
	expires_ms BIGINT NOT NULL,
	info BIGINT NOT NULL,
	PRIMARY KEY (counter_key, window_ms)
)`)}
}

// CounterExpiry is how often a Counter deletes the counters that weigh
// nothing any more (two windows after their last run).
const CounterExpiry = time.Minute

// Counter is a budget.Counter in the store's database, so that every
// process on one database allows one budget. Each Take is one statement,
// one round trip: an upsert of the key's row that checks and counts in one
// atomic step (INSERT ... ON CONFLICT DO UPDATE ... RETURNING on PostgreSQL
// and SQLite; on MySQL and MariaDB, which return nothing from an upsert,
// INSERT ... ON DUPLICATE KEY UPDATE handing the count back through
// LAST_INSERT_ID(expr), read from the statement's own result, and a second
// read only when the run is refused, to say when to retry). Time is the
// callers' clock, in milliseconds: processes whose clocks differ by d
// disagree on the windows' edges by d.
//
// Once per CounterExpiry a Take also deletes the rows that weigh nothing;
// a failure of that is logged and counted (ExpiryFailures), and the Take
// stands. Call Migrate first: the table is part of the schema.
type Counter struct {
	s    *Store
	take string
	args []string // the names of take's markers, in order
	// lastInsertID tells that the upsert hands its answer back through
	// LAST_INSERT_ID (engine.Store.UpsertReturns false: MySQL).
	lastInsertID bool
	now          func() time.Time
	logger       *slog.Logger

	nextExpiry   atomic.Int64 // Unix ms
	expiring     sync.Mutex
	expiryFailed atomic.Int64
}

// Counter returns the budget counter of the store's database.
func (s *Store) Counter() *Counter {
	c := &Counter{s: s, lastInsertID: !s.dialect.UpsertReturns(), now: time.Now, logger: slog.Default()}
	c.take, c.args = counterStatement(s.dialect)
	return c
}

// WithLogger sets where c logs the failures to delete expired counters
// (nil: slog.Default()), and returns c.
func (c *Counter) WithLogger(l *slog.Logger) *Counter {
	if l != nil {
		c.logger = l
	}
	return c
}

// ExpiryFailures is how many deletions of expired counters failed.
func (c *Counter) ExpiryFailures() int64 { return c.expiryFailed.Load() }

// counterStatement returns the upsert of a Take, in the dialect's markers,
// and the names of its markers in order. The names stand for:
//
//	key   the counter_key         size  the window in ms
//	n     the current window's start, now - now%size
//	nb    n - size, the previous window's start
//	rest  size - elapsed, elapsed = now - n
//	room  (limit-1) * size        exp   n + 2*size
//
// Every value is bound; the text is fixed per dialect. Read against the
// stored row (T.start_ms, T.prev, T.curr), the window is advanced as
// budget.Window.Advance does: kept when stored start >= n (a process whose
// clock is behind counts into the window it finds, elapsed 0), shifted
// when it is nb, emptied when older.
func counterStatement(d engine.Store) (string, []string) {
	t := countersTable
	cast := d.IntegerCast()
	b := func(name string) string { return "CAST(:" + name + " AS " + cast + ")" }
	S, P, C := t+".start_ms", t+".prev", t+".curr"
	prev := "(CASE WHEN " + S + " >= " + b("n") + " THEN " + P + " WHEN " + S + " = " + b("nb") + " THEN " + C + " ELSE 0 END)"
	curr := "(CASE WHEN " + S + " >= " + b("n") + " THEN " + C + " ELSE 0 END)"
	rest := "(CASE WHEN " + S + " > " + b("n") + " THEN " + b("size") + " ELSE " + b("rest") + " END)"
	cond := prev + " * " + rest + " + " + curr + " * " + b("size") + " <= " + b("room")
	start := "(CASE WHEN " + S + " > " + b("n") + " THEN " + S + " ELSE " + b("n") + " END)"
	exp := "(CASE WHEN " + S + " > " + b("n") + " THEN " + S + " + 2 * " + b("size") + " ELSE " + b("exp") + " END)"
	ok := "(CASE WHEN " + cond + " THEN 1 ELSE 0 END)"
	insert := `INSERT INTO ` + t + ` (counter_key, window_ms, start_ms, prev, curr, ok, expires_ms, info) VALUES (:key, ` + b("size") + `, ` + b("n") + `, 0, 1, 1, ` + b("exp") + `, `
	var q string
	if !d.UpsertReturns() {
		// MySQL: assignments run left to right, each seeing the ones before: ok
		// first (from the stored row), then prev and curr from the stored
		// start, curr adding the new ok, the start last, and info hands
		// curr and ok back through LAST_INSERT_ID. A new row hands back 3
		// (curr 1, allowed).
		q = insert + `LAST_INSERT_ID(3)) ON DUPLICATE KEY UPDATE ok = ` + ok +
			`, prev = ` + prev + `, curr = ` + curr + ` + ` + t + `.ok, expires_ms = ` + exp +
			`, start_ms = ` + start + `, info = LAST_INSERT_ID(` + t + `.curr * 2 + ` + t + `.ok)`
	} else {
		// Every assignment reads the stored row.
		q = insert + `0) ON CONFLICT (counter_key, window_ms) DO UPDATE SET ok = ` + ok +
			`, prev = ` + prev + `, curr = ` + curr + ` + ` + ok + `, start_ms = ` + start +
			`, expires_ms = ` + exp + ` RETURNING ok, prev, curr, start_ms`
	}
	var names []string
	var out strings.Builder
	for {
		i := strings.IndexByte(q, ':')
		if i < 0 {
			out.WriteString(q)
			break
		}
		j := i + 1
		for j < len(q) && q[j] >= 'a' && q[j] <= 'z' {
			j++
		}
		out.WriteString(q[:i])
		out.WriteByte('?')
		names = append(names, q[i+1:j])
		q = q[j:]
	}
	return rebind(d, out.String()), names
}

// Take counts a run of key within limit per window (see budget.Counter).
func (c *Counter) Take(ctx context.Context, key string, limit int64, window time.Duration) (budget.Decision, error) {
	if err := budget.Check(key, limit, window); err != nil {
		return budget.Decision{}, err
	}
	sum := sha256.Sum256([]byte(key))
	hkey := hex.EncodeToString(sum[:])
	size := window.Milliseconds()
	now := c.now().UnixMilli()
	n := now - ((now%size)+size)%size
	vals := map[string]any{
		"key": hkey, "size": size, "n": n, "nb": n - size, "rest": size - (now - n),
		"room": (limit - 1) * size, "exp": n + 2*size,
	}
	args := make([]any, len(c.args))
	for i, name := range c.args {
		args[i] = vals[name]
	}
	c.expire(ctx, now)
	var ok, prev, curr, start int64
	if c.lastInsertID {
		res, err := c.s.exec(ctx, c.take, args...)
		if err != nil {
			return budget.Decision{}, fmt.Errorf("sqlstore: counting a run of %q: %w", key, err)
		}
		info, err := res.LastInsertId()
		if err != nil {
			return budget.Decision{}, fmt.Errorf("sqlstore: counting a run of %q: %w", key, err)
		}
		ok, curr = info%2, info/2
		if ok == 1 {
			return budget.Decision{Allowed: true, Count: curr}, nil
		}
		err = c.s.queryRow(ctx, rebind(c.s.dialect, `SELECT prev, curr, start_ms FROM `+countersTable+` WHERE counter_key = ? AND window_ms = ?`), hkey, size).Scan(&prev, &curr, &start)
		if err != nil {
			return budget.Decision{}, fmt.Errorf("sqlstore: reading the count of %q: %w", key, err)
		}
	} else {
		err := c.s.queryRow(ctx, c.take, args...).Scan(&ok, &prev, &curr, &start)
		if err != nil {
			return budget.Decision{}, fmt.Errorf("sqlstore: counting a run of %q: %w", key, err)
		}
		if ok == 1 {
			return budget.Decision{Allowed: true, Count: curr}, nil
		}
	}
	elapsed := time.Duration(max(now-start, 0)) * time.Millisecond
	// Counted in milliseconds: the wait is rounded up to one.
	wait := budget.Wait(prev, curr, limit, elapsed, window)
	wait = (wait + time.Millisecond - 1).Truncate(time.Millisecond)
	return budget.Decision{Count: curr, RetryAfter: max(wait, time.Millisecond)}, nil
}

// expire deletes the counters that weigh nothing, once per CounterExpiry
// (by one Take of this Counter; the others go on).
func (c *Counter) expire(ctx context.Context, now int64) {
	next := c.nextExpiry.Load()
	if now < next || !c.expiring.TryLock() {
		return
	}
	defer c.expiring.Unlock()
	if !c.nextExpiry.CompareAndSwap(next, now+CounterExpiry.Milliseconds()) {
		return
	}
	_, err := c.s.exec(ctx, rebind(c.s.dialect, `DELETE FROM `+countersTable+` WHERE expires_ms < ?`), now)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, sql.ErrConnDone) {
		c.expiryFailed.Add(1)
		c.logger.ErrorContext(ctx, "sqlstore: deleting expired budget counters failed", "err", err)
	}
}
