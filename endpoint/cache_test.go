package endpoint

import (
	"fmt"
	"sync"
	"testing"
)

func TestTemplateCache(t *testing.T) {
	tc := newTemplateCache(3)
	key := func(i int) cacheKey { return cacheKey{"1", fmt.Sprint("e", i), 1} }
	cs := make([]*compiled, 5)
	for i := range cs {
		cs[i] = &compiled{}
		_, gen := tc.get(key(i))
		tc.put(key(i), cs[i], gen)
		if i == 2 {
			tc.get(key(0)) // 0 becomes the most recent
		}
	}
	if tc.len() != 3 {
		t.Fatalf("len = %d, want the bound 3", tc.len())
	}
	for i, want := range []bool{true, false, false, true, true} {
		c, _ := tc.get(key(i))
		if (c != nil) != want || c != nil && c != cs[i] {
			t.Errorf("entry %d present = %v, want %v", i, c != nil, want)
		}
	}

	// A put with a generation older than a purge is dropped.
	_, gen := tc.get(key(9))
	tc.purge("other", nil)
	tc.put(key(9), &compiled{}, gen)
	if c, _ := tc.get(key(9)); c != nil {
		t.Fatal("a stale put was cached")
	}
	if tc.len() != 3 {
		t.Fatalf("purging another project dropped entries: len %d", tc.len())
	}
	tc.purge("1", func(k cacheKey) bool { return k.id == "e3" })
	if c, _ := tc.get(key(3)); c != nil || tc.len() != 2 {
		t.Fatalf("purge by id left %v, len %d", c, tc.len())
	}
	tc.purge("1", nil)
	if tc.len() != 0 {
		t.Fatalf("project purge left %d", tc.len())
	}

	off := newTemplateCache(-1)
	off.put(key(1), &compiled{}, 0)
	if off.len() != 0 {
		t.Fatal("a disabled cache stored an entry")
	}
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
				if _, gen := tc.get(k); i%3 == 0 {
					tc.put(k, &compiled{}, gen)
				}
				if i%50 == 0 {
					tc.purge("1", nil)
				}
			}
		}()
	}
	wg.Wait()
	if tc.len() > 8 {
		t.Fatalf("len %d above the bound", tc.len())
	}
}
