package budget

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// DefaultMaxKeys bounds the counters a Memory keeps (about 150 bytes
// each).
const DefaultMaxKeys = 100_000

// Memory is the in-process Counter: counts kept in this process's memory,
// so that each process allows each budget on its own. It is the default of
// a single process, and costs a map lookup under a mutex per Take.
//
// A counter idle for two windows weighs nothing and is dropped; past
// MaxKeys counters, the least recently taken is dropped (and its count
// forgotten). It is safe for concurrent use.
type Memory struct {
	now     func() time.Time
	maxKeys int

	mu  sync.Mutex
	m   map[memKey]*list.Element
	lru list.List // of *memEntry, most recently taken at the front
}

type memKey struct {
	key    string
	window time.Duration
}

type memEntry struct {
	k    memKey
	w    Window
	last time.Time
}

// MemoryConfig configures NewMemory; its zero value is the defaults.
type MemoryConfig struct {
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// MaxKeys bounds the counters kept; 0 is DefaultMaxKeys.
	MaxKeys int
}

// NewMemory returns an empty in-process Counter.
func NewMemory(cfg MemoryConfig) *Memory {
	m := &Memory{now: cfg.Now, maxKeys: cfg.MaxKeys, m: map[memKey]*list.Element{}}
	if m.now == nil {
		m.now = time.Now
	}
	if m.maxKeys <= 0 {
		m.maxKeys = DefaultMaxKeys
	}
	return m
}

// Take counts a run of key within limit per window (see Counter). It does
// no I/O, and fails only for arguments out of range.
func (m *Memory) Take(_ context.Context, key string, limit int64, window time.Duration) (Decision, error) {
	if err := Check(key, limit, window); err != nil {
		return Decision{}, err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memKey{key, window}
	el, ok := m.m[k]
	if !ok {
		m.expire(now)
		el = m.lru.PushFront(&memEntry{k: k})
		m.m[k] = el
	} else {
		m.lru.MoveToFront(el)
	}
	e := el.Value.(*memEntry)
	e.last = now
	return e.w.Take(now, limit, window), nil
}

// expire drops, before a new counter is added, the counters idle for two
// of their windows, and the least recently taken ones past maxKeys. The
// walk from the back passes over at most expireSkips counters still of use
// (long windows), so a Take costs in proportion to what it drops.
func (m *Memory) expire(now time.Time) {
	kept := 0
	for el := m.lru.Back(); el != nil && kept < expireSkips; {
		prev := el.Prev()
		e := el.Value.(*memEntry)
		if len(m.m) >= m.maxKeys || now.Sub(e.last) >= 2*e.k.window {
			m.lru.Remove(el)
			delete(m.m, e.k)
		} else {
			kept++
		}
		el = prev
	}
}

// expireSkips is how many counters still of use one expire walk passes.
const expireSkips = 8

// Len is how many counters m holds.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}
