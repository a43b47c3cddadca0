package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunLogPrunesByAgeOncePerInterval: the deletion of entries older than
// MaxAge, which reads the whole table, runs at a process's first append
// and then at most once per logAgePruneEvery of the log's clock, not with
// every few appends (it took a third of the CPU of a busy server).
func TestRunLogPrunesByAgeOncePerInterval(t *testing.T) {
	s := openMemory(t)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	log := s.RunLog(RunLogOptions{MaxAge: time.Hour, Now: func() time.Time { return now }})
	ctx := context.Background()
	seq := 0
	appendOld := func() {
		t.Helper()
		seq++
		e := driver.RunLogEntry{ExecutionID: "old", ProjectID: "1", EndpointID: "e", At: now.Add(-2 * time.Hour).Add(time.Duration(seq)), Status: 200}
		require.NoError(t, log.Append(ctx, e))
	}
	rows := func() int {
		t.Helper()
		var n int
		require.NoError(t, s.db.QueryRow(`SELECT COUNT(*) FROM `+runLogTable).Scan(&n))
		return n
	}
	appendOld()
	require.Equal(t, 0, rows(), "the first append did not prune by age")
	for range 2 * logPruneEvery {
		appendOld()
	}
	require.Equal(t, int(2*logPruneEvery), rows())
	now = now.Add(logAgePruneEvery)
	appendOld()
	require.Equal(t, 0, rows())
}

// TestRunLogPrunesByCountAtHalfTheBound: an endpoint's log is pruned to
// its bound once half the bound of appends passed since its last pruning
// (logPruneSlack), not a quarter: the rows over the bound wait in the
// table meanwhile, and List never shows them.
func TestRunLogPrunesByCountAtHalfTheBound(t *testing.T) {
	s := openMemory(t)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	l := s.RunLog(RunLogOptions{MaxPerEndpoint: 400, Now: func() time.Time { return now }}).(driver.BatchRunLog)
	ctx := context.Background()
	n := 0
	appendN := func(k int) {
		t.Helper()
		batch := make([]driver.RunLogEntry, k)
		for i := range batch {
			n++
			batch[i] = driver.RunLogEntry{ExecutionID: fmt.Sprintf("run-%04d", n), ProjectID: "1", EndpointID: "e", At: now.Add(time.Duration(n) * time.Millisecond), Status: 200}
		}
		require.NoError(t, l.AppendBatch(ctx, batch))
	}
	check := func(rows, listed int) {
		t.Helper()
		var got int
		require.NoError(t, s.db.QueryRow(`SELECT COALESCE(SUM(COALESCE(entries, 1)), 0) FROM `+runLogTable).Scan(&got))
		require.Equal(t, rows, got, "%d rows after %d appends, want %d", got, n, rows)
		entries, _, err := l.List(ctx, "1", "e", driver.LogPage{Limit: 1000})
		require.NoError(t, err)
		require.Len(t, entries, listed, "List after %d appends: %d entries, the newest %q; want %d, the newest run-%04d", n, len(entries), entries[0].ExecutionID, listed, n)
		require.Equal(t, fmt.Sprintf("run-%04d", n), entries[0].ExecutionID, "List after %d appends: %d entries, the newest %q; want %d, the newest run-%04d", n, len(entries), entries[0].ExecutionID, listed, n)
	}
	for range 4 {
		appendN(100)
	}
	check(400, 400)
	appendN(150) // 150 appends since the last pruning (at 400): none due
	check(550, 400)
	appendN(50) // 200: the pruning is due
	check(400, 400)
}

// TestRunLogStatementsSeekTheirRange: the count bound's deletion and
// the read of an endpoint's blocks (List, pruning) seek the range of the
// key they touch on SQLite, rather than read every row of the endpoint.
func TestRunLogStatementsSeekTheirRange(t *testing.T) {
	s := openMemory(t)
	l := s.RunLog(RunLogOptions{}).(*runLog)
	for _, c := range []struct {
		name, query string
		args        int
		want        string
	}{
		{"pruning", l.pruneCount, 5, "endpoint_id=? AND at_ns<?"},
		{"List", l.blocks, 8, "endpoint_id=? AND at_ns>? AND at_ns<?"},
	} {
		args := make([]any, c.args)
		for i := range args {
			args[i] = 1
		}
		var plan []string
		rows, err := s.db.Query(`EXPLAIN QUERY PLAN `+c.query, args...)
		require.NoError(t, err)
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			plan = append(plan, detail)
		}
		rows.Close()
		assert.Contains(t, strings.Join(plan, "; "), c.want, "%s: plan", c.name)
	}
}

// TestRunLogSurvivesRestart: what AppendBatch wrote to a SQLite file lists
// the same, every field, within the count bound, from another Store over
// the file after the first closed.
func TestRunLogSurvivesRestart(t *testing.T) {
	path := tempFile(t)
	s, db := openFile(t, path)
	opts := RunLogOptions{MaxPerEndpoint: 300, Now: func() time.Time { return runLogNow }}
	var batch []driver.RunLogEntry
	cases := entryCases()
	for i := range 700 {
		e := cases[[]int{1, 2, 4, 5, 6}[i%5]]
		e.ExecutionID = fmt.Sprintf("run-%04d", i)
		e.ProjectID, e.EndpointID = "1", []string{"a", "b"}[i%2]
		e.At = runLogNow.Add(-time.Duration(700-i) * time.Millisecond)
		if i%3 == 0 {
			e.KeyID = "key-1"
		}
		batch = append(batch, e)
	}
	require.NoError(t, s.RunLog(opts).(driver.BatchRunLog).AppendBatch(context.Background(), batch))
	require.NoError(t, s.Close())
	require.NoError(t, db.Close())
	again, _ := openFile(t, path)
	checkLog(t, again.RunLog(opts), batch[len(batch)-2*300:]) // the newest 300 of each
}

// TestRunLogFailedBatchWritesNothing: a batch with a row the table
// refuses (a key taken) writes none of its rows and leaves the log, and
// its connection, ready for the next batch (SQLite's INSERT OR ROLLBACK
// ends the transaction itself).
func TestRunLogFailedBatchWritesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		l := s.RunLog(RunLogOptions{Now: func() time.Time { return runLogNow }}).(*runLog)
		entry := func(i int) driver.RunLogEntry {
			e := entryCases()[1]
			e.ProjectID, e.EndpointID, e.ExecutionID, e.At = "1", "a", fmt.Sprintf("run-%d", i), runLogNow
			return e
		}
		// The row the batch's block will take: its newest entry's key.
		taken := entry(100)
		insertOldRow(t, s, taken, int64(l.seqHigh|(l.seq.Load()+3)))
		taken.Seq = l.seqHigh | (l.seq.Load() + 3)
		err := l.AppendBatch(ctx, []driver.RunLogEntry{entry(1), entry(2), entry(3)})
		require.Error(t, err, "AppendBatch over a taken key: no error")
		checkOnly := func(want ...driver.RunLogEntry) {
			t.Helper()
			got, _, err := l.List(ctx, "1", "a", driver.LogPage{Limit: 10})
			require.NoError(t, err)
			var ids, wantIDs []string
			for _, e := range got {
				ids = append(ids, e.ExecutionID)
			}
			for _, e := range want {
				wantIDs = append(wantIDs, e.ExecutionID)
			}
			require.Equal(t, strings.Join(wantIDs, ","), strings.Join(ids, ","), "List = %v, want %v", ids, wantIDs)
		}
		checkOnly(taken)
		require.NoError(t, l.AppendBatch(ctx, []driver.RunLogEntry{entry(4), entry(5)}), "the next batch")
		checkOnly(entry(5), entry(4), taken)
	})
}
