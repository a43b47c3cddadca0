package lru

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// model is the obvious LRU: a slice, most recent first.
type model struct {
	max     int64
	entries []modelEntry
	evicted []int
}

type modelEntry struct {
	k, v int
	size int64
}

func (m *model) find(k int) int {
	return slices.IndexFunc(m.entries, func(e modelEntry) bool { return e.k == k })
}

func (m *model) used() int64 {
	var n int64
	for _, e := range m.entries {
		n += e.size
	}
	return n
}

func (m *model) get(k int) (int, bool) {
	i := m.find(k)
	if i < 0 {
		return 0, false
	}
	e := m.entries[i]
	m.entries = slices.Insert(slices.Delete(m.entries, i, i+1), 0, e)
	return e.v, true
}

func (m *model) add(k, v int, size int64) bool {
	size = max(size, 1)
	i := m.find(k)
	if i >= 0 {
		m.entries = slices.Delete(m.entries, i, i+1)
	}
	if size > m.max {
		if i >= 0 {
			m.evicted = append(m.evicted, k)
		}
		return false
	}
	m.entries = slices.Insert(m.entries, 0, modelEntry{k, v, size})
	for m.used() > m.max {
		last := m.entries[len(m.entries)-1]
		m.entries = m.entries[:len(m.entries)-1]
		m.evicted = append(m.evicted, last.k)
	}
	return true
}

func (m *model) remove(k int) bool {
	i := m.find(k)
	if i < 0 {
		return false
	}
	m.entries = slices.Delete(m.entries, i, i+1)
	m.evicted = append(m.evicted, k)
	return true
}

func (m *model) removeOdd() int {
	n := 0
	for _, e := range slices.Clone(m.entries) {
		if e.v%2 == 1 {
			m.remove(e.k)
			n++
		}
	}
	return n
}

// TestAgainstModel runs random operations on a Cache and on the model and
// compares every answer, the order of eviction and the sizes.
func TestAgainstModel(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 7))
		limit := int64(1 + r.IntN(40))
		var evicted []int
		c := New[int, int](limit, func(k, _ int) { evicted = append(evicted, k) })
		m := &model{max: limit}
		for step := range 400 {
			k, v, size := r.IntN(12), r.IntN(100), int64(r.IntN(12))
			var got, want string
			switch r.IntN(5) {
			case 0, 1:
				gv, gok := c.Get(k)
				wv, wok := m.get(k)
				got, want = fmt.Sprint(gv, gok), fmt.Sprint(wv, wok)
			case 2, 3:
				got, want = fmt.Sprint(c.Add(k, v, size)), fmt.Sprint(m.add(k, v, size))
			case 4:
				if r.IntN(4) == 0 {
					got = fmt.Sprint(c.RemoveFunc(func(_, v int) bool { return v%2 == 1 }))
					want = fmt.Sprint(m.removeOdd())
				} else {
					got, want = fmt.Sprint(c.Remove(k)), fmt.Sprint(m.remove(k))
				}
			}
			require.Equal(t, want, got, "seed %d step %d", seed, step)
			require.Len(t, m.entries, c.Len(), "seed %d step %d: len", seed, step)
			require.Equal(t, m.used(), c.Size(), "seed %d step %d: len", seed, step)
			require.LessOrEqual(t, c.Size(), limit, "seed %d step %d: len", seed, step)
			if !slices.Equal(evicted, m.evicted) && !(len(evicted) == 0 && len(m.evicted) == 0) {
				t.Fatalf("seed %d step %d: evicted %v, want %v", seed, step, evicted, m.evicted)
			}
		}
	}
}

func TestReplaceKeepsOneEntry(t *testing.T) {
	evicted := 0
	c := New[string, string](10, func(string, string) { evicted++ })
	c.Add("a", "1", 4)
	c.Add("a", "2", 6)
	v, _ := c.Get("a")
	require.Equal(t, "2", v)
	require.Equal(t, 1, c.Len())
	require.Equal(t, int64(6), c.Size())
	require.Equal(t, 0, evicted)
	require.False(t, c.Add("a", "3", 11), "an entry larger than the cache must drop the old value: len")
	require.Equal(t, 0, c.Len(), "an entry larger than the cache must drop the old value: len")
	require.Equal(t, 1, evicted, "an entry larger than the cache must drop the old value: len")
}

func TestZeroMaxHoldsNothing(t *testing.T) {
	c := New[int, int](0, nil)
	require.False(t, c.Add(1, 1, 1), "a cache of max 0 kept an entry")
	require.Equal(t, 0, c.Len(), "a cache of max 0 kept an entry")
}

// TestPeekSecondChance: an entry Peek found is not evicted while one it did
// not find is left; it is moved to the front instead, once, so that a cache
// whose every entry was peeked still makes room.
func TestPeekSecondChance(t *testing.T) {
	var evicted []int
	c := New[int, int](3, func(k, _ int) { evicted = append(evicted, k) })
	for k := range 3 {
		c.Add(k, k*10, 1) // order, most recent first: 2 1 0
	}
	v, ok := c.Peek(0)
	require.True(t, ok)
	require.Equal(t, 0, v)
	_, ok = c.Peek(9)
	require.False(t, ok, "Peek found a key never added")
	c.Add(3, 30, 1) // 0 was peeked: 1, the least recent not peeked, goes
	require.Equal(t, []int{1}, evicted)
	c.Add(4, 40, 1) // 0 was moved to the front after 2: 2 goes
	require.Equal(t, []int{1, 2}, evicted)

	for _, k := range []int{0, 3, 4} {
		_, ok := c.Peek(k)
		require.True(t, ok, "key %d", k)
	}
	c.Add(5, 50, 1) // every entry peeked: each gets its chance, then the oldest goes
	require.Equal(t, []int{1, 2, 0}, evicted)
	require.Equal(t, 3, c.Len())
}

// TestPeekConcurrent: Peek from many goroutines at once under a read lock,
// with writers under the write lock (run with -race).
func TestPeekConcurrent(t *testing.T) {
	var mu sync.RWMutex
	c := New[int, int](8, nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				k := (i + g) % 16
				mu.RLock()
				v, ok := c.Peek(k)
				mu.RUnlock()
				if ok {
					require.Equal(t, k*2, v)
					continue
				}
				mu.Lock()
				c.Add(k, k*2, 1)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, c.Len(), 8)
}

func BenchmarkGetAdd(b *testing.B) {
	c := New[int, int](1024, nil)
	for i := 0; b.Loop(); i++ {
		if _, ok := c.Get(i % 2048); !ok {
			c.Add(i%2048, i, 1)
		}
	}
}
