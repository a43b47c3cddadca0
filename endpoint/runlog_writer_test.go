package endpoint_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunLogSurvivesClose: the run log is written off the run path, and
// Close writes what is queued: every run is in the log of a store opened
// again on the same file, newest first, paged as before.
func TestRunLogSurvivesClose(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "store.db")
	open := func() (*sql.DB, *sqlstore.Store) {
		db, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		st, err := sqlstore.New(db, engine.SQLite)
		require.NoError(t, err)
		require.NoError(t, st.Migrate(ctx))
		return db, st
	}
	db, st := open()
	svc, err := endpoint.New(endpoint.Config{Endpoints: st.Endpoints(), Variables: st.Variables(),
		Executor: sqlexec.New(db, engine.SQLite), RunLog: st.RunLog(sqlstore.RunLogOptions{})})
	require.NoError(t, err)
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "one", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1"}})
	require.NoError(t, err)
	var ids []string
	for range 25 {
		res, err := svc.Run(ctx, "1", "one", endpoint.RunRequest{})
		require.NoError(t, err)
		ids = append(ids, res.ExecutionID)
	}
	require.NoError(t, svc.Close(ctx))
	require.NoError(t, svc.Close(ctx), "Close twice")
	_, err = svc.Run(ctx, "1", "one", endpoint.RunRequest{})
	require.NoError(t, err, "a run after Close is answered")

	db2, st2 := open()
	svc2, err := endpoint.New(endpoint.Config{Endpoints: st2.Endpoints(), Variables: st2.Variables(),
		Executor: sqlexec.New(db2, engine.SQLite), RunLog: st2.RunLog(sqlstore.RunLogOptions{})})
	require.NoError(t, err)
	var got []string
	before := ""
	for {
		page, next, err := svc2.Logs(ctx, "1", "one", 10, before)
		require.NoError(t, err)
		for _, e := range page {
			got = append(got, e.ExecutionID)
		}
		if next == "" {
			break
		}
		before = next
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	assert.Equal(t, ids, got, "every run before Close, newest first, in pages of 10")
	ep, err := svc2.Get(ctx, "1", "one")
	require.NoError(t, err)
	assert.NotNil(t, ep.LastExecutedAt, "last_executed_at written too: ep.LastExecutedAt is nil")
}

// stuckLog is a RunLog whose writes wait until released.
type stuckLog struct {
	*memstore.RunLog
	release chan struct{}
}

func (l *stuckLog) Append(ctx context.Context, e driver.RunLogEntry) error {
	<-l.release
	return l.RunLog.Append(ctx, e)
}

// TestRunLogFullBufferDrops: when the log's store falls behind, runs do
// not wait for it: an entry that finds the buffer full is dropped, and the
// run's event says so (ErrRunLogFull, which package metrics counts). The
// entries that were queued are written once the store catches up.
func TestRunLogFullBufferDrops(t *testing.T) {
	ctx := context.Background()
	log := &stuckLog{RunLog: memstore.NewRunLog(0, 0), release: make(chan struct{})}
	rec := &recorder{}
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(),
		Executor: sqlexec.New(openMemory(t), engine.SQLite), RunLog: log, RunLogBuffer: 3, Observer: rec})
	require.NoError(t, err)
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "one", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1"}})
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			_, err := svc.Run(ctx, "1", "one", endpoint.RunRequest{})
			assert.NoError(t, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("runs waited for the run log")
	}
	dropped := 0
	for _, ev := range rec.runEvents() {
		if ev.LogErr != nil {
			assert.ErrorIs(t, ev.LogErr, endpoint.ErrRunLogFull)
			dropped++
		}
	}
	// The buffer holds 3 and the writer takes at most one batch before it
	// is stuck; the rest are dropped.
	a, b := dropped, 20-3-1-3
	assert.True(t, (a >= b), "dropped entries are counted: dropped = %v, want >= %v", a, b)
	if a, b := dropped, 20; !(a < b) {
		t.Errorf("dropped = %v, want < %v", a, b)
	}
	close(log.release)
	entries, _, err := svc.Logs(ctx, "1", "one", 100, "")
	require.NoError(t, err)
	got, want := len(entries), 20-dropped
	assert.Equal(t, want, got, "the queued entries are written, the dropped ones are not: len(entries)")
}

// openMemory is an in-memory SQLite database for an executor.
func openMemory(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}
