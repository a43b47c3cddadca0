package endpoint_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// TestRunLogSurvivesClose: the run log is written off the run path, and
// Close writes what is queued: every run is in the log of a store opened
// again on the same file, newest first, paged as before.
func TestRunLogSurvivesClose(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "store.db")
	open := func() (*sql.DB, *sqlstore.Store) {
		db, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		st, err := sqlstore.New(db, engine.SQLite)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if err := st.Migrate(ctx); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return db, st
	}
	db, st := open()
	svc, err := endpoint.New(endpoint.Config{Endpoints: st.Endpoints(), Variables: st.Variables(),
		Executor: sqlexec.New(db, engine.SQLite), RunLog: st.RunLog(sqlstore.RunLogOptions{})})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "one", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1"}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	var ids []string
	for range 25 {
		res, err := svc.Run(ctx, "1", "one", endpoint.RunRequest{})
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		ids = append(ids, res.ExecutionID)
	}
	if err := svc.Close(ctx); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if err := svc.Close(ctx); err != nil {
		t.Fatalf("Close twice: unexpected error: %v", err)
	}
	_, err = svc.Run(ctx, "1", "one", endpoint.RunRequest{})
	if err != nil {
		t.Fatalf("a run after Close is answered: unexpected error: %v", err)
	}

	db2, st2 := open()
	svc2, err := endpoint.New(endpoint.Config{Endpoints: st2.Endpoints(), Variables: st2.Variables(),
		Executor: sqlexec.New(db2, engine.SQLite), RunLog: st2.RunLog(sqlstore.RunLogOptions{})})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	var got []string
	before := ""
	for {
		page, next, err := svc2.Logs(ctx, "1", "one", 10, before)
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
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
	if got, want := got, ids; !reflect.DeepEqual(got, want) {
		t.Errorf("every run before Close, newest first, in pages of 10: got = %+v, want %+v", got, want)
	}
	ep, err := svc2.Get(ctx, "1", "one")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if ep.LastExecutedAt == nil {
		t.Errorf("last_executed_at written too: ep.LastExecutedAt is nil")
	}
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
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "one", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1"}})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			_, err := svc.Run(ctx, "1", "one", endpoint.RunRequest{})
			if err != nil {
				t.Errorf("unexpected error: %v", err)
			}
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
			if err := ev.LogErr; !errors.Is(err, endpoint.ErrRunLogFull) {
				t.Errorf("error %v is not %v", err, endpoint.ErrRunLogFull)
			}
			dropped++
		}
	}
	// The buffer holds 3 and the writer takes at most one batch before it
	// is stuck; the rest are dropped.
	if a, b := dropped, 20-3-1-3; !(a >= b) {
		t.Errorf("dropped entries are counted: dropped = %v, want >= %v", a, b)
	}
	if a, b := dropped, 20; !(a < b) {
		t.Errorf("dropped = %v, want < %v", a, b)
	}
	close(log.release)
	entries, _, err := svc.Logs(ctx, "1", "one", 100, "")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got, want := len(entries), 20-dropped; got != want {
		t.Errorf("the queued entries are written, the dropped ones are not: len(entries) = %v, want %v", got, want)
	}
}

// openMemory is an in-memory SQLite database for an executor.
func openMemory(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}
