package endpoint_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
)

// buildGate holds every statement that builds a stored table (CREATE
// TABLE ... AS) until the test releases it, telling the test on started
// that one is held: the refresh is provably under way, in its build.
type buildGate struct {
	driver.Executor
	started chan struct{}
	mu      sync.Mutex
	gate    chan struct{} // nil: not holding
}

func newBuildGate(x driver.Executor) *buildGate {
	return &buildGate{Executor: x, started: make(chan struct{}, 8), gate: make(chan struct{})}
}

func (g *buildGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
}

func (g *buildGate) Exec(ctx context.Context, stmts []driver.Statement, w driver.Write) error {
	for _, st := range stmts {
		if !strings.Contains(st.SQL(), "CREATE TABLE") {
			continue
		}
		g.mu.Lock()
		gate := g.gate
		g.mu.Unlock()
		if gate != nil {
			g.started <- struct{}{}
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		break
	}
	return g.Executor.Exec(ctx, stmts, w)
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
	t.Cleanup(g.release)
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
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})
	<-g.started // the save's refresh is building

	r := e.status(t, "daily")
	require.NotNil(t, r.Progress, "the status of a refresh under way shows its progress")
	assert.Equal(t, endpoint.PhaseBuilding, r.Progress.Phase)
	assert.Equal(t, "saved", r.Progress.Trigger)
	assert.Nil(t, r.Progress.RowsWritten, "the engine cannot say its rows before the build statement ends")
	assert.NotEmpty(t, r.Progress.Note, "a null figure is explained")
	assert.GreaterOrEqual(t, r.Progress.ElapsedMS, 0.0)

	done := make(chan error, 1)
	go func() { done <- e.svc.Materialize(context.Background(), "1", "daily") }()
	g.release()
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
	t.Cleanup(g.release)
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})

	started, err := svc.StartMaterialize(context.Background(), "1", "daily")
	require.NoError(t, err)
	assert.False(t, started.Joined)
	<-g.started // returned, and the build is held: the refresh runs on
	r := e.status(t, "daily")
	require.NotNil(t, r.Progress)
	assert.Equal(t, endpoint.PhaseBuilding, r.Progress.Phase)
	assert.Equal(t, "manual", r.Progress.Trigger)
	assert.True(t, isStatus(r, endpoint.StatusRunning), "%+v", r)

	again, err := svc.StartMaterialize(context.Background(), "1", "daily")
	require.NoError(t, err)
	assert.True(t, again.Joined, "a second request while one is under way joins it")

	g.release()
	eventually(t, "the background refresh", func() bool { return isStatus(e.status(t, "daily"), endpoint.StatusCompleted) })
	eventually(t, "its event", func() bool { return len(obs.refreshEvents()) >= 1 })
	assert.Equal(t, []string{"manual"}, triggers(obs))
	r = e.status(t, "daily")
	require.NotNil(t, r.Rows)
	assert.Positive(t, *r.Rows)

	// Unknown and not materialized endpoints are refused before anything starts.
	_, err = svc.StartMaterialize(context.Background(), "1", "nope")
	wantError(t, err, 404, endpoint.CodeNotFound, "Endpoint 'nope' not found.", "")
	e.create(t, "inline", e.query(dailyPurchases, "country", "from", "to"))
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
