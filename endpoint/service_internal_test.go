package endpoint

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newNoRows is a Service over in-memory stores whose executor answers
// every query with no rows; it returns the executor too.
func newNoRows(t *testing.T) (*Service, *heldexec.Fake) {
	t.Helper()
	exec := heldexec.NewFake(nil, heldexec.Answer(&driver.Result{}))
	s, err := New(Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: exec})
	require.NoError(t, err)
	return s, exec
}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestTemplateCache(t *testing.T) {
	tc := newTemplateCache(3)
	key := func(i int) cacheKey { return cacheKey{"1", fmt.Sprint("e", i), 1} }
	get := func(k cacheKey) *compiled { c, _, _, _ := tc.get(k); return c }
	cs := make([]*compiled, 5)
	for i := range cs {
		cs[i] = &compiled{}
		_, _, _, gen := tc.get(key(i))
		tc.put(key(i), cs[i], t0, gen)
		if i == 2 {
			tc.get(key(0)) // 0 becomes the most recent
		}
	}
	require.Equal(t, 3, tc.len(), "len")
	for i, want := range []bool{true, false, false, true, true} {
		c := get(key(i))
		if (c != nil) != want || c != nil && c != cs[i] {
			t.Errorf("entry %d present = %v, want %v", i, c != nil, want)
		}
	}

	// A put with a generation older than a purge is dropped.
	_, _, _, gen := tc.get(key(9))
	tc.purge("other", nil)
	tc.put(key(9), &compiled{}, t0, gen)
	require.Nil(t, get(key(9)), "a stale put was cached")
	require.Equal(t, 3, tc.len(), "purging another project dropped entries: len")
	tc.purge("1", func(k cacheKey) bool { return k.id == "e3" })
	if c := get(key(3)); c != nil || tc.len() != 2 {
		t.Fatalf("purge by id left %v, len %d", c, tc.len())
	}
	tc.purge("1", nil)
	require.Equal(t, 0, tc.len(), "project purge left")

	off := newTemplateCache(-1)
	off.put(key(1), &compiled{}, t0, 0)
	require.Equal(t, 0, off.len(), "a disabled cache stored an entry")
}

// TestLRUChecked: an entry keeps the time it was checked, a put of the same
// key refreshes it, and remove drops an entry without making reads begun
// before it unfit to store.
func TestLRUChecked(t *testing.T) {
	c := newLRU[string, int](2)
	_, _, _, gen := c.get("a")
	c.put("a", 1, t0, gen)
	v, checked, ok, gen := c.get("a")
	if !ok || v != 1 || !checked.Equal(t0) {
		t.Fatalf("get = %v %v %v", v, checked, ok)
	}
	c.put("a", 2, t0.Add(time.Second), gen)
	if v, checked, _, _ := c.get("a"); v != 2 || !checked.Equal(t0.Add(time.Second)) {
		t.Fatalf("after a second put: %v checked %v", v, checked)
	}
	_, _, _, gen = c.get("b")
	c.remove("a")
	c.put("b", 3, t0, gen)
	if _, _, ok, _ := c.get("a"); ok {
		t.Fatal("removed entry still there")
	}
	if v, _, ok, _ := c.get("b"); !ok || v != 3 {
		t.Fatal("a remove made a put of another key fail")
	}
}

// TestRecordCacheForget: a write drops the records of the endpoint's id
// under any name, and a record cached under the written name, in its
// project only.
func TestRecordCacheForget(t *testing.T) {
	rc := recordCache{newLRU[recordKey, *driver.Endpoint](10)}
	put := func(project, name, id string) {
		_, _, _, gen := rc.get(recordKey{project, name})
		rc.put(recordKey{project, name}, &driver.Endpoint{ID: id, Name: name}, t0, gen)
	}
	has := func(project, name string) bool { _, _, ok, _ := rc.get(recordKey{project, name}); return ok }
	put("1", "a", "id-a")
	put("1", "old-b", "id-b")
	put("1", "c", "id-c")
	put("2", "a", "id-a2")
	rc.forget("1", "id-b", "")
	if has("1", "old-b") || !has("1", "a") || !has("1", "c") {
		t.Fatal("forget by id dropped the wrong records")
	}
	rc.forget("1", "id-new", "c")
	if has("1", "c") || !has("1", "a") || !has("2", "a") {
		t.Fatal("forget by name dropped the wrong records")
	}
}

// TestFresh: an entry is trusted for less than RecheckInterval, not at a
// clock that went back, and never with a negative interval.
func TestFresh(t *testing.T) {
	s := &Service{cfg: Config{RecheckInterval: time.Second}}
	for _, tc := range []struct {
		age  time.Duration
		want bool
	}{{0, true}, {999 * time.Millisecond, true}, {time.Second, false}, {-time.Millisecond, false}} {
		assert.Equal(t, tc.want, s.fresh(t0, t0.Add(tc.age)), "fresh at age %v", tc.age)
	}
	s.cfg.RecheckInterval = -1
	assert.False(t, s.fresh(t0, t0), "a negative interval trusted an entry")
}

func TestTemplateCacheConcurrent(t *testing.T) {
	tc := newTemplateCache(8)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := cacheKey{"1", fmt.Sprint(i % 13), w}
				if _, _, _, gen := tc.get(k); i%3 == 0 {
					tc.put(k, &compiled{}, t0, gen)
				}
				if i%50 == 0 {
					tc.purge("1", nil)
				}
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, tc.len(), 8, "len")
}

// TestForgettingStore: every write of an endpoint through the Service's
// store drops the Service's cached record of it, so that the next run reads
// it again; MarkExecuted, a run's own bookkeeping, drops nothing.
func TestForgettingStore(t *testing.T) {
	ctx := context.Background()
	s, _ := newNoRows(t)
	q := Query{Kind: KindSQL, SQL: "SELECT 1"}
	if _, err := s.Create(ctx, "1", CreateRequest{Name: "ep", Query: &q}); err != nil {
		t.Fatal(err)
	}
	ep, err := s.get(ctx, "1", "ep") // the stored record
	require.NoError(t, err)
	cached := func() bool {
		_, _, ok, _ := s.records.get(recordKey{"1", "ep"})
		return ok
	}
	for _, w := range []struct {
		name  string
		write func() error
		drops bool
	}{
		{"MarkExecuted", func() error { return s.cfg.Endpoints.MarkExecuted(ctx, "1", ep.ID, s.now()) }, false},
		{"SetMaterialization", func() error {
			return s.cfg.Endpoints.SetMaterialization(ctx, "1", ep.ID, driver.MaterializationState{Status: StatusFailed})
		}, true},
		{"Update", func() error { ep.Description = "d"; return s.cfg.Endpoints.Update(ctx, ep, nil) }, true},
		{"a failed Update", func() error { ep.CurrentVersion = 9; return s.cfg.Endpoints.Update(ctx, ep, nil) }, true},
		{"Delete", func() error { return s.cfg.Endpoints.Delete(ctx, "1", ep.ID) }, true},
	} {
		_, err := s.Run(ctx, "1", "ep", RunRequest{})
		require.NoError(t, err, "before %s", w.name)
		require.True(t, cached(), "before %s: a run cached no record", w.name)
		_ = w.write()
		assert.NotEqual(t, w.drops, cached(), "%s: record still cached = %v, want %v", w.name, cached(), !w.drops)
	}
	if _, err := s.Run(ctx, "1", "ep", RunRequest{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("run after Delete: %v", err)
	}
	c, _, _, _ := s.cache.get(cacheKey{"1", ep.ID, 1})
	require.Nil(t, c, "Delete left the compiled version cached")
}
