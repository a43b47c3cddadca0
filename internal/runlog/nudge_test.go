package runlog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/internal/runlog"
)

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
