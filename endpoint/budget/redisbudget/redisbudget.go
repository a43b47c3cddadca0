// Package redisbudget keeps budget counters (budget.Counter) in Redis, for
// hosts that run it: every process on one Redis allows one budget. It is a
// package of its own so that a host without Redis does not link a Redis
// client.
//
// Each Take is one round trip: a Lua script (EVALSHA, loaded on first use)
// that reads the key's two fixed windows, checks and counts in one atomic
// step, and keeps time by Redis's clock (TIME), as go-redis/redis_rate
// does, so that the processes' clocks need not agree. A counter is a hash
// that expires two windows after its last run.
package redisbudget

import (
	"context"
	"fmt"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/budget"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix starts the name of every Redis key a Counter writes.
const DefaultPrefix = "endpointkit:budget:"

// Counter is a budget.Counter in Redis. It is safe for concurrent use.
type Counter struct {
	rdb    redis.Scripter
	prefix string
}

// New returns a Counter on rdb (a *redis.Client, *redis.ClusterClient or
// *redis.Ring: each counter is one Redis key, so a cluster spreads them),
// whose keys start with prefix ("" is DefaultPrefix).
func New(rdb redis.Scripter, prefix string) *Counter {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Counter{rdb: rdb, prefix: prefix}
}

// take is the script. KEYS[1] is the counter, ARGV the window and the
// limit, in milliseconds and runs. It answers {allowed, prev, curr,
// elapsed}, elapsed being milliseconds into the current fixed window.
// Counts stay far below 2^53, where Lua's numbers are exact, as long as
// limit * window in milliseconds does: 2.5 billion runs per hour.
var take = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local size = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local start = now - (now % size)
local h = redis.call('HMGET', KEYS[1], 's', 'p', 'c')
local s, prev, curr = tonumber(h[1]), tonumber(h[2]) or 0, tonumber(h[3]) or 0
if s == nil then
  s, prev, curr = start, 0, 0
elseif s == start - size then
  s, prev, curr = start, curr, 0
elseif s < start - size then
  s, prev, curr = start, 0, 0
end
local elapsed = now - s
if elapsed < 0 then elapsed = 0 end
if elapsed > size then elapsed = size end
local ok = 0
if prev * (size - elapsed) + curr * size <= (limit - 1) * size then
  ok = 1
  curr = curr + 1
end
redis.call('HSET', KEYS[1], 's', s, 'p', prev, 'c', curr)
redis.call('PEXPIRE', KEYS[1], 2 * size + (size - elapsed))
return {ok, prev, curr, elapsed}
`)

// Take counts a run of key within limit per window (see budget.Counter).
func (c *Counter) Take(ctx context.Context, key string, limit int64, window time.Duration) (budget.Decision, error) {
	if err := budget.Check(key, limit, window); err != nil {
		return budget.Decision{}, err
	}
	ms := window.Milliseconds()
	name := fmt.Sprintf("%s%d:%s", c.prefix, ms, key)
	r, err := take.Run(ctx, c.rdb, []string{name}, ms, limit).Int64Slice()
	if err != nil {
		return budget.Decision{}, fmt.Errorf("redisbudget: counting a run of %q: %w", key, err)
	}
	if len(r) != 4 {
		return budget.Decision{}, fmt.Errorf("redisbudget: counting a run of %q: the script answered %d values, want 4", key, len(r))
	}
	prev, curr, elapsed := r[1], r[2], time.Duration(r[3])*time.Millisecond
	if r[0] == 1 {
		return budget.Decision{Allowed: true, Count: curr}, nil
	}
	// Redis counts in milliseconds: the wait is rounded up to one, so that
	// a retry on time is not early by Redis's clock.
	wait := budget.Wait(prev, curr, limit, elapsed, window)
	wait = (wait + time.Millisecond - 1).Truncate(time.Millisecond)
	return budget.Decision{Count: curr, RetryAfter: wait}, nil
}
