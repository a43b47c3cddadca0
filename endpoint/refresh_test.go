package endpoint_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaterializationStaleRunsInline: past its freshness period a table no
// longer serves; RefreshStale rebuilds exactly the stale and pending
// endpoints.
func TestMaterializationStaleRunsInline(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	q := e.daily()
	freshness := endpoint.Seconds(10 * time.Minute)
	e.createMat(t, "daily", q, endpoint.CreateRequest{MaterializationFreshness: freshness})
	e.createMat(t, "other", q, endpoint.CreateRequest{})
	e.create(t, "plain", q)
	ctx := context.Background()
	n, err := e.svc.RefreshStale(ctx)
	require.NoError(t, err, "RefreshStale of two pending endpoints = %d, %v", n, err)
	require.Equal(t, 2, n, "RefreshStale of two pending endpoints = %d, %v", n, err)
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 0 {
		t.Fatalf("RefreshStale of fresh endpoints = %d, %v", n, err)
	}
	vars := runVars("US", "2025-05-01", "2025-05-08")
	require.True(t, e.mustRun(t, "daily", vars).EndpointMaterialized, "a fresh table did not serve")
	e.clock.Advance(10*time.Minute + time.Second)
	require.False(t, e.mustRun(t, "daily", vars).EndpointMaterialized, "a stale table served")
	require.True(t, e.mustRun(t, "other", vars).EndpointMaterialized, "the default freshness is an hour")
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 1 {
		t.Fatalf("RefreshStale of one stale endpoint = %d, %v", n, err)
	}
	res := e.mustRun(t, "daily", vars)
	require.True(t, res.EndpointMaterialized, "after the refresh: %v at %v", res.EndpointMaterialized, res.EndpointMaterializedAt)
	require.True(t, res.EndpointMaterializedAt.Equal(e.clock.Now()), "after the refresh: %v at %v", res.EndpointMaterialized, res.EndpointMaterializedAt)
	require.Len(t, e.tables(t), 2, "tables")
}

// TestMaterializationFailureKeepsLastTable: a failed refresh reports
// failed with an error that leaks nothing, and the last good table keeps
// serving; a failed first refresh leaves runs inline.
func TestMaterializationFailureKeepsLastTable(t *testing.T) {
	e, x := newMatEnv(t, 2000)
	q := e.daily()
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.createMat(t, "never", q, endpoint.CreateRequest{})
	e.materialize(t, "daily")
	built := *e.get(t, "daily").Materialization.LastMaterializedAt
	vars := runVars("DE", "2025-04-01", "2025-05-01")
	before := e.mustRun(t, "daily", vars)

	x.fail.Store(true)
	e.clock.Advance(time.Minute)
	for _, name := range []string{"daily", "never"} {
		err := e.svc.Materialize(context.Background(), "1", name)
		wantError(t, err, 502, endpoint.CodeMaterializationFailed,
			"Materialization of endpoint '"+name+"' failed: the query could not be executed against the database", "")
		require.Contains(t, fmt.Sprint(errors.Unwrap(err)), "disk I/O", "the cause is not reachable: %v", errors.Unwrap(err))
	}
	m := e.get(t, "daily").Materialization
	if m.Status != endpoint.StatusFailed || m.Error != "the query could not be executed against the database" ||
		m.LastMaterializedAt == nil || !m.LastMaterializedAt.Equal(built) {
		t.Fatalf("after a failed refresh: %+v", m)
	}
	after := e.mustRun(t, "daily", vars)
	require.True(t, after.EndpointMaterialized, "the last good table stopped serving: %+v", after)
	require.Equal(t, before.Results, after.Results, "the last good table stopped serving: %+v", after)
	if m := e.get(t, "never").Materialization; m.Status != endpoint.StatusFailed || m.LastMaterializedAt != nil {
		t.Fatalf("never refreshed: %+v", m)
	}
	require.False(t, e.mustRun(t, "never", vars).EndpointMaterialized, "an endpoint without a table read one")
	n, err := e.svc.RefreshStale(context.Background())
	require.Equal(t, 0, n, "RefreshStale with a fresh and a failing endpoint = %d, %v", n, err)
	require.Error(t, err, "RefreshStale with a fresh and a failing endpoint = %d, %v", n, err)
	x.fail.Store(false)
	e.materialize(t, "never")
	if m := e.get(t, "never").Materialization; m.Status != endpoint.StatusCompleted || m.Error != "" {
		t.Fatalf("after a good refresh: %+v", m)
	}
}

// TestMaterializationVersions: a new version runs inline until its own
// table is built; the previous table is dropped only then; older versions
// always run inline; turning materialization off or deleting the endpoint
// drops its table.
func TestMaterializationVersions(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	ctx := context.Background()
	ep := e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	e.materialize(t, "daily")
	v1 := materialize.TableName(ep.ID, 1)
	got := e.tables(t)
	require.Equal(t, []string{v1}, got, "tables %v, want [%s]", got, v1)
	vars := runVars("FR", "2025-04-01", "2025-05-01")
	weekly := e.query(strings.Replace(dailyPurchases, "date(timestamp)", "strftime('%Y-%W', timestamp)", 1), "country", "from", "to")
	up, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{Query: weekly})
	require.NoError(t, err)
	require.Equal(t, endpoint.StatusPending, up.Materialization.Status, "a new version: %+v", up.Materialization)
	require.Nil(t, up.Materialization.LastMaterializedAt, "a new version: %+v", up.Materialization)
	res := e.mustRun(t, "daily", vars)
	require.False(t, res.EndpointMaterialized, "version 2 before its refresh: %+v", res)
	require.Equal(t, 2, res.EndpointVersion, "version 2 before its refresh: %+v", res)
	one := 1
	if res, err := e.svc.Run(ctx, "1", "daily", endpoint.RunRequest{Variables: vars, Version: &one}); err != nil || res.EndpointMaterialized {
		t.Fatalf("version 1: %+v, %v", res, err)
	}
	require.Equal(t, []string{v1}, e.tables(t), "the old table went before the new one was built")
	e.materialize(t, "daily")
	v2 := materialize.TableName(ep.ID, 2)
	if got := e.tables(t); !reflect.DeepEqual(got, []string{v2}) {
		t.Fatalf("tables %v, want [%s]", got, v2)
	}
	if res := e.mustRun(t, "daily", vars); !res.EndpointMaterialized || len(res.Results.([][]any)) == 0 {
		t.Fatalf("version 2 after its refresh: %+v", res)
	}
	if res, err := e.svc.Run(ctx, "1", "daily", endpoint.RunRequest{Variables: vars, Version: &one}); err != nil || res.EndpointMaterialized {
		t.Fatalf("version 1 after version 2's refresh: %+v, %v", res, err)
	}

	no := false
	off, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{IsMaterialized: &no})
	if err != nil || off.Materialization.Status != "" || len(e.tables(t)) != 0 {
		t.Fatalf("turned off: %+v, %v, tables %v", off.Materialization, err, e.tables(t))
	}
	yes := true
	if _, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{IsMaterialized: &yes}); err != nil {
		t.Fatal(err)
	}
	e.materialize(t, "daily")
	require.Len(t, e.tables(t), 1, "tables")
	require.NoError(t, e.svc.Delete(ctx, "1", "daily"))
	require.Empty(t, e.tables(t), "tables left after delete")
}

// TestMaterializeOneAtATime: concurrent refreshes of one endpoint, by
// Materialize and RefreshStale, never overlap, and runs during them
// answer correctly from the table or inline.
func TestMaterializeOneAtATime(t *testing.T) {
	e, x := newMatEnv(t, 2000)
	q := e.daily()
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	vars := runVars("US", "2025-04-01", "2025-05-01")
	want := e.mustRun(t, "inline", vars).Results
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			switch i % 3 {
			case 0:
				err = e.svc.Materialize(context.Background(), "1", "daily")
			case 1:
				_, err = e.svc.RefreshStale(context.Background())
			default:
				var res *endpoint.RunResult
				if res, err = e.svc.Run(context.Background(), "1", "daily", endpoint.RunRequest{Variables: vars}); err == nil && !sameJSON(res.Results, want) {
					err = fmt.Errorf("run during refreshes: %v, want %v", res.Results, want)
				}
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.Equal(t, int32(0), x.overlaps.Load())
	m := e.get(t, "daily").Materialization
	require.Equal(t, endpoint.StatusCompleted, m.Status, "status")
}

// buildGate is a heldexec.Fake that holds the builds of stored tables
// (their CREATE TABLE ..._next ... AS) from the start until Release (and
// again after Hold), telling on Started of each build held: the refresh is
// provably under way, in its build. It counts the builds in flight (held
// or running) and the most at once.
type buildGate struct {
	*heldexec.Fake
	inflight, most atomic.Int32
}

func newBuildGate(x driver.Executor) *buildGate {
	g := &buildGate{}
	g.Fake = heldexec.NewFake(x, heldexec.Held(64), heldexec.HoldExec(isBuild), heldexec.EachStatement(g.count))
	g.Hold()
	return g
}

// isBuild tells the statement that builds a stored table's "_next" twin.
func isBuild(st driver.Statement) bool {
	q := st.SQL()
	return strings.HasPrefix(q, "CREATE TABLE") && strings.Contains(strings.SplitN(q, " AS ", 2)[0], `_next"`)
}

// count counts the build st in flight while run holds and runs it.
func (g *buildGate) count(_ context.Context, st driver.Statement, run func() error) error {
	if !isBuild(st) {
		return run()
	}
	n := g.inflight.Add(1)
	defer g.inflight.Add(-1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
	return run()
}

// newGatedSchedEnv is a materialized env whose builds wait at a gate,
// observed by obs, with a scheduler that looks hourly (so that only the
// refresh a save asks for runs) running.
func newGatedSchedEnv(t *testing.T, obs endpoint.Observer) (*env, *buildGate) {
	t.Helper()
	e, x := newMatEnv(t, 1000)
	g := newBuildGate(x)
	st := &firstListed{Store: e.eps.Store, listed: make(chan struct{})}
	svc, err := endpoint.New(endpoint.Config{Endpoints: st, Variables: e.vstore, Executor: g, Now: e.clock.Now,
		Observer: obs, ScheduleInterval: time.Hour})
	require.NoError(t, err)
	e.svc = svc
	startSchedule(t, svc)
	// The scheduler's first look lists the materialized endpoints at once:
	// an endpoint saved before that look is its to refresh ("scheduled"),
	// and only one saved after is the save's ("saved").
	<-st.listed
	t.Cleanup(g.Release)
	return e, g
}

func triggers(obs *recorder) []string {
	var out []string
	for _, ev := range obs.refreshEvents() {
		out = append(out, ev.Trigger)
	}
	return out
}

// TestMaterializeAfterSaveBuildsOnce: saving an endpoint with
// is_materialized and then asking to materialize it (the README's
// sequence) builds its table once: the Materialize joins the refresh the
// save started (trigger=saved) and builds nothing of its own; the next
// Materialize, asked for fresh data, builds. Before, the table was built
// twice (saved, then manual).
func TestMaterializeAfterSaveBuildsOnce(t *testing.T) {
	obs := &recorder{}
	e, g := newGatedSchedEnv(t, obs)
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	<-g.Started // the save's refresh is building

	r := e.status(t, "daily")
	require.NotNil(t, r.Progress, "the status of a refresh under way shows its progress")
	assert.Equal(t, endpoint.PhaseBuilding, r.Progress.Phase)
	assert.Equal(t, "saved", r.Progress.Trigger)
	assert.Nil(t, r.Progress.RowsWritten, "the engine cannot say its rows before the build statement ends")
	assert.NotEmpty(t, r.Progress.Note, "a null figure is explained")
	assert.GreaterOrEqual(t, r.Progress.ElapsedMS, 0.0)

	done := make(chan error, 1)
	go func() { done <- e.svc.Materialize(context.Background(), "1", "daily") }()
	g.Release()
	require.NoError(t, <-done)
	eventually(t, "the save's refresh event", func() bool { return len(obs.refreshEvents()) >= 1 })
	assert.Equal(t, []string{"saved"}, triggers(obs), "Materialize after a save built the table again")
	r = e.status(t, "daily")
	require.True(t, isStatus(r, endpoint.StatusCompleted), "%+v", r)
	assert.Nil(t, r.Progress, "no refresh is under way")

	// Asked again, it builds: the save's table was claimed.
	require.NoError(t, e.svc.Materialize(context.Background(), "1", "daily"))
	assert.Equal(t, []string{"saved", "manual"}, triggers(obs))
}

// TestStartMaterializeRunsInTheBackground: StartMaterialize returns while
// the refresh it started is still building (held at the gate), the status
// shows that refresh's progress meanwhile, and its end once it ends.
func TestStartMaterializeRunsInTheBackground(t *testing.T) {
	obs := &recorder{}
	e, x := newMatEnv(t, 1000)
	g := newBuildGate(x)
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps.Store, Variables: e.vstore, Executor: g, Now: e.clock.Now, Observer: obs})
	require.NoError(t, err)
	e.svc = svc
	t.Cleanup(g.Release)
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})

	started, err := svc.StartMaterialize(context.Background(), "1", "daily")
	require.NoError(t, err)
	assert.False(t, started.Joined)
	<-g.Started // returned, and the build is held: the refresh runs on
	r := e.status(t, "daily")
	require.NotNil(t, r.Progress)
	assert.Equal(t, endpoint.PhaseBuilding, r.Progress.Phase)
	assert.Equal(t, "manual", r.Progress.Trigger)
	assert.True(t, isStatus(r, endpoint.StatusRunning), "%+v", r)

	again, err := svc.StartMaterialize(context.Background(), "1", "daily")
	require.NoError(t, err)
	assert.True(t, again.Joined, "a second request while one is under way joins it")

	g.Release()
	eventually(t, "the background refresh", func() bool { return isStatus(e.status(t, "daily"), endpoint.StatusCompleted) })
	eventually(t, "its event", func() bool { return len(obs.refreshEvents()) >= 1 })
	assert.Equal(t, []string{"manual"}, triggers(obs))
	r = e.status(t, "daily")
	require.NotNil(t, r.Rows)
	assert.Positive(t, *r.Rows)

	// Unknown and not materialized endpoints are refused before anything starts.
	_, err = svc.StartMaterialize(context.Background(), "1", "nope")
	wantError(t, err, 404, endpoint.CodeNotFound, "Endpoint 'nope' not found.", "")
	e.create(t, "inline", e.daily())
	_, err = svc.StartMaterialize(context.Background(), "1", "inline")
	wantError(t, err, 400, endpoint.CodeInvalidInput, "Endpoint 'inline' is not materialized; set is_materialized to true first.", "is_materialized")
}

// TestMaterializationStatusWarnsOfLowSavings: a stored table that holds
// nearly as many rows as its query reads from the source (here one per
// source row) is flagged in the status, with both counts; one that groups
// many source rows into few is not; and the ratio is a setting.
func TestMaterializationStatusWarnsOfLowSavings(t *testing.T) {
	e, _ := newMatEnv(t, 1000)
	ctx := context.Background()
	e.createMat(t, "rows", e.query(`SELECT timestamp, distinct_id FROM events WHERE distinct_id = {variables.country}`, "country"), endpoint.CreateRequest{})
	e.createMat(t, "by_event", e.query(`SELECT count(*) AS n FROM events WHERE event = {variables.country}`, "country"), endpoint.CreateRequest{})
	require.NoError(t, e.svc.Materialize(ctx, "1", "rows"))
	require.NoError(t, e.svc.Materialize(ctx, "1", "by_event"))

	r := e.status(t, "rows")
	require.NotNil(t, r.SourceRows)
	assert.Equal(t, int64(1000), *r.SourceRows)
	require.NotNil(t, r.SavingsWarning, "%+v", r)
	assert.Contains(t, *r.SavingsWarning, "1000 rows for the 1000 source rows")
	assert.Contains(t, *r.SavingsWarning, "saves little")

	d := e.status(t, "by_event")
	require.NotNil(t, d.SourceRows)
	require.NotNil(t, d.Rows)
	assert.Less(t, *d.Rows*2, *d.SourceRows, "the table groups its source by event")
	assert.Nil(t, d.SavingsWarning)

	// A refresh of the same version keeps the count of the first.
	require.NoError(t, e.svc.Materialize(ctx, "1", "rows"))
	assert.Equal(t, r.SourceRows, e.status(t, "rows").SourceRows)

	// Off (a negative ratio): no warning.
	off, err := endpoint.New(endpoint.Config{Endpoints: e.eps.Store, Variables: e.vstore, Executor: execOf(e), Now: e.clock.Now, LowSavingsRatio: -1})
	require.NoError(t, err)
	st, err := off.MaterializationStatus(ctx, "1", "rows")
	require.NoError(t, err)
	assert.Nil(t, st.SavingsWarning)
}

// firstListed is a store that tells when the materialized endpoints were
// first listed (the scheduler's first look).
type firstListed struct {
	driver.Store
	once   sync.Once
	listed chan struct{}
}

func (f *firstListed) ListMaterialized(ctx context.Context) ([]driver.Endpoint, error) {
	list, err := f.Store.ListMaterialized(ctx)
	f.once.Do(func() { close(f.listed) })
	return list, err
}

// TestVariableChangeUnservesTable: a stored table is built for the
// variable definitions of its query; once a variable's type changes, the
// table no longer serves (runs go inline, with the inline answer) until a
// refresh builds one for the new definitions.
func TestVariableChangeUnservesTable(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	ctx := context.Background()
	q := e.daily()
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

// gatedEnv is newMatEnv with a gated executor and the Service's settings
// changed by cfg.
func gatedEnv(t *testing.T, cfg func(*endpoint.Config)) (*env, *buildGate) {
	t.Helper()
	e, _ := newMatEnv(t, 2000)
	g := newBuildGate(execOf(e))
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
	q := e.daily()
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	g.Release()
	e.materialize(t, "daily")
	vars := runVars("US", "2025-04-01", "2025-05-01")
	before := e.mustRun(t, "daily", vars)

	g.Hold() // released by nobody: the build waits for its limit
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
	q := e.daily()
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
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	done := make(chan error, 1)
	go func() { done <- e.svc.Materialize(context.Background(), "1", "daily") }()
	<-g.Started
	start := time.Now()
	require.NoError(t, e.svc.Delete(context.Background(), "1", "daily"))
	require.LessOrEqual(t, time.Since(start), 500*time.Millisecond, "Delete waited")
	g.Release()
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
	ep := e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	done := make(chan error, 1)
	go func() { done <- e.svc.Materialize(context.Background(), "1", "daily") }()
	<-g.Started
	weekly := e.query(strings.Replace(dailyPurchases, "date(timestamp)", "strftime('%Y-%W', timestamp)", 1), "country", "from", "to")
	if _, err := e.svc.Update(context.Background(), "1", "daily", endpoint.UpdateRequest{Query: weekly}); err != nil {
		t.Fatal(err)
	}
	g.Release()
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
	q := e.daily()
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
	<-g.Started
	<-g.Started
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
	g.Release()
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
	q := e.daily()
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

// TestRefreshByteLimit: issue 25's materialization, one wide value per
// group (scaled down), is measured once built: the status reports its
// bytes; under a MaxMaterializedBytes below them the refresh fails naming
// the limit, drops what it built, and the last good table keeps serving;
// at the bound it completes. On SQLite, PostgreSQL and MariaDB (when their
// variables are set).
func TestRefreshByteLimit(t *testing.T) {
	// pad is a wide value per group; least the least size the table may
	// take (PostgreSQL compresses a repeated value).
	sizes := map[string]struct {
		pad   string
		least int64
	}{
		"sqlite":   {"printf('%.*c', 200000, page)", 4 * 200000},
		"postgres": {"repeat(md5(page), 6000)", 8192},
		"mariadb":  {"REPEAT(MD5(page), 6000)", 4 * 192000},
	}
	for _, e := range hitsEngines() {
		size := sizes[e.name]
		t.Run(e.name, func(t *testing.T) {
			x := hitsExecutor(t, e, "('a', 1), ('b', 2), ('c', 3), ('d', 4)")
			ctx := context.Background()
			eps, vars := memstore.New(), variable.NewMemoryStore()
			svc := func(max int64) *endpoint.Service {
				s, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Executor: x, MaxMaterializedBytes: max})
				require.NoError(t, err)
				return s
			}
			def := svc(0)
			if _, err := def.Create(ctx, "1", endpoint.CreateRequest{Name: "padded", IsMaterialized: true, Query: &endpoint.Query{
				Kind: endpoint.KindSQL, SQL: "SELECT page, " + size.pad + " AS pad, count(*) AS n FROM hits GROUP BY page, pad",
			}}); err != nil {
				t.Fatal(err)
			}
			require.NoError(t, def.Materialize(ctx, "1", "padded"))
			rep, err := def.MaterializationStatus(ctx, "1", "padded")
			if err != nil || rep.Bytes == nil || *rep.Bytes < size.least {
				t.Fatalf("status after the refresh: %+v, %v; want the table's bytes, at least %d", rep, err, size.least)
			}
			size := *rep.Bytes
			t.Logf("the table takes %d bytes", size)

			err = svc(size/2).Materialize(ctx, "1", "padded")
			wantLimit(t, err, endpoint.LimitMaxMaterializedBytes, size/2)
			require.ErrorContains(t, err, "max_materialized_bytes", "over the limit")
			rep, err = def.MaterializationStatus(ctx, "1", "padded")
			if err != nil || rep.LastError == nil || !strings.Contains(*rep.LastError, "max_materialized_bytes") || rep.Version != 1 {
				t.Fatalf("status after the refused refresh: %+v, %v", rep, err)
			}
			res, err := def.Run(ctx, "1", "padded", endpoint.RunRequest{})
			if err != nil || !res.EndpointMaterialized || len(res.Results.([][]any)) != 4 {
				t.Fatalf("the last good table: %+v, %v", res, err)
			}
			require.NoError(t, svc(2*size).Materialize(ctx, "1", "padded"), "within the limit")
		})
	}
}

// edgeQuery reads a date range: its partial buckets and live tail read
// the source by the time column, on every engine.
const edgeQuery = `SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY event`

// edgeEngine is an engine the edge check runs on, with how to open an
// empty database of it and drop an index of the demo schema.
type edgeEngine struct {
	checkEngine
	drop func(index string) string
	rows int
}

var edgeEngines = []edgeEngine{
	{checkEngine{"sqlite", "", engine.SQLite, testdb.SQLite}, func(ix string) string { return "DROP INDEX " + ix }, 3000},
	// Enough rows that the planners prefer an index to reading the table.
	{checkEngines[1], func(ix string) string { return "DROP INDEX " + ix }, 20000},
	{checkEngines[2], func(ix string) string { return "DROP INDEX " + ix + " ON events" }, 20000},
}

// edgeService returns a Service on e over demo events of projects 1 and 2
// in the demo schema less the indexes drop names, scoped to project_id or
// not, with edgeQuery saved as the materialized endpoint "edges" (live
// tail on) refreshed, and "aligned", a query whose runs read no source.
func edgeService(t *testing.T, e edgeEngine, scoped bool, drop []string, obs endpoint.Observer) *endpoint.Service {
	t.Helper()
	if e.env != "" {
		testdb.Require(t, e.env)
	}
	ctx := context.Background()
	db := e.open(t)
	for _, stmt := range demo.SchemaFor(e.eng) {
		_, err := db.ExecContext(ctx, stmt)
		require.NoError(t, err)
	}
	for _, ix := range drop {
		_, err := db.ExecContext(ctx, e.drop(ix))
		require.NoError(t, err)
	}
	require.NoError(t, demo.Insert(ctx, db, e.eng, "1", e.rows, 1))
	require.NoError(t, demo.Insert(ctx, db, e.eng, "2", e.rows, 2))
	// SQLite's planner takes an index without statistics, as the demo
	// database has none; the others plan by their statistics.
	if analyze := map[string]string{"postgres": "ANALYZE events", "mariadb": "ANALYZE TABLE events"}[e.name]; analyze != "" {
		_, err := db.ExecContext(ctx, analyze)
		require.NoError(t, err)
	}
	now := demo.End.Add(time.Hour)
	cfg := memConfig(sqlexec.New(db, e.eng))
	cfg.Now, cfg.Observer = func() time.Time { return now }, obs
	if scoped {
		policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, nil)
		require.NoError(t, err)
		cfg.Access = policy
	}
	svc, err := endpoint.New(cfg)
	require.NoError(t, err)
	refs := map[string]map[string]endpoint.VariableRef{"edges": {}, "aligned": {}}
	for _, v := range []variable.Variable{{Name: "from", Type: variable.Date}, {Name: "to", Type: variable.Date}, {Name: "e", Type: variable.String}} {
		created, err := svc.CreateVariable(ctx, "1", v)
		require.NoError(t, err)
		of := "edges"
		if v.Name == "e" {
			of = "aligned"
		}
		refs[of][created.ID] = endpoint.VariableRef{VariableID: created.ID, CodeName: created.CodeName}
	}
	for _, req := range []endpoint.CreateRequest{
		{Name: "edges", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: edgeQuery, Variables: refs["edges"]}, IsMaterialized: true, MaterializationTail: "timestamp"},
		{Name: "aligned", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: `SELECT count(*) AS n FROM events WHERE event = {variables.e}`, Variables: refs["aligned"]}, IsMaterialized: true},
	} {
		_, err := svc.Create(ctx, "1", req)
		require.NoError(t, err)
		require.NoError(t, svc.Materialize(ctx, "1", req.Name))
	}
	return svc
}

// TestEdgeIndexStatus: a refresh asks the engine's query plan of the
// reads of the source that runs make beside the stored table (the partial
// buckets of a range off its buckets' boundaries, the live tail) and the
// status says whether an index serves them: with the demo schema's time
// indexes, scoped (project_id, timestamp) or not (timestamp), it does;
// without a time index it does not, which the status says, the log warns
// of and RefreshEvent carries (endpoint/metrics counts it). Unscoped
// reads of the demo schema before issue 39 (indexes leading with the
// tenant only) scanned the table: on SQLite that is said too. A query
// whose runs never read the source has no check (null).
func TestEdgeIndexStatus(t *testing.T) {
	ctx := context.Background()
	noTime := []string{"events_timestamp", "events_project_timestamp", "events_project_event_timestamp"}
	for _, e := range edgeEngines {
		t.Run(e.name, func(t *testing.T) {
			cases := []struct {
				name   string
				scoped bool
				drop   []string
				want   string
			}{
				{"scoped, time indexes", true, nil, endpoint.EdgeIndexUsed},
				{"unscoped, time indexes", false, nil, endpoint.EdgeIndexUsed},
				{"scoped, no time index", true, noTime, endpoint.EdgeIndexNotUsed},
				{"unscoped, no time index", false, noTime, endpoint.EdgeIndexNotUsed},
			}
			if e.name == "sqlite" {
				cases = append(cases, struct {
					name   string
					scoped bool
					drop   []string
					want   string
				}{"unscoped, tenant's time index only", false, []string{"events_timestamp"}, endpoint.EdgeIndexNotUsed})
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					var logs bytes.Buffer
					svc := edgeService(t, e, c.scoped, c.drop, endpoint.SlogObserver{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
					r, err := svc.MaterializationStatus(ctx, "1", "edges")
					require.NoError(t, err)
					require.NotNil(t, r.EdgeIndex, "edge_index")
					assert.Equal(t, c.want, *r.EdgeIndex)
					if c.want == endpoint.EdgeIndexUsed {
						assert.Nil(t, r.EdgeIndexWarning)
						assert.NotContains(t, logs.String(), "edge_index_warning")
					} else {
						require.NotNil(t, r.EdgeIndexWarning)
						assert.Contains(t, *r.EdgeIndexWarning, "the partial buckets of")
						assert.Contains(t, *r.EdgeIndexWarning, "the live tail")
						assert.Contains(t, *r.EdgeIndexWarning, "events")
						assert.Contains(t, *r.EdgeIndexWarning, "index on its time column")
						assert.Contains(t, logs.String(), "level=WARN msg=\"endpoint refresh\" project=1 endpoint=edges")
						assert.Contains(t, logs.String(), "edge_index=not_used")
					}
					r, err = svc.MaterializationStatus(ctx, "1", "aligned")
					require.NoError(t, err)
					assert.Nil(t, r.EdgeIndex)
					assert.Nil(t, r.EdgeIndexWarning)
				})
			}
		})
	}
}

// TestEdgeIndexObserved: each refresh's event carries its check, for an
// Observer to count (endpoint/metrics does); runs do not check again.
func TestEdgeIndexObserved(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	svc := edgeService(t, edgeEngines[0], false, []string{"events_timestamp", "events_project_timestamp", "events_project_event_timestamp"}, rec)
	require.NoError(t, svc.Materialize(ctx, "1", "edges"))
	for range 3 {
		res, err := svc.Run(ctx, "1", "edges", endpoint.RunRequest{Variables: map[string]any{"from": "2025-05-02T09:30:00Z", "to": "2025-05-20T15:15:00Z"}})
		require.NoError(t, err)
		require.True(t, res.EndpointMaterialized)
	}
	var edges []endpoint.RefreshEvent
	for _, ev := range rec.refreshEvents() {
		switch ev.Endpoint {
		case "edges":
			edges = append(edges, ev)
		case "aligned":
			assert.Empty(t, ev.EdgeIndex)
			assert.Empty(t, ev.EdgeIndexWarning)
		}
	}
	require.Len(t, edges, 2)
	for _, ev := range edges {
		require.NoError(t, ev.Err)
		assert.Equal(t, endpoint.EdgeIndexNotUsed, ev.EdgeIndex)
		assert.Contains(t, ev.EdgeIndexWarning, "reads the table events whole")
	}
}

// TestRefreshLeaseSQLStores: two Services, each with its own pool and
// sqlstore.Store on one store database (two processes), over one events
// file, asked to refresh the same endpoints at once, by hand and by their
// schedulers: no refresh of an endpoint overlaps another of it, and every
// one completes. The store is SQLite, and PostgreSQL and MariaDB when
// their test servers are named.
func TestRefreshLeaseSQLStores(t *testing.T) {
	for _, st := range []struct {
		name string
		eng  engine.Engine
		dsn  func(t *testing.T) (driver, dsn string)
	}{
		{"sqlite", engine.SQLite, func(t *testing.T) (string, string) {
			return "sqlite", "file:" + filepath.Join(t.TempDir(), "store.db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
		}},
		{"postgres", engine.PostgreSQL, func(t *testing.T) (string, string) { return "pgx", testdb.PostgresDSN(t) }},
		{"mysql", engine.MySQL, func(t *testing.T) (string, string) { return "mysql", testdb.MySQLDSN(t) }},
	} {
		t.Run(st.name, func(t *testing.T) {
			driver, dsn := st.dsn(t)
			ctx := context.Background()
			// One connection: with several, concurrent refreshes of
			// different endpoints on SQLite sometimes fail their index
			// ("already exists") on main as well; that is not what this
			// test is about.
			events := testdb.SQLiteAt(t, "file:"+filepath.Join(t.TempDir(), "events.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
			require.NoError(t, demo.Load(ctx, events, 1000, 7))
			tracker := watchRefreshes(sqlexec.New(events, engine.SQLite))
			var svcs []*endpoint.Service
			for range 2 {
				db, err := sql.Open(driver, dsn)
				require.NoError(t, err)
				t.Cleanup(func() { db.Close() })
				store, err := sqlstore.New(db, st.eng)
				require.NoError(t, err)
				require.NoError(t, store.Migrate(ctx))
				svc, err := endpoint.New(endpoint.Config{Endpoints: store.Endpoints(), Variables: store.Variables(), Executor: tracker,
					ScheduleInterval: 5 * time.Millisecond, Observer: endpoint.SlogObserver{Logger: discardLogger()}})
				require.NoError(t, err)
				svcs = append(svcs, svc)
			}
			v, err := svcs[0].CreateVariable(ctx, "1", variable.Variable{Name: "Event", Type: variable.String})
			require.NoError(t, err)
			q := endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT event, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY event",
				Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: "event"}}}
			names := []string{"a", "b", "c"}
			for _, name := range names {
				_, err := svcs[0].Create(ctx, "1", endpoint.CreateRequest{Name: name, Query: &q, IsMaterialized: true})
				require.NoError(t, err)
			}
			var wg sync.WaitGroup
			for i := range 12 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := svcs[i%2].Materialize(ctx, "1", names[i%3])
					assert.NoError(t, err, "(%v)", errors.Unwrap(err))
				}()
			}
			wg.Wait()
			sctx, cancel := context.WithCancel(ctx)
			var done sync.WaitGroup
			for _, svc := range svcs {
				done.Add(1)
				go func() { defer done.Done(); _ = svc.Schedule(sctx) }()
			}
			// A new version of each: both schedulers see them pending.
			q.SQL += " ORDER BY event"
			for _, name := range names {
				_, err := svcs[1].Update(ctx, "1", name, endpoint.UpdateRequest{Query: &q})
				require.NoError(t, err)
			}
			eventually(t, "the refreshes of version 2", func() bool {
				for _, name := range names {
					r, err := svcs[0].MaterializationStatus(ctx, "1", name)
					if err != nil || r.Status == nil || *r.Status != endpoint.StatusCompleted || r.Version != 2 {
						return false
					}
				}
				return true
			})
			cancel()
			done.Wait()
			require.Equal(t, int32(0), tracker.overlaps.Load())
		})
	}
}

// discardLogger logs nothing.
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
