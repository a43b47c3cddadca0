// Package budgettest is the conformance suite of budget.Counter: every
// counter store (in-process, SQL, Redis, a host's own) runs Run in its
// tests, so that each keeps the promises budget.Counter's doc makes.
//
// The suite takes real time: the checks of windows sliding and expiring
// sleep through windows of a second or less (about 6 s in all, the checks running in parallel).
package budgettest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/budget"
)

// Options says what the store under test promises besides the contract.
type Options struct {
	// Shared is set for a store that several processes share: each call
	// of the suite's newCounter then returns another Counter (as another
	// process would hold) on the one store, and the suite checks that
	// their counts are one.
	Shared bool
}

// Run runs every check on counters newCounter returns. Each check uses
// keys of its own (random), so a shared store may keep what earlier runs
// left.
func Run(t *testing.T, newCounter func(t *testing.T) budget.Counter, opts Options) {
	checks := []struct {
		name string
		fn   func(t *testing.T, c budget.Counter)
	}{
		{"Admits", testAdmits},
		{"RefusalCountsNothing", testRefusalCountsNothing},
		{"Keys", testKeys},
		{"Windows", testWindows},
		{"Concurrent", testConcurrent},
		{"RetryAfter", testRetryAfter},
		{"Sliding", testSliding},
		{"Invalid", testInvalid},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, newCounter(t))
		})
	}
	if opts.Shared {
		t.Run("Shared", func(t *testing.T) {
			t.Parallel()
			testShared(t, newCounter(t), newCounter(t))
		})
	}
}

// key returns a key no other run of the suite uses.
func key(t *testing.T, name string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "budgettest/" + name + "/" + hex.EncodeToString(b[:])
}

func take(t *testing.T, c budget.Counter, key string, limit int64, window time.Duration) budget.Decision {
	t.Helper()
	d, err := c.Take(context.Background(), key, limit, window)
	if err != nil {
		t.Fatalf("Take(%q, %d, %s): %v", key, limit, window, err)
	}
	return d
}

// fill takes n runs of key, each of which must be allowed.
func fill(t *testing.T, c budget.Counter, key string, n, limit int64, window time.Duration) {
	t.Helper()
	for i := int64(1); i <= n; i++ {
		d := take(t, c, key, limit, window)
		if !d.Allowed || d.Count != i || d.RetryAfter != 0 {
			t.Fatalf("run %d of %d on a fresh key: got %+v, want allowed with Count %d and no RetryAfter", i, limit, d, i)
		}
	}
}

// testAdmits: a fresh key allows limit runs, counted 1 to limit, and
// refuses the next, with a RetryAfter within the sliding rule's bounds.
func testAdmits(t *testing.T, c budget.Counter) {
	const limit, window = 5, time.Hour
	k := key(t, "admits")
	fill(t, c, k, limit, limit, window)
	d := take(t, c, k, limit, window)
	if d.Allowed || d.Count != limit {
		t.Fatalf("run %d of limit %d: got %+v, want refused with Count %d", limit+1, limit, d, limit)
	}
	// With nothing in the previous window, the earliest room is when a
	// fifth of this window's runs weigh nothing: in the next window, at
	// least window/limit after its start and at most two windows away.
	if d.RetryAfter < window/limit || d.RetryAfter > 2*window {
		t.Fatalf("RetryAfter of a full key: %s, want between %s and %s", d.RetryAfter, window/limit, 2*window)
	}
}

// testRefusalCountsNothing: refused runs leave the count as it is.
func testRefusalCountsNothing(t *testing.T, c budget.Counter) {
	const limit, window = 2, time.Hour
	k := key(t, "refusals")
	fill(t, c, k, limit, limit, window)
	var first time.Duration
	for i := range 5 {
		d := take(t, c, k, limit, window)
		if d.Allowed || d.Count != limit {
			t.Fatalf("refusal %d: got %+v, want refused with Count %d (a refusal counts nothing)", i+1, d, limit)
		}
		if i == 0 {
			first = d.RetryAfter
		} else if d.RetryAfter > first {
			t.Fatalf("refusal %d: RetryAfter %s grew from %s: refusals pushed the retry further", i+1, d.RetryAfter, first)
		}
	}
}

// testKeys: keys are counted apart, long and non-ASCII ones included,
// even when they differ in their last byte only.
func testKeys(t *testing.T, c budget.Counter) {
	const limit, window = 1, time.Hour
	base := key(t, "keys")
	long := base + strings.Repeat("é", (budget.MaxKeyLength-len(base))/2-1)
	long += strings.Repeat("-", budget.MaxKeyLength-1-len(long))
	keys := []string{base + "/a", base + "/b", base + "/a/b", long + "x", long + "y", base + "/ü", base + "/u"}
	for _, k := range keys {
		if d := take(t, c, k, limit, window); !d.Allowed || d.Count != 1 {
			t.Fatalf("first run of key %q: got %+v, want allowed with Count 1 (another key's count was taken)", k, d)
		}
	}
	for _, k := range keys {
		if d := take(t, c, k, limit, window); d.Allowed {
			t.Fatalf("second run of key %q with limit 1: allowed, want refused", k)
		}
	}
}

// testWindows: one key with two windows is two counters.
func testWindows(t *testing.T, c budget.Counter) {
	k := key(t, "windows")
	for i := int64(1); i <= 3; i++ {
		for _, w := range []time.Duration{time.Hour, time.Minute} {
			if d := take(t, c, k, 3, w); !d.Allowed || d.Count != i {
				t.Fatalf("run %d with limit 3 per %s, taken in turn with a window of the other size: got %+v, want allowed with Count %d", i, w, d, i)
			}
		}
	}
	if d := take(t, c, k, 3, time.Hour); d.Allowed {
		t.Fatalf("fourth run with limit 3 per hour: allowed, want refused")
	}
	if d := take(t, c, k, 3, time.Minute); d.Allowed {
		t.Fatalf("fourth run with limit 3 per minute: allowed, want refused")
	}
}

// testConcurrent: concurrent takes on a fresh key allow exactly limit.
func testConcurrent(t *testing.T, c budget.Counter) {
	concurrent(t, []budget.Counter{c})
}

// testShared: two Counters on one store count as one.
func testShared(t *testing.T, a, b budget.Counter) {
	const limit, window = 3, time.Hour
	k := key(t, "shared")
	fill(t, a, k, 2, limit, window)
	if d := take(t, b, k, limit, window); !d.Allowed || d.Count != 3 {
		t.Fatalf("third run, through the second Counter: got %+v, want allowed with Count 3 (the counts are not shared)", d)
	}
	if d := take(t, a, k, limit, window); d.Allowed {
		t.Fatalf("fourth run with limit 3, through the first Counter: allowed, want refused (the counts are not shared)")
	}
	concurrent(t, []budget.Counter{a, b})
}

func concurrent(t *testing.T, cs []budget.Counter) {
	const limit, workers, each = 10, 8, 5
	k := key(t, "concurrent")
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
		errs    []error
	)
	start := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range each {
				d, err := cs[w%len(cs)].Take(context.Background(), k, limit, time.Hour)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else if d.Allowed {
					allowed++
				}
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("concurrent takes: %v", errors.Join(errs...))
	}
	if allowed != limit {
		t.Fatalf("%d concurrent takes with limit %d over %d Counter(s): %d allowed, want exactly %d", workers*each, limit, len(cs), allowed, limit)
	}
}

// testRetryAfter: a refused key is allowed once its RetryAfter has passed.
//
// The window is a second: at 300 ms, a loaded CI machine took longer than
// the window between the two takes that fill it on MariaDB, so the second
// began a new window ("run 2 of 2 on a fresh key: got Count 1").
func testRetryAfter(t *testing.T, c budget.Counter) {
	const limit, window = 2, time.Second
	k := key(t, "retry")
	// Each fill starts early in a fixed window, so that its takes fall in
	// one: a fill across a window's end is counted by the sliding rule
	// (1 and a share of 1 before it), which a loaded machine met.
	sleepUntil(window, window/20)
	fill(t, c, k, limit, limit, window)
	d := take(t, c, k, limit, window)
	if d.Allowed {
		t.Fatalf("third run with limit 2: allowed, want refused")
	}
	if d.RetryAfter <= 0 || d.RetryAfter > 2*window {
		t.Fatalf("RetryAfter %s, want within (0, %s]", d.RetryAfter, 2*window)
	}
	// A millisecond of slack for stores counting in milliseconds, a few
	// for the sleep.
	time.Sleep(d.RetryAfter + 5*time.Millisecond)
	if d := take(t, c, k, limit, window); !d.Allowed {
		t.Fatalf("a run after RetryAfter: got %+v, want allowed", d)
	}
	// Two windows later, nothing weighs: the whole budget is back.
	time.Sleep(2 * window)
	sleepUntil(window, window/20)
	fill(t, c, k, limit, limit, window)
}

// testSliding: the previous fixed window weighs in proportion to the
// share of it the sliding window still covers. The windows are aligned
// to the Unix epoch, by the local clock (a store on another machine whose
// clock differs by more than a few tens of milliseconds fails it).
func testSliding(t *testing.T, c budget.Counter) {
	const limit, window = 4, 2 * time.Second
	k := key(t, "sliding")
	sleepUntil(window, window/20)
	fill(t, c, k, limit, limit, window)
	// At 5% into the next window, the previous four runs weigh 3.8 (and
	// until 25%, more than 3).
	start := sleepUntil(window, window/20)
	if d := take(t, c, k, limit, window); d.Allowed {
		t.Fatalf("a run early in the window after a full one: allowed, want refused (the previous window must weigh)")
	}
	// From 50%, they weigh 2 or less: two more fit; until 75%, more than
	// 1, so a third does not.
	time.Sleep(time.Until(start.Add(window * 11 / 20)))
	fill(t, c, k, 2, limit, window)
	if d := take(t, c, k, limit, window); d.Allowed {
		if late := time.Since(start); late >= window*3/4 {
			t.Skipf("the check came %s into the window, past 75%%: too slow a machine to tell", late)
		}
		t.Fatalf("a third run between 55%% and 75%% into the window after a full one: allowed, want refused (over 1 + 3 > 4)")
	}
}

// sleepUntil sleeps until offset past the start of the next fixed window
// of size, and returns that start.
func sleepUntil(size, offset time.Duration) time.Time {
	now := time.Now()
	start := now.Truncate(size).Add(size)
	time.Sleep(start.Add(offset).Sub(now))
	return start
}

// testInvalid: arguments out of range are refused with ErrInvalid.
func testInvalid(t *testing.T, c budget.Counter) {
	k := key(t, "invalid")
	for _, tc := range []struct {
		what   string
		key    string
		limit  int64
		window time.Duration
	}{
		{"an empty key", "", 1, time.Minute},
		{"a key too long", strings.Repeat("k", budget.MaxKeyLength+1), 1, time.Minute},
		{"a key not UTF-8", k + "\xff", 1, time.Minute},
		{"a limit of 0", k, 0, time.Minute},
		{"a negative limit", k, -1, time.Minute},
		{"a window of 0", k, 1, 0},
		{"a window under a millisecond", k, 1, time.Microsecond},
		{"a window not of whole milliseconds", k, 1, 1500 * time.Microsecond},
	} {
		d, err := c.Take(context.Background(), tc.key, tc.limit, tc.window)
		if !errors.Is(err, budget.ErrInvalid) {
			t.Errorf("Take with %s: got %+v, %v; want an error wrapping budget.ErrInvalid", tc.what, d, err)
		}
	}
}

// BenchTake measures the cost of counting one run in c (one Take; a run
// costs one to five: the project's minute and hour, the key's minute and
// hour, a token's minute), over 1,000 keys of its own, under a limit no
// take reaches. Every counter store's benchmarks call it, so that their
// figures compare.
func BenchTake(b *testing.B, c budget.Counter) {
	keys := make([]string, 1000)
	prefix := "bench/" + strconv.FormatInt(time.Now().UnixNano(), 10) + "/"
	for i := range keys {
		keys[i] = prefix + strconv.Itoa(i)
	}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		if _, err := c.Take(ctx, keys[i%len(keys)], 1<<40, time.Minute); err != nil {
			b.Fatalf("Take: %v", err)
		}
		i++
	}
}
