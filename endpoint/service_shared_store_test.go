package endpoint_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// readCounter counts the reads a Service makes of its stores.
type readCounter struct{ n atomic.Int64 }

func (c *readCounter) load() int64 { return c.n.Load() }

// readCountingStore counts every read of an endpoint store.
type readCountingStore struct {
	driver.Store
	reads *readCounter
}

func (s readCountingStore) Get(ctx context.Context, project, name string) (driver.Endpoint, error) {
	s.reads.n.Add(1)
	return s.Store.Get(ctx, project, name)
}

func (s readCountingStore) List(ctx context.Context, project string) ([]driver.Endpoint, error) {
	s.reads.n.Add(1)
	return s.Store.List(ctx, project)
}

func (s readCountingStore) ListMaterialized(ctx context.Context) ([]driver.Endpoint, error) {
	s.reads.n.Add(1)
	return s.Store.ListMaterialized(ctx)
}

func (s readCountingStore) Version(ctx context.Context, project, id string, n int) (driver.Version, error) {
	s.reads.n.Add(1)
	return s.Store.Version(ctx, project, id, n)
}

func (s readCountingStore) Versions(ctx context.Context, project, id string) ([]driver.Version, error) {
	s.reads.n.Add(1)
	return s.Store.Versions(ctx, project, id)
}

// readCountingVars counts every read of a variable store.
type readCountingVars struct {
	variable.Store
	reads *readCounter
}

func (s readCountingVars) Get(ctx context.Context, project, id string) (variable.Variable, error) {
	s.reads.n.Add(1)
	return s.Store.Get(ctx, project, id)
}

func (s readCountingVars) GetMany(ctx context.Context, project string, ids []string) (map[string]variable.Variable, error) {
	s.reads.n.Add(1)
	return s.Store.GetMany(ctx, project, ids)
}

func (s readCountingVars) List(ctx context.Context, project string) ([]variable.Variable, error) {
	s.reads.n.Add(1)
	return s.Store.List(ctx, project)
}

// process is one Service over its own connections to a shared SQLite
// file, as a second process of the host would have.
type process struct {
	svc   *endpoint.Service
	reads *readCounter
}

// sharedFile returns a SQLite file holding the store's tables and an
// orders table, and opens a Service on it per clock given (nil: the
// default clock) with cfg applied.
func sharedFile(t *testing.T, recheck time.Duration, clocks ...func() time.Time) []process {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "shared.db") + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	var out []process
	for i, now := range clocks {
		db, err := sql.Open("sqlite", dsn)
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		st, err := sqlstore.New(db, engine.SQLite)
		require.NoError(t, err)
		if i == 0 {
			require.NoError(t, st.Migrate(context.Background()))
			_, err := db.Exec(ordersSQL)
			require.NoError(t, err)
		}
		reads := &readCounter{}
		x := sqlexec.New(db, engine.SQLite)
		t.Cleanup(func() { x.Close() })
		svc, err := endpoint.New(endpoint.Config{
			Endpoints:       readCountingStore{st.Endpoints(), reads},
			Variables:       readCountingVars{st.Variables(), reads},
			Executor:        x,
			Now:             now,
			RecheckInterval: recheck,
		})
		require.NoError(t, err)
		out = append(out, process{svc: svc, reads: reads})
	}
	return out
}

// runIDs runs name with vars and returns the version and the ids it read.
func runIDs(p process, name string, vars map[string]any) (int, []int64, error) {
	res, err := p.svc.Run(context.Background(), "1", name, endpoint.RunRequest{Variables: vars})
	if err != nil {
		return 0, nil, err
	}
	var ids []int64
	for _, row := range res.Results.([][]any) {
		ids = append(ids, row[0].(int64))
	}
	return res.EndpointVersion, ids, nil
}

// TestSharedStoreRuns: two Services on one SQLite file, as two processes.
// A run of an unchanged endpoint reads nothing from either store; a write
// through one Service is seen by its own next run at once, and by the
// other's once RecheckInterval has passed (by their common clock).
func TestSharedStoreRuns(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	ps := sharedFile(t, 0, clk.Now, clk.Now) // 0: DefaultRecheckInterval
	a, b := ps[0], ps[1]
	minAmount, err := a.svc.CreateVariable(ctx, "1", variable.Variable{Name: "min", Type: variable.Number})
	require.NoError(t, err)
	ref := map[string]endpoint.VariableRef{minAmount.ID: {VariableID: minAmount.ID, CodeName: "min"}}
	q := endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT id FROM orders WHERE amount > {variables.min} ORDER BY id", Variables: ref}
	if _, err := a.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "ep", Query: &q}); err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"min": 20}

	want := func(p process, who string, version int, ids ...int64) {
		t.Helper()
		v, got, err := runIDs(p, "ep", vars)
		if err != nil || v != version || !equalIDs(got, ids) {
			t.Fatalf("%s: version %d ids %v (%v), want version %d ids %v", who, v, got, err, version, ids)
		}
	}
	noReads := func(p process, who string, run func()) {
		t.Helper()
		before := p.reads.load()
		run()
		n := p.reads.load() - before
		require.Equal(t, int64(0), n, "%s: a run of an unchanged endpoint read the stores", who)
	}

	// First runs read; the next ones read nothing.
	want(a, "A first run", 1, 2, 5)
	want(b, "B first run", 1, 2, 5)
	for range 3 {
		noReads(a, "A", func() { want(a, "A", 1, 2, 5) })
		noReads(b, "B", func() { want(b, "B", 1, 2, 5) })
	}

	// A new version through A: A sees it at once; B within the bound.
	q.SQL = "SELECT id FROM orders WHERE amount > {variables.min} ORDER BY id DESC"
	if _, err := a.svc.Update(ctx, "1", "ep", endpoint.UpdateRequest{Query: &q}); err != nil {
		t.Fatal(err)
	}
	want(a, "A after its update", 2, 5, 2)
	noReads(b, "B within the bound", func() { want(b, "B within the bound", 1, 2, 5) })
	clk.Advance(endpoint.DefaultRecheckInterval)
	want(b, "B after the bound", 2, 5, 2)
	noReads(b, "B after rechecking", func() { want(b, "B", 2, 5, 2) })

	// A variable's type changed through B: a Number refuses "abc", a String
	// takes it (and SQLite finds no REAL above a text).
	vars = map[string]any{"min": "abc"}
	if _, _, err := runIDs(a, "ep", vars); err == nil {
		t.Fatal("a Number variable took a text value")
	}
	text := string(variable.String)
	if _, err := b.svc.UpdateVariable(ctx, "1", minAmount.ID, endpoint.VariablePatch{Type: &text}); err != nil {
		t.Fatal(err)
	}
	want(b, "B after its variable change", 2)
	if _, _, err := runIDs(a, "ep", vars); err == nil {
		t.Fatal("A saw B's variable change within the bound, so it read the store")
	}
	clk.Advance(endpoint.DefaultRecheckInterval)
	want(a, "A after the bound", 2)
	noReads(a, "A after rechecking", func() { want(a, "A", 2) })

	// Deactivated through B, then deleted through A.
	off := false
	if _, err := b.svc.Update(ctx, "1", "ep", endpoint.UpdateRequest{IsActive: &off}); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, b, "B after deactivating")
	want(a, "A within the bound", 2)
	clk.Advance(endpoint.DefaultRecheckInterval)
	wantNotFound(t, a, "A after the bound")
	on := true
	if _, err := b.svc.Update(ctx, "1", "ep", endpoint.UpdateRequest{IsActive: &on}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(endpoint.DefaultRecheckInterval)
	want(a, "A after reactivation", 2)
	want(b, "B after reactivation", 2)
	require.NoError(t, a.svc.Delete(ctx, "1", "ep"))
	wantNotFound(t, a, "A after deleting")
	want(b, "B within the bound", 2)
	clk.Advance(endpoint.DefaultRecheckInterval)
	wantNotFound(t, b, "B after the bound")
}

func wantNotFound(t *testing.T, p process, who string) {
	t.Helper()
	_, _, err := runIDs(p, "ep", map[string]any{"min": "1"})
	require.ErrorIs(t, err, endpoint.ErrNotFound, "%s", who)
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSharedStoreRecheckRealTime: with the default clock, a change made
// through one Service is seen by the other within RecheckInterval of wall
// time.
func TestSharedStoreRecheckRealTime(t *testing.T) {
	const recheck = 100 * time.Millisecond
	ctx := context.Background()
	ps := sharedFile(t, recheck, nil, nil)
	a, b := ps[0], ps[1]
	q := endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT id FROM orders WHERE id = 1"}
	_, err := a.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "ep", Query: &q})
	require.NoError(t, err)
	if _, ids, err := runIDs(b, "ep", nil); err != nil || !equalIDs(ids, []int64{1}) {
		t.Fatalf("B: %v %v", ids, err)
	}
	q.SQL = "SELECT id FROM orders WHERE id = 2"
	if _, err := a.svc.Update(ctx, "1", "ep", endpoint.UpdateRequest{Query: &q}); err != nil {
		t.Fatal(err)
	}
	updated := time.Now()
	for {
		_, ids, err := runIDs(b, "ep", nil)
		require.NoError(t, err)
		if equalIDs(ids, []int64{2}) {
			break
		}
		// The bound plus slack for a loaded machine.
		require.LessOrEqual(t, time.Since(updated), recheck+time.Second, "B still answers %v", ids)
		time.Sleep(5 * time.Millisecond)
	}
}
