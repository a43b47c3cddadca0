package endpoint_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVariableChangeUnservesTable: a stored table is built for the
// variable definitions of its query; once a variable's type changes, the
// table no longer serves (runs go inline, with the inline answer) until a
// refresh builds one for the new definitions.
func TestVariableChangeUnservesTable(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	ctx := context.Background()
	q := e.query(dailyPurchases, "country", "from", "to")
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	e.materialize(t, "daily")
	require.True(t, e.mustRun(t, "daily", runVars("US", "2025-04-01", "2025-05-01")).EndpointMaterialized, "the table does not serve")
	text := "String"
	_, err := e.svc.UpdateVariable(ctx, "1", e.vars["from"].ID, endpoint.VariablePatch{Type: &text})
	require.NoError(t, err)
	// A time of day, which a String compares as it is and the daily
	// buckets of the old table cannot answer.
	vars := runVars("US", "2025-04-08 00:00:01", "2025-05-01")
	want := e.mustRun(t, "inline", vars)
	got := e.mustRun(t, "daily", vars)
	require.False(t, got.EndpointMaterialized, "after the type change: materialized %v, %v; want inline %v", got.EndpointMaterialized, got.Results, want.Results)
	require.Equal(t, want.Results, got.Results, "after the type change: materialized %v, %v; want inline %v", got.EndpointMaterialized, got.Results, want.Results)
	m := e.get(t, "daily").Materialization
	require.Equal(t, endpoint.StatusPending, m.Status, "after the type change: %+v, want pending without a table", m)
	require.Nil(t, m.LastMaterializedAt, "after the type change: %+v, want pending without a table", m)
	e.materialize(t, "daily")
	got = e.mustRun(t, "daily", vars)
	require.True(t, got.EndpointMaterialized, "after a refresh: materialized %v, %v; want %v", got.EndpointMaterialized, got.Results, want.Results)
	require.Equal(t, want.Results, got.Results, "after a refresh: materialized %v, %v; want %v", got.EndpointMaterialized, got.Results, want.Results)
}

// gateExec wraps an executor: the build of a stored table (its CREATE
// TABLE ... _next) waits at the gate until it is opened or the context
// ends, and the builds in flight are counted.
type gateExec struct {
	driver.Executor
	gate           chan struct{} // closed: builds pass
	entered        chan string   // a build reached the gate (its table)
	inflight, most atomic.Int32
	mu             sync.Mutex
}

func newGate(x driver.Executor) *gateExec {
	return &gateExec{Executor: x, gate: make(chan struct{}), entered: make(chan string, 64)}
}

func (g *gateExec) Exec(ctx context.Context, stmts []driver.Statement, tx driver.Write) error {
	return execEach(ctx, g.Executor, stmts, tx.Tx, func(q string, run func() error) error { return g.exec(ctx, q, run) })
}

// exec holds a build's statement q at the gate, then runs it.
func (g *gateExec) exec(ctx context.Context, q string, run func() error) error {
	if strings.HasPrefix(q, "CREATE TABLE") && strings.Contains(strings.SplitN(q, " AS ", 2)[0], `_next"`) {
		n := g.inflight.Add(1)
		defer g.inflight.Add(-1)
		g.mu.Lock()
		if n > g.most.Load() {
			g.most.Store(n)
		}
		g.mu.Unlock()
		g.entered <- q
		select {
		case <-g.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return run()
}

// gatedEnv is newMatEnv with a gated executor and the Service's settings
// changed by cfg.
func gatedEnv(t *testing.T, cfg func(*endpoint.Config)) (*env, *gateExec) {
	t.Helper()
	e, _ := newMatEnv(t, 2000)
	g := newGate(execOf(e))
	c := endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: g, Now: e.clock.Now}
	if cfg != nil {
		cfg(&c)
	}
	svc, err := endpoint.New(c)
	require.NoError(t, err)
	e.svc = svc
	return e, g
}

// TestRefreshTimeLimit: a refresh that runs past RefreshTimeout fails
// naming the limit, records it in the status, leaves nothing built behind
// and keeps the last good table serving.
func TestRefreshTimeLimit(t *testing.T) {
	e, g := gatedEnv(t, func(c *endpoint.Config) { c.RefreshTimeout = time.Second })
	q := e.query(dailyPurchases, "country", "from", "to")
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	close(g.gate)
	e.materialize(t, "daily")
	vars := runVars("US", "2025-04-01", "2025-05-01")
	before := e.mustRun(t, "daily", vars)

	g.gate = make(chan struct{}) // closed by nobody: the build waits for its limit
	e.clock.Advance(time.Minute)
	start := time.Now()
	err := e.svc.Materialize(context.Background(), "1", "daily")
	wantError(t, err, 502, endpoint.CodeMaterializationFailed,
		"Materialization of endpoint 'daily' failed: the refresh ran longer than refresh_timeout (1s)", "")
	wantLimit(t, err, endpoint.LimitRefreshTimeout, 1000)
	require.LessOrEqual(t, time.Since(start), 10*time.Second, "the refresh stopped after")
	m := e.get(t, "daily").Materialization
	if m.Status != endpoint.StatusFailed || m.Error != "the refresh ran longer than refresh_timeout (1s)" || m.LastMaterializedAt == nil {
		t.Fatalf("status after the timeout: %+v", m)
	}
	after := e.mustRun(t, "daily", vars)
	require.True(t, after.EndpointMaterialized, "the last good table stopped serving")
	require.Equal(t, before.Results, after.Results, "the last good table stopped serving")
	require.Len(t, e.tables(t), 1, "tables")
}

// TestRefreshRowLimit: a stored table may hold MaxMaterializedRows rows; a
// refresh that builds more fails naming the limit, drops what it built,
// and the table of the last refresh within the limit keeps serving.
func TestRefreshRowLimit(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	q := e.query(dailyPurchases, "country", "from", "to")
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.materialize(t, "daily")
	vars := runVars("US", "2025-04-01", "2025-05-01")
	before := e.mustRun(t, "daily", vars)
	small, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: execOf(e), Now: e.clock.Now, MaxMaterializedRows: 10})
	require.NoError(t, err)
	e.clock.Advance(time.Minute)
	err = small.Materialize(context.Background(), "1", "daily")
	wantError(t, err, 502, endpoint.CodeMaterializationFailed,
		"Materialization of endpoint 'daily' failed: the stored table would hold more than max_materialized_rows (10) rows", "")
	wantLimit(t, err, endpoint.LimitMaxMaterializedRows, 10)
	ep, err := small.Get(context.Background(), "1", "daily")
	if err != nil || ep.Materialization.Status != endpoint.StatusFailed || ep.Materialization.Error != "the stored table would hold more than max_materialized_rows (10) rows" {
		t.Fatalf("status: %+v, %v", ep.Materialization, err)
	}
	after := e.mustRun(t, "daily", vars)
	require.True(t, after.EndpointMaterialized, "the last good table stopped serving")
	require.Equal(t, before.Results, after.Results, "the last good table stopped serving")
	require.Len(t, e.tables(t), 1, "tables")
}

// TestDeleteDuringRefresh: an endpoint deleted while its table is built
// is deleted at once (no wait on the refresh), and the refresh notices
// before its swap, drops what it built and fails: no table is left.
func TestDeleteDuringRefresh(t *testing.T) {
	e, g := gatedEnv(t, nil)
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})
	done := make(chan error, 1)
	go func() { done <- e.svc.Materialize(context.Background(), "1", "daily") }()
	<-g.entered
	start := time.Now()
	require.NoError(t, e.svc.Delete(context.Background(), "1", "daily"))
	require.LessOrEqual(t, time.Since(start), 500*time.Millisecond, "Delete waited")
	close(g.gate)
	err := <-done
	wantError(t, err, 404, endpoint.CodeNotFound, "Endpoint 'daily' was deleted or renamed while its table was built; the table was dropped.", "")
	require.Empty(t, e.tables(t), "tables left behind")
}

// TestChangeDuringRefresh: an endpoint whose query changes while its table
// is built keeps its last table (of the old version, which no longer
// serves), and the refresh drops what it built; the next refresh builds
// the new version.
func TestChangeDuringRefresh(t *testing.T) {
	e, g := gatedEnv(t, nil)
	ep := e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})
	done := make(chan error, 1)
	go func() { done <- e.svc.Materialize(context.Background(), "1", "daily") }()
	<-g.entered
	weekly := e.query(strings.Replace(dailyPurchases, "date(timestamp)", "strftime('%Y-%W', timestamp)", 1), "country", "from", "to")
	if _, err := e.svc.Update(context.Background(), "1", "daily", endpoint.UpdateRequest{Query: weekly}); err != nil {
		t.Fatal(err)
	}
	close(g.gate)
	err := <-done
	wantError(t, err, 409, endpoint.CodeConflict, "Endpoint 'daily' changed while its table was built; the table was dropped. Refresh it again.", "")
	require.Empty(t, e.tables(t), "tables after the dropped build")
	e.materialize(t, "daily")
	require.Equal(t, []string{materialize.TableName(ep.ID, 2)}, e.tables(t), "tables")
}

// TestRefreshesBoundedAndUnblocking: at most MaxRefreshes refreshes build
// at once; while they do, runs, writes and deletes of other endpoints, and
// variable writes, complete at once; only a refresh of the same endpoint
// waits, for as long as its context lets it.
func TestRefreshesBoundedAndUnblocking(t *testing.T) {
	e, g := gatedEnv(t, nil) // MaxRefreshes: the default, 2
	q := e.query(dailyPurchases, "country", "from", "to")
	names := []string{"a", "b", "c", "d"}
	for _, n := range names {
		e.createMat(t, n, q, endpoint.CreateRequest{})
	}
	e.create(t, "plain", q)
	e.create(t, "doomed", q)
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	for _, n := range names {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- e.svc.Materialize(context.Background(), "1", n) }()
	}
	<-g.entered
	<-g.entered
	time.Sleep(50 * time.Millisecond) // a third would enter now if it could
	require.Equal(t, int32(2), g.inflight.Load())
	ctx := context.Background()
	start := time.Now()
	require.Equal(t, e.mustRun(t, "plain", runVars("US", "2025-04-01", "2025-05-01")).Results, e.mustRun(t, "a", runVars("US", "2025-04-01", "2025-05-01")).Results, "a run during the refresh answered otherwise than inline")
	e.create(t, "new", q)
	desc := "changed"
	if _, err := e.svc.Update(ctx, "1", "plain", endpoint.UpdateRequest{Description: &desc}); err != nil {
		t.Fatal(err)
	}
	require.NoError(t, e.svc.Delete(ctx, "1", "doomed"))
	name := "Renamed"
	if _, err := e.svc.UpdateVariable(ctx, "1", e.vars["paid"].ID, endpoint.VariablePatch{Name: &name}); err != nil {
		t.Fatal(err)
	}
	require.LessOrEqual(t, time.Since(start), time.Second, "runs and writes during refreshes took")
	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err := e.svc.Materialize(wctx, "1", "a")
	cancel()
	wantError(t, err, 504, endpoint.CodeTimeout, "Materialization of endpoint 'a' timed out waiting for a turn: other refreshes are running.", "")
	close(g.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	require.Equal(t, int32(2), g.most.Load(), "at most")
	require.Len(t, e.tables(t), 4, "tables")
}

// TestRemoveOrphans: RemoveOrphans drops the stored tables that no
// materialized endpoint needs (a deleted endpoint's left behind, an
// unknown one, a replaced version's) and keeps the rest; RefreshStale
// calls it.
func TestRemoveOrphans(t *testing.T) {
	e, _ := newMatEnv(t, 500)
	q := e.query(dailyPurchases, "country", "from", "to")
	ep := e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.materialize(t, "daily")
	live := materialize.TableName(ep.ID, 1)
	orphans := []string{
		materialize.TableName("0f0e0d0c-0000-4000-8000-000000000000", 3),
		materialize.TableName("0f0e0d0c-0000-4000-8000-000000000000", 3) + "_next",
		materialize.TableName(ep.ID, 7), // a version the endpoint does not have
	}
	for _, o := range orphans {
		_, err := e.db.Exec(`CREATE TABLE "` + o + `" (x INTEGER)`)
		require.NoError(t, err)
	}
	if _, err := e.db.Exec(`CREATE TABLE keep_me (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	n, err := e.svc.RemoveOrphans(context.Background())
	require.NoError(t, err, "RemoveOrphans = %d, %v; want 3", n, err)
	require.Equal(t, 3, n, "RemoveOrphans = %d, %v; want 3", n, err)
	got := e.tables(t)
	require.Equal(t, []string{live}, got, "tables %v, want [%s]", got, live)
	var keep int
	require.NoError(t, e.db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'keep_me'").Scan(&keep), "a table that is not a stored one was dropped")
	require.Equal(t, 1, keep, "a table that is not a stored one was dropped")
	require.True(t, e.mustRun(t, "daily", runVars("US", "2025-04-01", "2025-05-01")).EndpointMaterialized, "the live table stopped serving")
	if _, err := e.db.Exec(`CREATE TABLE "` + orphans[0] + `" (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.RefreshStale(context.Background()); err != nil {
		t.Fatal(err)
	}
	require.Equal(t, []string{live}, e.tables(t), "after RefreshStale: tables")
}
