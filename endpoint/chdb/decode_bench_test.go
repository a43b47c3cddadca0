//go:build chdb

package chdb

import (
	"context"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/require"
)

// BenchmarkDecodeUsers decodes an answer of the shape of
// BenchmarkChDBRun/group10k (10,000 rows of a String, a UInt64 and a
// String) without the engine: library, with decode (the strings copied
// out, as from chDB's buffer); hand, as decodeUsers reads it. Both in
// turn, each iteration one of each, reporting the ratio of their medians
// (library/hand): what decode and the collector's work on what it
// allocates cost next to the leanest reading.
//
//	go test -tags chdb -run '^$' -bench BenchmarkDecodeUsers -benchtime 300x ./endpoint/chdb/
func BenchmarkDecodeUsers(b *testing.B) {
	out, st, err := executor(b).run(context.Background(), "SELECT concat('user-', leftPad(toString(number), 5, '0')) AS distinct_id, "+
		"toUInt64(number % 40) AS n, toString(toDateTime('2025-01-01 00:00:00', 'UTC') + number * 61) AS last FROM numbers(10000)", resultFormat, nil)
	require.NoError(b, err)
	var lib, hand []time.Duration
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			start := time.Now()
			if (i+k)%2 == 0 {
				res, err := decode(out, driver.Bounds{MaxRows: 20_001, MaxBytes: 10 << 20}, st.answered)
				require.NoError(b, err, "%d rows, error %v", len(res.Rows), err)
				require.Len(b, res.Rows, 10000, "%d rows, error %v", len(res.Rows), err)
				lib = append(lib, time.Since(start))
			} else {
				n, err := decodeUsers(out, 10000)
				require.NoError(b, err, "%d rows, error %v", n, err)
				require.Equal(b, 10000, n, "%d rows, error %v", n, err)
				hand = append(hand, time.Since(start))
			}
		}
	}
	l, h := median(lib), median(hand)
	b.ReportMetric(float64(l.Microseconds()), "library-us")
	b.ReportMetric(float64(h.Microseconds()), "hand-us")
	b.ReportMetric(float64(l)/float64(h), "library/hand")
}
