package sqlstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/require"
)

// BenchmarkEndpointGet measures the read that every run of an endpoint
// makes, on SQLite in memory and in a WAL file.
func BenchmarkEndpointGet(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			ctx := context.Background()
			for i := 0; i < 100; i++ {
				e, v := endpointFixture("p", fmt.Sprintf("endpoint_%03d", i))
				require.NoError(b, s.Endpoints().Create(ctx, e, v))
			}
			st := s.Endpoints()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_, err := st.Get(ctx, "p", "endpoint_042")
				require.NoError(b, err)
			}
		})
	}
}

// BenchmarkEndpointMarkExecuted measures the write that a run records.
func BenchmarkEndpointMarkExecuted(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			ctx := context.Background()
			e, v := endpointFixture("p", "a")
			require.NoError(b, s.Endpoints().Create(ctx, e, v))
			st := s.Endpoints()
			at := t0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				at = at.Add(1)
				require.NoError(b, st.MarkExecuted(ctx, "p", e.ID, at))
			}
		})
	}
}

// BenchmarkVariableGetMany measures the read of an endpoint's variables
// (three) when its query is compiled.
func BenchmarkVariableGetMany(b *testing.B) {
	s := openMemory(b)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 50; i++ {
		v := variableFixture(fmt.Sprintf("v%d", i))
		require.NoError(b, s.Variables().Create(ctx, "p", v))
		if i%10 == 0 && len(ids) < 3 {
			ids = append(ids, v.ID)
		}
	}
	st := s.Variables()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := st.GetMany(ctx, "p", ids)
		require.NoError(b, err)
		require.Len(b, got, 3)
	}
}

// runLogBenchEntry is the i-th entry of a benchmark batch: what a
// successful run of one of four endpoints records.
func runLogBenchEntry(at time.Time, i int) driver.RunLogEntry {
	rows, read, bytes := 1, int64(1), int64(8)
	return driver.RunLogEntry{
		ExecutionID: fmt.Sprintf("0192f1a2-7c3e-7d4a-9b1c-%012x", i),
		ProjectID:   "1", EndpointID: fmt.Sprintf("0192f1a2-7c3e-7d4a-9b1c-00000000000%d", i%4),
		At: at, Version: 3, DurationMS: 0.412 + float64(i%7)/1000,
		Rows: &rows, RowsRead: &read, BytesRead: &bytes,
		Status: 200, Refresh: "blocking",
	}
}

// BenchmarkRunLogAppendBatch measures the background write of the run log
// (endpoint's logWriter), on a SQLite file in WAL as examples/server opens
// it: batches of 64, 256 and 1,024 entries (internal/runlog's MaxBatch) across
// four endpoints, in the steady state where every endpoint's log is full
// (MaxPerEndpoint 1000, the default) and batches prune. ns/entry (wall
// clock) and cpu-ns/entry (the process's CPU time, which matters on a busy
// machine) are per run recorded.
func BenchmarkRunLogAppendBatch(b *testing.B) {
	for _, batch := range []int{64, 256, 1024} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) { benchmarkRunLogAppendBatch(b, batch) })
	}
}

func benchmarkRunLogAppendBatch(b *testing.B, batch int) {
	s, _ := openFile(b, tempFile(b))
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	l := s.RunLog(RunLogOptions{Now: func() time.Time { return at }}).(driver.BatchRunLog)
	ctx := context.Background()
	entries := make([]driver.RunLogEntry, batch)
	for i := range entries {
		entries[i] = runLogBenchEntry(at, i)
	}
	// next moves the batch on in time, allocating nothing: each entry is
	// a run a little later than those before.
	next := func() {
		for i := range entries {
			at = at.Add(time.Microsecond)
			entries[i].At = at
		}
	}
	// Fill every endpoint's log past its bound, so that pruning runs.
	for range 6 * 1024 / batch {
		next()
		require.NoError(b, l.AppendBatch(ctx, entries))
	}
	b.ReportAllocs()
	b.ResetTimer()
	batches, cpu := 0, processCPU()
	for b.Loop() {
		next()
		require.NoError(b, l.AppendBatch(ctx, entries))
		batches++
	}
	cpu = processCPU() - cpu
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(batches*batch), "ns/entry")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(batches*batch), "cpu-ns/entry")
	}
	var kept int
	require.NoError(b, s.db.QueryRow(`SELECT COUNT(*) FROM `+runLogTable).Scan(&kept))
	limit := 4 * (driver.DefaultLogMaxPerEndpoint + max(logPruneEvery, driver.DefaultLogMaxPerEndpoint/logPruneSlack) + batch)
	require.LessOrEqual(b, kept, limit)
}

// BenchmarkRunLogList measures a page of an endpoint's log (100 entries)
// on a SQLite file whose four endpoints' logs are full (written in batches
// of 256, as the background writer does): the newest page, and the page
// after the 800th entry.
func BenchmarkRunLogList(b *testing.B) {
	s, _ := openFile(b, tempFile(b))
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	l := s.RunLog(RunLogOptions{Now: func() time.Time { return at }}).(driver.BatchRunLog)
	ctx := context.Background()
	entries := make([]driver.RunLogEntry, 256)
	for range 24 {
		for i := range entries {
			at = at.Add(time.Microsecond)
			entries[i] = runLogBenchEntry(at, i)
		}
		require.NoError(b, l.AppendBatch(ctx, entries))
	}
	id := entries[0].EndpointID
	all, _, err := l.List(ctx, "1", id, driver.LogPage{Limit: 1000})
	require.NoError(b, err)
	require.Len(b, all, driver.DefaultLogMaxPerEndpoint)
	for _, c := range []struct {
		name   string
		before string
	}{{"newest", ""}, {"after800", driver.Cursor(all[799])}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				page, _, err := l.List(ctx, "1", id, driver.LogPage{Limit: 100, Before: c.before})
				require.NoError(b, err)
				require.NotEmpty(b, page)
			}
		})
	}
}
