package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// RunLeaser runs the conformance suite of driver.Leaser as subtests of
// t; newLeaser returns a leaser with no leases.
func RunLeaser(t *testing.T, newLeaser func(t *testing.T) driver.Leaser) {
	t.Helper()
	ctx := context.Background()
	now := base
	acquire := func(t *testing.T, l driver.Leaser, name, holder string, at, until time.Time, want bool) {
		t.Helper()
		got, err := l.AcquireLease(ctx, name, holder, at, until)
		if err != nil {
			t.Fatalf("AcquireLease(%s, %s): %v", name, holder, err)
		}
		if got != want {
			t.Fatalf("AcquireLease(%s, %s) at %v = %v, want %v", name, holder, at.Sub(now), got, want)
		}
	}
	t.Run("ExclusiveUntilExpiry", func(t *testing.T) {
		l := newLeaser(t)
		acquire(t, l, "a", "h1", now, now.Add(time.Minute), true)
		acquire(t, l, "a", "h2", now.Add(59*time.Second), now.Add(2*time.Minute), false)
		acquire(t, l, "b", "h2", now, now.Add(time.Minute), true)
		// The holder renews; the lease then lasts to the new expiry.
		acquire(t, l, "a", "h1", now.Add(30*time.Second), now.Add(90*time.Second), true)
		acquire(t, l, "a", "h2", now.Add(80*time.Second), now.Add(3*time.Minute), false)
		// A holder that stopped renewing loses the lease at its expiry.
		acquire(t, l, "a", "h2", now.Add(90*time.Second), now.Add(3*time.Minute), true)
		acquire(t, l, "a", "h1", now.Add(100*time.Second), now.Add(3*time.Minute), false)
	})
	t.Run("Release", func(t *testing.T) {
		l := newLeaser(t)
		acquire(t, l, "a", "h1", now, now.Add(time.Hour), true)
		if err := l.ReleaseLease(ctx, "a", "h2"); err != nil {
			t.Fatal(err)
		}
		acquire(t, l, "a", "h2", now, now.Add(time.Hour), false)
		if err := l.ReleaseLease(ctx, "a", "h1"); err != nil {
			t.Fatal(err)
		}
		acquire(t, l, "a", "h2", now, now.Add(time.Hour), true)
		if err := l.ReleaseLease(ctx, "never", "h1"); err != nil {
			t.Fatalf("releasing a lease no one holds: %v", err)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		l := newLeaser(t)
		for round := range 5 {
			name := fmt.Sprintf("r%d", round)
			var won atomic.Int32
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got, err := l.AcquireLease(ctx, name, fmt.Sprintf("h%d", i), now, now.Add(time.Minute))
					if err != nil {
						t.Error(err)
					}
					if got {
						won.Add(1)
					}
				}()
			}
			wg.Wait()
			if n := won.Load(); n != 1 {
				t.Fatalf("round %d: %d holders got one lease", round, n)
			}
		}
	})
}

// RunResultCache runs the conformance suite of driver.ResultCache as
// subtests of t; newCache returns an empty cache that keeps values of at
// least 64 KiB.
func RunResultCache(t *testing.T, newCache func(t *testing.T) driver.ResultCache) {
	t.Helper()
	s := cacheSuite{ctx: context.Background(), newCache: newCache}
	t.Run("MissThenHit", s.missThenHit)
	t.Run("Expiry", s.expiry)
	t.Run("Replace", s.replace)
	t.Run("NoAliasing", s.noAliasing)
	t.Run("LargeValue", s.largeValue)
	t.Run("Concurrent", s.concurrent)
}

// cacheSuite holds what every subtest of RunResultCache shares.
type cacheSuite struct {
	ctx      context.Context
	newCache func(t *testing.T) driver.ResultCache
}

// cacheKey is the i-th key: 64 hexadecimal digits, the shape of the keys the
// service uses.
func cacheKey(i int) string { return fmt.Sprintf("%064x", i) }

func (s cacheSuite) get(t *testing.T, c driver.ResultCache, k string, at time.Time) ([]byte, bool) {
	t.Helper()
	v, ok, err := c.Get(s.ctx, k, at)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return v, ok
}

func (s cacheSuite) set(t *testing.T, c driver.ResultCache, k string, v []byte, until time.Time) {
	t.Helper()
	if err := c.Set(s.ctx, k, v, until); err != nil {
		t.Fatalf("Set: %v", err)
	}
}

func (s cacheSuite) missThenHit(t *testing.T) {
	now := base
	c := s.newCache(t)
	if _, ok := s.get(t, c, cacheKey(1), now); ok {
		t.Fatal("hit in an empty cache")
	}
	v := []byte("{\"columns\":[]}\n[[1,\"é\"]]")
	s.set(t, c, cacheKey(1), v, now.Add(time.Hour))
	got, ok := s.get(t, c, cacheKey(1), now.Add(time.Minute))
	if !ok || !bytes.Equal(got, v) {
		t.Fatalf("Get = %q, %v; want %q", got, ok, v)
	}
	if _, ok := s.get(t, c, cacheKey(2), now); ok {
		t.Fatal("hit under another key")
	}
}

func (s cacheSuite) expiry(t *testing.T) {
	now := base
	c := s.newCache(t)
	s.set(t, c, cacheKey(1), []byte("a"), now.Add(time.Minute))
	if _, ok := s.get(t, c, cacheKey(1), now.Add(time.Minute-time.Microsecond)); !ok {
		t.Fatal("miss before the expiry")
	}
	if _, ok := s.get(t, c, cacheKey(1), now.Add(time.Minute)); ok {
		t.Fatal("hit at the expiry")
	}
	if _, ok := s.get(t, c, cacheKey(1), now.Add(time.Hour)); ok {
		t.Fatal("hit past the expiry")
	}
}

func (s cacheSuite) replace(t *testing.T) {
	now := base
	c := s.newCache(t)
	s.set(t, c, cacheKey(1), []byte("old"), now.Add(time.Minute))
	s.set(t, c, cacheKey(1), []byte("new"), now.Add(time.Hour))
	got, ok := s.get(t, c, cacheKey(1), now.Add(30*time.Minute))
	if !ok || string(got) != "new" {
		t.Fatalf("Get after replacing = %q, %v", got, ok)
	}
}

func (s cacheSuite) noAliasing(t *testing.T) {
	now := base
	c := s.newCache(t)
	v := []byte("value")
	s.set(t, c, cacheKey(1), v, now.Add(time.Hour))
	v[0] = 'X'
	got, _ := s.get(t, c, cacheKey(1), now)
	if string(got) != "value" {
		t.Fatalf("the cache kept the caller's slice: %q", got)
	}
	got[0] = 'Y'
	again, _ := s.get(t, c, cacheKey(1), now)
	if string(again) != "value" {
		t.Fatalf("the cache returned its own slice: %q", again)
	}
}

func (s cacheSuite) largeValue(t *testing.T) {
	now := base
	c := s.newCache(t)
	v := bytes.Repeat([]byte("[1,2,3],"), 8<<10)
	s.set(t, c, cacheKey(1), v, now.Add(time.Hour))
	got, ok := s.get(t, c, cacheKey(1), now)
	if !ok || !bytes.Equal(got, v) {
		t.Fatalf("a 64 KiB value did not round-trip: %d bytes, %v", len(got), ok)
	}
}

func (s cacheSuite) concurrent(t *testing.T) {
	now := base
	c := s.newCache(t)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				k := cacheKey(i % 5)
				v := fmt.Appendf(nil, "w%d-%d", w, i)
				if err := c.Set(s.ctx, k, v, now.Add(time.Hour)); err != nil {
					t.Error(err)
					return
				}
				if got, ok, err := c.Get(s.ctx, k, now); err != nil || ok && !bytes.HasPrefix(got, []byte("w")) {
					t.Errorf("Get = %q, %v, %v", got, ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// RunRunLog runs the conformance suite of driver.RunLog as subtests of t.
// newLog returns an empty log that keeps at most maxPerEndpoint entries per
// endpoint and none older than maxAge by the clock now.
func RunRunLog(t *testing.T, newLog func(t *testing.T, maxAge time.Duration, maxPerEndpoint int, now func() time.Time) driver.RunLog) {
	t.Helper()
	s := runLogSuite{ctx: context.Background(), newLog: newLog}
	t.Run("NewestFirstAndFields", s.newestFirstAndFields)
	t.Run("Pages", s.pages)
	t.Run("SameInstant", s.sameInstant)
	t.Run("Isolation", s.isolation)
	t.Run("DeleteEndpoint", s.deleteEndpoint)
	t.Run("RetentionCount", s.retentionCount)
	t.Run("RetentionAge", s.retentionAge)
	t.Run("BadCursor", s.badCursor)
	t.Run("Batch", s.batch)
	t.Run("BatchPastTheBound", s.batchPastTheBound)
}

// runLogSuite holds what every subtest of RunRunLog shares.
type runLogSuite struct {
	ctx    context.Context
	newLog func(t *testing.T, maxAge time.Duration, maxPerEndpoint int, now func() time.Time) driver.RunLog
}

// runLogClock is the clock of every log under test: an hour after base.
func runLogClock() time.Time { return base.Add(time.Hour) }

// open returns an empty log keeping max entries per endpoint for maxAge.
func (s runLogSuite) open(t *testing.T, maxAge time.Duration, max int) driver.RunLog {
	return s.newLog(t, maxAge, max, runLogClock)
}

// runLogEntry is the i-th entry of an endpoint: i seconds after base, with
// the optional fields set or left out by i modulo 4 so that every field
// round-trips in some entry.
func runLogEntry(project, id string, i int) driver.RunLogEntry {
	rows, read := i*10, int64(i*100)
	e := driver.RunLogEntry{
		ExecutionID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
		ProjectID:   project, EndpointID: id,
		At:      base.Add(time.Duration(i) * time.Second),
		Version: 1 + i%3, DurationMS: float64(i) + 0.25,
		Status: 200, Refresh: "cache",
		Rows: &rows, RowsRead: &read,
	}
	switch i % 4 {
	case 1:
		e.Status, e.ErrorCode, e.Rows, e.RowsRead = 400, "unknown_variable", nil, nil
	case 2:
		e.Cached, e.Token, e.TokenKeyID = true, true, "2026-11"
	case 3:
		e.Materialized, e.Refresh = true, "direct"
		e.KeyID = fmt.Sprintf("00000000-0000-4000-9000-%012d", i)
	}
	return e
}

func (s runLogSuite) append(t *testing.T, l driver.RunLog, es ...driver.RunLogEntry) {
	t.Helper()
	for _, e := range es {
		if err := l.Append(s.ctx, e); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
}

func (s runLogSuite) list(t *testing.T, l driver.RunLog, project, id string, page driver.LogPage) ([]driver.RunLogEntry, string) {
	t.Helper()
	got, next, err := l.List(s.ctx, project, id, page)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return got, next
}

// listAll follows the pages of an endpoint's log to the end and returns the
// execution IDs in the order the pages gave them.
func (s runLogSuite) listAll(t *testing.T, l driver.RunLog, project, id string, limit int) []string {
	t.Helper()
	var seen []string
	page := driver.LogPage{Limit: limit}
	for n := 0; ; n++ {
		got, next := s.list(t, l, project, id, page)
		for _, e := range got {
			seen = append(seen, e.ExecutionID)
		}
		if next == "" {
			return seen
		}
		if n > 100 || len(got) != limit {
			t.Fatalf("page %d: %d entries, next %q", n, len(got), next)
		}
		page.Before = next
	}
}

func eqPtr[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// sameEntry fails t unless got has every field of want.
func sameEntry(t *testing.T, got, want driver.RunLogEntry) {
	t.Helper()
	if got.ExecutionID != want.ExecutionID || !got.At.Equal(want.At) || got.Version != want.Version ||
		got.DurationMS != want.DurationMS || !eqPtr(got.Rows, want.Rows) || !eqPtr(got.RowsRead, want.RowsRead) ||
		!eqPtr(got.BytesRead, want.BytesRead) || got.Status != want.Status || got.ErrorCode != want.ErrorCode ||
		got.Refresh != want.Refresh || got.Cached != want.Cached || got.Materialized != want.Materialized ||
		got.Token != want.Token || got.TokenKeyID != want.TokenKeyID || got.KeyID != want.KeyID {
		t.Fatalf("entry = %+v, want %+v", got, want)
	}
}

func (s runLogSuite) newestFirstAndFields(t *testing.T) {
	l := s.open(t, time.Hour*24, 100)
	var want []driver.RunLogEntry
	for i := range 8 {
		want = append(want, runLogEntry("1", "e1", i))
	}
	s.append(t, l, want[3], want[0], want[7], want[1], want[5], want[2], want[6], want[4])
	got, next := s.list(t, l, "1", "e1", driver.LogPage{Limit: 100})
	if len(got) != 8 || next != "" {
		t.Fatalf("List = %d entries, next %q; want 8 and no next page", len(got), next)
	}
	for i := range got {
		sameEntry(t, got[i], want[7-i])
	}
}

// batch: a BatchRunLog's AppendBatch keeps every entry of a batch larger
// than any chunk it may write at once, across endpoints, each listed as
// Append would have kept it. A log without AppendBatch skips it.
func (s runLogSuite) batch(t *testing.T) {
	l := s.open(t, time.Hour*24, 1000)
	b, ok := l.(driver.BatchRunLog)
	if !ok {
		t.Skip("the log is not a driver.BatchRunLog")
	}
	var batch []driver.RunLogEntry
	for i := range 150 {
		batch = append(batch, runLogEntry("1", []string{"e1", "e2"}[i%2], i))
	}
	if err := b.AppendBatch(s.ctx, batch); err != nil {
		t.Fatalf("AppendBatch of %d entries: %v", len(batch), err)
	}
	for k, id := range []string{"e1", "e2"} {
		got, _ := s.list(t, l, "1", id, driver.LogPage{Limit: 1000})
		if len(got) != 75 {
			t.Fatalf("List(%s) = %d entries after a batch of 150, want 75", id, len(got))
		}
		for i := range got {
			sameEntry(t, got[i], batch[148+k-2*i])
		}
	}
}

// batchPastTheBound: batches that pass the count bound (the first larger
// than any chunk a log may write at once, of no round size) keep only the
// newest entries of each endpoint, in order, however the log prunes.
func (s runLogSuite) batchPastTheBound(t *testing.T) {
	l := s.open(t, time.Hour*24, 100)
	b, ok := l.(driver.BatchRunLog)
	if !ok {
		t.Skip("the log is not a driver.BatchRunLog")
	}
	var all []driver.RunLogEntry
	for _, n := range []int{601, 7, 333} {
		var batch []driver.RunLogEntry
		for range n {
			i := len(all)
			batch = append(batch, runLogEntry("1", []string{"e1", "e2"}[i%2], i))
			all = append(all, batch[len(batch)-1])
		}
		if err := b.AppendBatch(s.ctx, batch); err != nil {
			t.Fatalf("AppendBatch of %d entries: %v", len(batch), err)
		}
	}
	for k, id := range []string{"e1", "e2"} {
		got, next := s.list(t, l, "1", id, driver.LogPage{Limit: 1000})
		if len(got) != 100 || next != "" {
			t.Fatalf("List(%s) = %d entries, next %q; want the newest 100", id, len(got), next)
		}
		newest := len(all) - 1 - (len(all)-1-k)%2
		for i := range got {
			sameEntry(t, got[i], all[newest-2*i])
		}
	}
}

func (s runLogSuite) pages(t *testing.T) {
	l := s.open(t, time.Hour*24, 100)
	for i := range 7 {
		s.append(t, l, runLogEntry("1", "e1", i))
	}
	seen := s.listAll(t, l, "1", "e1", 3)
	if len(seen) != 7 || seen[0] != runLogEntry("1", "e1", 6).ExecutionID || seen[6] != runLogEntry("1", "e1", 0).ExecutionID {
		t.Fatalf("pages gave %v", seen)
	}
}

func (s runLogSuite) sameInstant(t *testing.T) {
	l := s.open(t, time.Hour*24, 100)
	var ids []string
	for i := range 5 {
		e := runLogEntry("1", "e1", 1)
		e.ExecutionID = fmt.Sprintf("same-%d", i)
		ids = append(ids, e.ExecutionID)
		s.append(t, l, e)
	}
	got := s.listAll(t, l, "1", "e1", 2)
	want := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("entries of one instant = %v, want the latest appended first %v", got, want)
	}
}

func (s runLogSuite) isolation(t *testing.T) {
	l := s.open(t, time.Hour*24, 100)
	s.append(t, l, runLogEntry("1", "e1", 1), runLogEntry("2", "e1", 2), runLogEntry("1", "e2", 3))
	for _, c := range []struct{ project, id, want string }{
		{"1", "e1", runLogEntry("1", "e1", 1).ExecutionID},
		{"2", "e1", runLogEntry("2", "e1", 2).ExecutionID},
		{"1", "e2", runLogEntry("1", "e2", 3).ExecutionID},
	} {
		got, _ := s.list(t, l, c.project, c.id, driver.LogPage{Limit: 10})
		if len(got) != 1 || got[0].ExecutionID != c.want {
			t.Fatalf("List(%s, %s) = %+v", c.project, c.id, got)
		}
	}
	if got, _ := s.list(t, l, "3", "e1", driver.LogPage{Limit: 10}); len(got) != 0 {
		t.Fatalf("another project's log = %+v", got)
	}
}

func (s runLogSuite) deleteEndpoint(t *testing.T) {
	l := s.open(t, time.Hour*24, 100)
	s.append(t, l, runLogEntry("1", "e1", 1), runLogEntry("1", "e2", 2))
	if err := l.DeleteEndpoint(s.ctx, "1", "e1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.list(t, l, "1", "e1", driver.LogPage{Limit: 10}); len(got) != 0 {
		t.Fatalf("a deleted endpoint's log = %+v", got)
	}
	if got, _ := s.list(t, l, "1", "e2", driver.LogPage{Limit: 10}); len(got) != 1 {
		t.Fatalf("another endpoint's log went too: %+v", got)
	}
}

func (s runLogSuite) retentionCount(t *testing.T) {
	l := s.open(t, time.Hour*24, 5)
	for i := range 40 {
		s.append(t, l, runLogEntry("1", "e1", i))
	}
	got, next := s.list(t, l, "1", "e1", driver.LogPage{Limit: 100})
	if len(got) != 5 || next != "" || got[0].ExecutionID != runLogEntry("1", "e1", 39).ExecutionID || got[4].ExecutionID != runLogEntry("1", "e1", 35).ExecutionID {
		t.Fatalf("with at most 5 entries: %d entries, next %q, first %+v", len(got), next, got)
	}
}

func (s runLogSuite) retentionAge(t *testing.T) {
	// The clock is base+1h: entries at base+0..39s are 59m21s to 1h old.
	l := s.open(t, time.Hour-30*time.Second, 100)
	for i := range 40 {
		s.append(t, l, runLogEntry("1", "e1", i))
	}
	got, _ := s.list(t, l, "1", "e1", driver.LogPage{Limit: 100})
	if len(got) != 10 || got[9].ExecutionID != runLogEntry("1", "e1", 30).ExecutionID {
		t.Fatalf("with entries kept 59m30s: %d entries", len(got))
	}
}

func (s runLogSuite) badCursor(t *testing.T) {
	l := s.open(t, time.Hour*24, 100)
	if _, _, err := l.List(s.ctx, "1", "e1", driver.LogPage{Limit: 1, Before: "nope!"}); !errors.Is(err, driver.ErrBadCursor) {
		t.Fatalf("List with a bad cursor: %v, want ErrBadCursor", err)
	}
}
