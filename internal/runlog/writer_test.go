package runlog_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/internal/runlog"
)

// sink records the batches a Writer writes.
type sink struct {
	mu      sync.Mutex
	items   []int
	batches int
	block   chan struct{} // when set, each write waits for it
}

func (s *sink) write(b []int) {
	if s.block != nil {
		<-s.block
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = append(s.items, b...)
	s.batches++
}

func (s *sink) got() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.items...)
}

// TestFlushWritesInOrder: Flush returns once every item queued before it
// is written, in the order queued, in batches (not one write an item).
func TestFlushWritesInOrder(t *testing.T) {
	s := &sink{}
	w := runlog.New(4096, time.Hour, s.write)
	var want []int
	for i := range 3000 {
		require.NoError(t, w.Offer(i))
		want = append(want, i)
	}
	require.NoError(t, w.Flush(context.Background()))
	assert.Equal(t, want, s.got())
	assert.LessOrEqual(t, s.batches, 10, "written in batches")
	require.NoError(t, w.Close(context.Background()))
}

// TestFullAndClosed: a full queue drops the item (ErrFull); after Close
// nothing is taken (ErrClosed), what was queued is written, and Flush and
// Close return.
func TestFullAndClosed(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	w := runlog.New(2, time.Hour, s.write)
	require.NoError(t, w.Offer(1))
	require.NoError(t, w.Offer(2)) // half full: the writer is woken, and blocks in write
	deadline := time.Now().Add(10 * time.Second)
	var err error
	for i := 3; err == nil && time.Now().Before(deadline); i++ {
		err = w.Offer(i)
	}
	require.ErrorIs(t, err, runlog.ErrFull)
	close(s.block)
	require.NoError(t, w.Close(context.Background()))
	assert.ErrorIs(t, w.Offer(99), runlog.ErrClosed)
	assert.NotContains(t, s.got(), 99)
	assert.Subset(t, s.got(), []int{1, 2})
	require.NoError(t, w.Flush(context.Background()))
	require.NoError(t, w.Close(context.Background()))
}

// TestFlushAndCloseHonourTheContext: a Flush or Close that cannot finish
// returns its context's error.
func TestFlushAndCloseHonourTheContext(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	w := runlog.New(8, time.Hour, s.write)
	require.NoError(t, w.Offer(1))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, w.Flush(ctx), context.DeadlineExceeded)
	assert.ErrorIs(t, w.Close(ctx), context.DeadlineExceeded)
	close(s.block)
	require.NoError(t, w.Close(context.Background()))
	assert.Equal(t, []int{1}, s.got())
}

// TestOfferRacesClose: items offered while the writer closes are each
// either written or refused with ErrClosed, never lost nor sent on the
// closed queue.
func TestOfferRacesClose(t *testing.T) {
	for range 20 {
		s := &sink{}
		w := runlog.New(1<<16, time.Millisecond, s.write)
		var taken atomic.Int64
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 500 {
					switch err := w.Offer(g*1000 + i); err {
					case nil:
						taken.Add(1)
					case runlog.ErrClosed:
						return
					default:
						assert.NoError(t, err)
					}
				}
			})
		}
		time.Sleep(time.Millisecond)
		require.NoError(t, w.Close(context.Background()))
		wg.Wait()
		assert.Len(t, s.got(), int(taken.Load()))
	}
}

// TestCloseUnstarted: a Writer that never took an item closes at once.
func TestCloseUnstarted(t *testing.T) {
	w := runlog.New(4, 0, func([]int) { t.Error("nothing to write") })
	require.NoError(t, w.Close(context.Background()))
	assert.ErrorIs(t, w.Offer(1), runlog.ErrClosed)
}

// TestFullBatchWakesTheWriter: a full batch queued is written without a
// Flush and before the interval, in a queue where it is far less than
// half: the writer has the rest of the queue to catch up in before an item
// is dropped, rather than half of it.
func TestFullBatchWakesTheWriter(t *testing.T) {
	written := make(chan []int, 8)
	w := runlog.New(8*runlog.MaxBatch, time.Hour, func(b []int) { written <- append([]int(nil), b...) })
	defer func() { require.NoError(t, w.Close(context.Background())) }()
	for i := range runlog.MaxBatch - 1 {
		require.NoError(t, w.Offer(i))
	}
	select {
	case b := <-written:
		t.Fatalf("a batch of %d written before a full batch was queued", len(b))
	default:
	}
	require.NoError(t, w.Offer(runlog.MaxBatch-1))
	var got []int
	for len(got) < runlog.MaxBatch {
		select {
		case b := <-written:
			got = append(got, b...)
		case <-time.After(time.Minute): // a hang, not a speed: the interval is an hour
			t.Fatalf("a full batch queued was not written (%d of %d items written)", len(got), runlog.MaxBatch)
		}
	}
	assert.Len(t, got, runlog.MaxBatch)
	assert.Equal(t, 0, got[0])
}
