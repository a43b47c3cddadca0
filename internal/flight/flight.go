// Package flight runs each computation once for all the callers that ask
// for it by the same key at the same time (single flight), and hands the
// callers that joined a computation a share of its answer, each its own.
//
// The group is cut in shards by the key's hash, each with its own lock and
// map, so that callers of different keys (the runs of different values,
// most of them) seldom meet on a lock; a computation that no caller joins
// makes no channel, and its record goes back to a pool once it ends.
package flight

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
)

// ErrAbandoned is the error of a caller whose context ended while it
// waited for the computation it joined (wrapping the context's error).
var ErrAbandoned = errors.New("flight: the caller stopped waiting for the computation it joined")

// shards is the number of shards of a Group: a power of two.
const shards = 32

// Share is what the callers that joined a computation of V get: each its
// own Copy, so that nothing one caller holds is another's.
type Share[V any] interface {
	Copy() V
}

// PanicError is the error of the callers that joined a computation that
// panicked; the computing caller panics on.
type PanicError struct {
	// Value is what the computation panicked with.
	Value any
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("flight: the computation panicked: %v", e.Value)
}

// Group runs each computation of V once for the callers of one key at a
// time, the callers that joined it getting each a copy of its share S. A
// Group must not be copied after first use; its zero value is ready.
type Group[V any, S Share[V]] struct {
	seed   maphash.Seed
	once   sync.Once
	shards [shards]shard[V, S]
	pool   sync.Pool
}

type shard[V any, S Share[V]] struct {
	mu sync.Mutex
	m  map[string]*call[V, S]
	_  [40]byte // a cache line of its own, about
}

type call[V any, S Share[V]] struct {
	// done is closed when the computation ends. It is made by the first
	// caller that joins, under the shard's lock: a computation that no
	// caller joins (most of them) makes no channel.
	done chan struct{}
	// waiting counts the callers that joined (tests wait on it).
	waiting int
	v       V
	err     error
	// share is what the joined callers copy, made by the computing
	// caller before done is closed and never written after; shared
	// tells whether there is one.
	share  S
	shared bool
}

func (g *Group[V, S]) shardOf(key string) *shard[V, S] {
	g.once.Do(func() { g.seed = maphash.MakeSeed() })
	return &g.shards[maphash.String(g.seed, key)&(shards-1)]
}

// Do returns fn's answer for key: computed by this caller, or a copy of
// the share of the computation another caller of key has under way
// (joined true). share makes the share of a computed V for the callers
// that joined, once, by the computing caller before any joined caller has
// it; false when they compute their own. It may panic: the joined callers
// then compute their own, and the panic goes on in the computing caller. A caller waits for the computation at most as long as
// ctx lasts, then fails with ErrAbandoned; when the computing caller's
// error is context.Canceled (its own context ended) and ctx is alive, the
// caller computes again rather than inherit the cancellation. When the
// computation cannot be shared, each joined caller computes its own.
func (g *Group[V, S]) Do(ctx context.Context, key string, fn func() (V, error), share func(V) (S, bool)) (v V, joined bool, err error) {
	sh := g.shardOf(key)
	for {
		sh.mu.Lock()
		if c, ok := sh.m[key]; ok {
			if c.done == nil {
				c.done = make(chan struct{})
			}
			c.waiting++
			done := c.done
			sh.mu.Unlock()
			select {
			case <-done:
			case <-ctx.Done():
				return v, false, fmt.Errorf("%w: %w", ErrAbandoned, ctx.Err())
			}
			switch {
			case c.err != nil && errors.Is(c.err, context.Canceled) && ctx.Err() == nil:
				continue
			case c.err != nil:
				return v, false, c.err
			case !c.shared:
				v, err = fn()
				return v, false, err
			}
			return c.share.Copy(), true, nil
		}
		if sh.m == nil {
			sh.m = make(map[string]*call[V, S])
		}
		c, _ := g.pool.Get().(*call[V, S])
		if c == nil {
			c = &call[V, S]{}
		}
		sh.m[key] = c
		sh.mu.Unlock()
		return g.compute(sh, key, c, fn, share)
	}
}

// compute runs fn for c, the computation of key in sh, and ends it.
func (g *Group[V, S]) compute(sh *shard[V, S], key string, c *call[V, S], fn func() (V, error), share func(V) (S, bool)) (v V, joined bool, err error) {
	defer func() {
		p := recover()
		if p != nil {
			c.err = &PanicError{Value: p}
		}
		// Every caller that joined found c in the map, and made done if
		// none had: once c is out of the map, done is as it stays.
		sh.mu.Lock()
		delete(sh.m, key)
		done := c.done
		sh.mu.Unlock()
		if done == nil {
			// No caller holds c: it goes back to the pool.
			if p == nil {
				v, err = c.v, c.err
			}
			*c = call[V, S]{}
			g.pool.Put(c)
		} else {
			// Closed even if Share panics: the callers that joined then
			// compute their own, and the panic goes on here.
			defer close(done)
			if p == nil {
				v, err = c.v, c.err
				if err == nil {
					c.share, c.shared = share(c.v)
				}
			}
		}
		if p != nil {
			panic(p)
		}
	}()
	c.v, c.err = fn()
	return v, false, err
}

// Waiting returns how many callers wait now for the computation of key
// under way (0 when there is none), so that a test can let a computation
// end once every caller it means to join has joined.
func (g *Group[V, S]) Waiting(key string) int {
	sh := g.shardOf(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if c, ok := sh.m[key]; ok {
		return c.waiting
	}
	return 0
}

// WaitingAll is Waiting summed over every key.
func (g *Group[V, S]) WaitingAll() int {
	n := 0
	for i := range g.shards {
		sh := &g.shards[i]
		sh.mu.Lock()
		for _, c := range sh.m {
			n += c.waiting
		}
		sh.mu.Unlock()
	}
	return n
}
