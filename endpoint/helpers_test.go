package endpoint_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// env is a Service over in-memory stores and SQLite, with a project "1"
// that has the variables of testVariables and an orders table.
type env struct {
	svc    *endpoint.Service
	db     *sql.DB
	clock  *endpointtest.Clock
	eps    *countingStore
	vstore *countingVars
	vars   map[string]variable.Variable // by code name
}

const ordersSQL = `CREATE TABLE orders (id INTEGER PRIMARY KEY, country TEXT NOT NULL, plan TEXT NOT NULL, amount REAL NOT NULL, paid INTEGER NOT NULL, created TEXT NOT NULL);
INSERT INTO orders VALUES
 (1, 'US', 'free', 10, 1, '2025-01-01 10:00:00'),
 (2, 'DE', 'pro', 25.5, 0, '2025-01-02 11:00:00'),
 (3, 'US', 'pro', 7, 1, '2025-01-03 12:00:00'),
 (4, 'FR', 'enterprise', 12, 1, '2025-01-04 13:00:00'),
 (5, 'US', 'enterprise', 99, 0, '2025-01-05 14:00:00'),
 (6, 'GB', 'free', 1, 1, '2025-01-06 15:00:00')`

var testVariables = []variable.Variable{
	{Name: "Country", Type: variable.String, DefaultValue: "US"},
	{Name: "Min amount", Type: variable.Number},
	{Name: "From", Type: variable.Date},
	{Name: "To", Type: variable.Date},
	{Name: "Paid", Type: variable.Boolean},
	{Name: "Plans", Type: variable.List, Values: []string{"free", "pro", "enterprise"}, IsMulti: true},
	{Name: "Plan", Type: variable.List, Values: []string{"free", "pro", "enterprise"}},
}

func newEnv(t testing.TB, opts ...func(*endpoint.Config)) *env {
	t.Helper()
	db := testdb.SQLite(t)
	if _, err := db.Exec(ordersSQL); err != nil {
		t.Fatal(err)
	}
	e := &env{
		db:     db,
		clock:  endpointtest.NewClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)),
		eps:    &countingStore{Store: memstore.New()},
		vstore: &countingVars{Store: variable.NewMemoryStore()},
		vars:   map[string]variable.Variable{},
	}
	cfg := endpoint.Config{
		Endpoints: e.eps,
		Variables: e.vstore,
		Executor:  sqlexec.New(db, engine.SQLite),
		Now:       e.clock.Now,
	}
	for _, o := range opts {
		o(&cfg)
	}
	var err error
	e.svc, err = endpoint.New(cfg)
	require.NoError(t, err)
	for _, v := range testVariables {
		got, err := e.svc.CreateVariable(context.Background(), "1", v)
		require.NoError(t, err, "CreateVariable(%s)", v.Name)
		e.vars[got.CodeName] = got
	}
	return e
}

// memConfig is a Config over fresh in-memory stores and x.
func memConfig(x driver.Executor) endpoint.Config {
	return endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x}
}

// memService is a Service of memConfig(x), with set (when not nil) applied
// to the Config first.
func memService(t testing.TB, x driver.Executor, set func(*endpoint.Config)) *endpoint.Service {
	t.Helper()
	cfg := memConfig(x)
	if set != nil {
		set(&cfg)
	}
	svc, err := endpoint.New(cfg)
	require.NoError(t, err)
	return svc
}

// query returns a SQL query that refers to the named variables.
func (e *env) query(sql string, codeNames ...string) *endpoint.Query {
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: sql}
	for _, c := range codeNames {
		v, ok := e.vars[c]
		if !ok {
			panic("no test variable " + c)
		}
		if q.Variables == nil {
			q.Variables = map[string]endpoint.VariableRef{}
		}
		q.Variables[v.ID] = endpoint.VariableRef{VariableID: v.ID, CodeName: c}
	}
	return q
}

func (e *env) create(t testing.TB, name string, q *endpoint.Query) endpoint.Endpoint {
	t.Helper()
	ep, err := e.svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: name, Query: q})
	require.NoError(t, err, "Create(%s)", name)
	return ep
}

// wantError fails t unless err is an *Error with the status, code and
// detail (and attr, when not "-") given.
func wantError(t *testing.T, err error, status int, code, detail, attr string) {
	t.Helper()
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	if e.Status != status || e.Code != code || e.Detail != detail || (attr != "-" && e.Attr != attr) {
		t.Fatalf("got error {%d %s %q attr %q}, want {%d %s %q attr %q}", e.Status, e.Code, e.Detail, e.Attr, status, code, detail, attr)
	}
}

// countingStore counts the writes of last_executed_at.
type countingStore struct {
	driver.Store
	marks atomic.Int64
}

func (s *countingStore) MarkExecuted(ctx context.Context, project, id string, at time.Time) error {
	s.marks.Add(1)
	return s.Store.MarkExecuted(ctx, project, id, at)
}

// countingVars counts the look-ups of variables, to show that runs do not
// repeat the validation of saving.
type countingVars struct {
	variable.Store
	getMany atomic.Int64
}

func (s *countingVars) GetMany(ctx context.Context, project string, ids []string) (map[string]variable.Variable, error) {
	s.getMany.Add(1)
	return s.Store.GetMany(ctx, project, ids)
}

// recorder is an Observer that keeps what it is told: runs, refreshes
// and the checks of saves.
type recorder struct {
	mu         sync.Mutex
	runs       []endpoint.RunEvent
	refreshes  []endpoint.RefreshEvent
	saveChecks []endpoint.SaveCheckEvent
}

func (r *recorder) ObserveRun(_ context.Context, ev endpoint.RunEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, ev)
}

func (r *recorder) ObserveRefresh(_ context.Context, ev endpoint.RefreshEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refreshes = append(r.refreshes, ev)
}

func (r *recorder) ObserveSaveCheck(_ context.Context, ev endpoint.SaveCheckEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.saveChecks = append(r.saveChecks, ev)
}

// events returns a copy of the events of one kind, under r's lock.
func events[E any](r *recorder, of *[]E) []E {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]E(nil), *of...)
}

func (r *recorder) runEvents() []endpoint.RunEvent         { return events(r, &r.runs) }
func (r *recorder) refreshEvents() []endpoint.RefreshEvent { return events(r, &r.refreshes) }
func (r *recorder) saveCheckEvents() []endpoint.SaveCheckEvent {
	return events(r, &r.saveChecks)
}

// lastRun returns the last RunEvent; there is one.
func (r *recorder) lastRun(t *testing.T) endpoint.RunEvent {
	t.Helper()
	runs := r.runEvents()
	require.NotEmpty(t, runs)
	return runs[len(runs)-1]
}

// sqliteFile opens a SQLite file of its own in t's directory, on a pool
// of database/sql's default size (testdb.SQLitePool), closed when t ends.
func sqliteFile(t testing.TB) *sql.DB {
	t.Helper()
	return testdb.SQLitePool(t, "file:"+filepath.Join(t.TempDir(), "test.db"), 0)
}
