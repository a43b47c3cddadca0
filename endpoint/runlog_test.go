package endpoint_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunLog: every run of a known endpoint is logged, newest first, with
// its version, rows, status and error code, cached or not, and the kid of
// the embed token it came with; never a value of its variables. Logs page
// with a cursor, and go with their endpoint.
func TestRunLog(t *testing.T) {
	obs := &recorder{}
	e := newEnv(t, func(c *endpoint.Config) {
		c.ResultCache = memstore.NewResultCache(1 << 20)
		c.Observer = obs
	})
	ctx := context.Background()
	e.create(t, "by_country", e.query("SELECT id FROM orders WHERE country = {variables.country} ORDER BY id", "country"))
	secret := map[string]any{"country": "US"}
	runReq(t, e, "by_country", endpoint.RunRequest{Variables: secret})
	e.clock.Advance(time.Second)
	runReq(t, e, "by_country", endpoint.RunRequest{Variables: secret, Token: &embed.Claims{KeyID: "2026-11", Fixed: secret}, Fixed: secret})
	e.clock.Advance(time.Second)
	_, err := e.svc.Run(ctx, "1", "by_country", endpoint.RunRequest{Variables: map[string]any{"country": "US", "nope": "SECRET-VALUE"}})
	wantError(t, err, 400, endpoint.CodeUnknownVariable, "Unknown variable(s): nope", "variables.nope")
	e.clock.Advance(time.Second)
	_, err = e.svc.Run(ctx, "1", "missing", endpoint.RunRequest{})
	wantError(t, err, 404, endpoint.CodeNotFound, "Endpoint 'missing' not found.", "")

	list, next, err := e.svc.Logs(ctx, "1", "by_country", 0, "")
	if err != nil || next != "" || len(list) != 3 {
		t.Fatalf("Logs = %d entries, next %q, %v", len(list), next, err)
	}
	failed, token, first := list[0], list[1], list[2]
	if failed.Status != 400 || failed.ErrorCode != endpoint.CodeUnknownVariable || failed.Rows != nil || failed.Version != 1 || failed.Token {
		t.Fatalf("failed run logged as %+v", failed)
	}
	if token.Status != 200 || !token.Token || token.TokenKeyID != "2026-11" || !token.Cached || *token.Rows != 3 {
		t.Fatalf("token run logged as %+v", token)
	}
	if first.Status != 200 || first.Token || first.Cached || first.Rows == nil || *first.Rows != 3 || first.Refresh != "cache" ||
		!first.At.Equal(e.clock.Now().Add(-3*time.Second)) || first.DurationMS <= 0 {
		t.Fatalf("first run logged as %+v", first)
	}
	b, _ := json.Marshal(list)
	for _, leak := range []string{"SECRET-VALUE", `"US"`, "country"} {
		require.False(t, bytes.Contains(b, []byte(leak)), "the log holds %s: %s", leak, b)
	}

	// The observer saw all four runs, the unknown endpoint's too.
	evs := obs.runEvents()
	if len(evs) != 4 || evs[3].Status != 404 || evs[3].Code != endpoint.CodeNotFound || evs[1].Cached != true || !evs[1].Token || evs[0].Rows != 3 {
		t.Fatalf("observed %+v", evs)
	}
	for _, ev := range evs {
		require.NotEqual(t, "", ev.ExecutionID, "event without id or duration: %+v", ev)
		require.Greater(t, ev.Duration, time.Duration(0), "event without id or duration: %+v", ev)
	}

	// Pages.
	page1, next, err := e.svc.Logs(ctx, "1", "by_country", 2, "")
	if err != nil || len(page1) != 2 || next == "" {
		t.Fatalf("page 1: %d, %q, %v", len(page1), next, err)
	}
	page2, next2, err := e.svc.Logs(ctx, "1", "by_country", 2, next)
	if err != nil || len(page2) != 1 || next2 != "" || page2[0].ExecutionID != first.ExecutionID {
		t.Fatalf("page 2: %+v, %q, %v", page2, next2, err)
	}
	_, _, err = e.svc.Logs(ctx, "1", "by_country", 2, "garbage!")
	wantError(t, err, 400, endpoint.CodeInvalidInput, "Invalid cursor 'garbage!': pass the 'next' of a previous page.", "before")
	_, _, err = e.svc.Logs(ctx, "1", "by_country", 1001, "")
	wantError(t, err, 400, endpoint.CodeInvalidInput, "limit must be between 1 and 1000, got 1001.", "limit")
	_, _, err = e.svc.Logs(ctx, "1", "missing", 0, "")
	wantError(t, err, 404, endpoint.CodeNotFound, "Endpoint 'missing' not found.", "")

	// The log goes with its endpoint; a new endpoint of the name starts
	// empty.
	require.NoError(t, e.svc.Delete(ctx, "1", "by_country"))
	e.create(t, "by_country", e.query("SELECT 1 AS one"))
	if list, _, err := e.svc.Logs(ctx, "1", "by_country", 0, ""); err != nil || len(list) != 0 {
		t.Fatalf("a new endpoint's log = %+v, %v", list, err)
	}
}

// TestRunExecutionIDInLog: the execution id of an answer names its entry.
func TestRunExecutionIDInLog(t *testing.T) {
	e := newEnv(t)
	e.create(t, "ep", e.query("SELECT 1 AS one"))
	res := runReq(t, e, "ep", endpoint.RunRequest{})
	list, _, err := e.svc.Logs(context.Background(), "1", "ep", 1, "")
	if err != nil || len(list) != 1 || list[0].ExecutionID != res.ExecutionID {
		t.Fatalf("log %+v, answer %s", list, res.ExecutionID)
	}
}

// TestSlogObserver: runs log at Debug, failures of the server at Warn,
// refreshes at Info; no value of a variable is written.
func TestSlogObserver(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newEnv(t, func(c *endpoint.Config) { c.Observer = endpoint.SlogObserver{Logger: logger} })
	e.create(t, "by_country", e.query("SELECT id FROM orders WHERE country = {variables.country}", "country"))
	runReq(t, e, "by_country", endpoint.RunRequest{Variables: map[string]any{"country": "SECRET"}})
	out := buf.String()
	require.Contains(t, out, "level=DEBUG msg=\"endpoint run\" project=1 endpoint=by_country version=1", "log")
	require.NotContains(t, out, "SECRET", "log")
	buf.Reset()
	endpoint.SlogObserver{Logger: logger}.ObserveRefresh(context.Background(), endpoint.RefreshEvent{Project: "1", Endpoint: "m", Trigger: "scheduled", Rows: 5})
	require.Contains(t, buf.String(), "level=INFO msg=\"endpoint refresh\" project=1 endpoint=m trigger=scheduled", "refresh log")
	buf.Reset()
	endpoint.SlogObserver{Logger: logger}.ObserveRun(context.Background(), endpoint.RunEvent{Project: "1", Endpoint: "m", Status: 502, Code: "execution_failed"})
	require.Contains(t, buf.String(), "level=WARN", "a 502 logged as")
}

// FuzzParseCursor: a cursor from a client never panics the parser; what it
// accepts names an instant and a sequence number that Cursor writes back
// to a cursor it reads alike.
func FuzzParseCursor(f *testing.F) {
	f.Add(driver.Cursor(driver.RunLogEntry{At: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), Seq: 7}))
	f.Add("")
	f.Add("GOqiORIBaZBcEgAAAAAAAw")
	f.Add("garbage!")
	f.Add("AAAAAAAAAAAAAAAAAAAAAA==")
	f.Fuzz(func(t *testing.T, s string) {
		at, seq, err := driver.ParseCursor(s)
		if err != nil {
			require.ErrorIs(t, err, driver.ErrBadCursor, "ParseCursor(%q)", s)
			return
		}
		again := driver.Cursor(driver.RunLogEntry{At: time.Unix(0, at), Seq: seq})
		at2, seq2, err := driver.ParseCursor(again)
		if err != nil || at2 != at || seq2 != seq {
			t.Fatalf("ParseCursor(Cursor(%d, %d)) = %d, %d, %v", at, seq, at2, seq2, err)
		}
	})
}

// TestRunKeyID: the id of the stored key a run came with reaches the
// Observer and the run log.
func TestRunKeyID(t *testing.T) {
	obs := &recorder{}
	e := newEnv(t, func(c *endpoint.Config) { c.Observer = obs })
	e.create(t, "by_country", e.query("SELECT id FROM orders WHERE country = {variables.country} ORDER BY id", "country"))
	const id = "11111111-1111-4111-8111-111111111111"
	runReq(t, e, "by_country", endpoint.RunRequest{Variables: map[string]any{"country": "US"}, KeyID: id})
	evs := obs.runEvents()
	require.Len(t, evs, 1, "observed %+v, want one run with key id %s", evs, id)
	require.Equal(t, id, evs[0].KeyID, "observed %+v, want one run with key id %s", evs, id)
	list, _, err := e.svc.Logs(context.Background(), "1", "by_country", 0, "")
	if err != nil || len(list) != 1 || list[0].KeyID != id {
		t.Fatalf("Logs = %+v, %v; want one entry with key id %s", list, err, id)
	}
}

// TestRunLogSurvivesClose: the run log is written off the run path, and
// Close writes what is queued: every run is in the log of a store opened
// again on the same file, newest first, paged as before.
func TestRunLogSurvivesClose(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "store.db")
	open := func() (*sql.DB, *sqlstore.Store) {
		db := testdb.SQLitePool(t, "file:"+file+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)", 0)
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
	svc := memService(t, sqlexec.New(testdb.SQLite(t), engine.SQLite), func(c *endpoint.Config) {
		c.RunLog, c.RunLogBuffer, c.Observer = log, 3, rec
	})
	_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "one", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1"}})
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
