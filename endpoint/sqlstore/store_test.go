package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	epstoretest "github.com/endpointkit/endpointkit/endpoint/storetest"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	varstoretest "github.com/endpointkit/endpointkit/variable/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// suites are the conformance suites a Store passes, each run on the Stores
// open returns (one a check).
var suites = []struct {
	name string
	run  func(t *testing.T, open func(testing.TB) *Store)
}{
	{"variables", func(t *testing.T, open func(testing.TB) *Store) {
		varstoretest.Run(t, func(t *testing.T) variable.Store { return open(t).Variables() })
	}},
	{"endpoints", func(t *testing.T, open func(testing.TB) *Store) {
		epstoretest.Run(t, func(t *testing.T) driver.Store { return open(t).Endpoints() })
	}},
	{"result cache", func(t *testing.T, open func(testing.TB) *Store) {
		epstoretest.RunResultCache(t, func(t *testing.T) driver.ResultCache { return open(t).ResultCache(CacheOptions{}) })
	}},
	{"run log", func(t *testing.T, open func(testing.TB) *Store) {
		epstoretest.RunRunLog(t, func(t *testing.T, maxAge time.Duration, max int, now func() time.Time) driver.RunLog {
			return open(t).RunLog(RunLogOptions{MaxAge: maxAge, MaxPerEndpoint: max, Now: now})
		})
	}},
	{"keys", func(t *testing.T, open func(testing.TB) *Store) {
		epstoretest.RunKeyStore(t, func(t *testing.T) driver.KeyStore { return open(t).Keys() })
	}},
}

// TestConformance runs every suite on SQLite, in memory and in a file.
func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for _, s := range suites {
				t.Run(s.name, func(t *testing.T) { s.run(t, b.open) })
			}
		})
	}
}

// engines are the real servers the store's conformance suites run on, each
// named by an environment variable that scripts/engines env prints; an
// engine whose variable is unset is skipped, naming it.
var engines = []struct {
	name    string
	env     string
	dialect engine.Engine
	open    func(testing.TB) *sql.DB
}{
	{"postgres", testdb.PostgresEnv, engine.PostgreSQL, testdb.Postgres},
	{"mysql", testdb.MySQLEnv, engine.MySQL, testdb.MySQL},
}

// openEngine returns a migrated Store on a fresh database of the engine.
func openEngine(t testing.TB, d engine.Engine, open func(testing.TB) *sql.DB) *Store {
	t.Helper()
	s, err := New(open(t), d)
	require.NoError(t, err)
	require.NoError(t, s.Migrate(context.Background()), "Migrate on %s", d.Name())
	return s
}

// TestEngineConformance runs every suite on PostgreSQL and MySQL (MariaDB
// in CI), each check on a database of its own. The engines and the suites
// run in parallel (their databases are apart), with the package's other
// parallel tests: on MariaDB the suites mostly wait for its DDL, each
// check's CREATE DATABASE and migrations.
func TestEngineConformance(t *testing.T) {
	t.Parallel()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			testdb.Require(t, e.env)
			open := func(t testing.TB) *Store { return openEngine(t, e.dialect, e.open) }
			for _, s := range suites {
				t.Run(s.name, func(t *testing.T) {
					t.Parallel()
					s.run(t, open)
				})
			}
		})
	}
}

// snapshot is everything a store holds for some projects.
type snapshot struct {
	variables map[string][]variable.Variable
	endpoints map[string][]driver.Endpoint
	versions  map[string][]driver.Version // by endpoint id
}

func takeSnapshot(t *testing.T, s *Store, projects ...string) snapshot {
	t.Helper()
	ctx := context.Background()
	snap := snapshot{map[string][]variable.Variable{}, map[string][]driver.Endpoint{}, map[string][]driver.Version{}}
	for _, p := range projects {
		vars, err := s.Variables().List(ctx, p)
		require.NoError(t, err)
		snap.variables[p] = vars
		eps, err := s.Endpoints().List(ctx, p)
		require.NoError(t, err)
		snap.endpoints[p] = eps
		for _, e := range eps {
			vs, err := s.Endpoints().Versions(ctx, p, e.ID)
			require.NoError(t, err)
			snap.versions[p+"/"+e.ID] = vs
		}
	}
	return snap
}

func TestRestartLosesNothing(t *testing.T) {
	ctx := context.Background()
	path := tempFile(t)
	s, db := openFile(t, path)

	// Variables of every shape of default value.
	defaults := map[string]any{
		"s": "text", "n": int64(7), "f": 2.5, "b": true, "d": "-7d", "l": []string{"a", "b"}, "none": nil,
	}
	for code, def := range defaults {
		v := variableFixture(code)
		v.DefaultValue = def
		require.NoError(t, s.Variables().Create(ctx, "1", v))
	}
	other := variableFixture("s")
	require.NoError(t, s.Variables().Create(ctx, "2", other))

	// Endpoints with several versions, a SQL one and an insight one.
	sqlE, first := endpointFixture("1", "sql_endpoint")
	require.NoError(t, s.Endpoints().Create(ctx, sqlE, first))
	for i, q := range []string{"SELECT 2", "SELECT 3 WHERE a = {variables.event}"} {
		next, v := nextVersion(sqlE, q)
		require.NoError(t, s.Endpoints().Update(ctx, next, v), "version %d", i+2)
		sqlE = next
	}
	require.NoError(t, s.Endpoints().MarkExecuted(ctx, "1", sqlE.ID, t0.Add(48*time.Hour)))
	ins, insFirst := endpointFixture("2", "trend")
	ins.Query = driver.Query{Kind: driver.KindTrends, Insight: []byte(`{"kind":"TrendsQuery","series":[]}`)}
	insFirst.Query = ins.Query
	ins.LastExecutedAt = nil
	require.NoError(t, s.Endpoints().Create(ctx, ins, insFirst))

	before := takeSnapshot(t, s, "1", "2")
	if v := before.variables["1"]; len(v) != len(defaults) {
		t.Fatalf("len = %d, want %d: %v", len(v), len(defaults), v)
	}
	if v := before.versions["1/"+sqlE.ID]; len(v) != 3 {
		t.Fatalf("len = %d, want %d: %v", len(v), 3, v)
	}
	require.NoError(t, db.Close())

	reopened, _ := openFile(t, path)
	after := takeSnapshot(t, reopened, "1", "2")
	assert.Equal(t, before, after)
	for _, v := range after.variables["1"] {
		got, want := v.DefaultValue, defaults[v.CodeName]
		assert.Equal(t, want, got, "default of %s keeps its Go type: v.DefaultValue", v.CodeName)
	}
	got, err := reopened.Endpoints().Get(ctx, "1", "sql_endpoint")
	require.NoError(t, err)
	if got, want := *got.LastExecutedAt, t0.Add(48*time.Hour); !reflect.DeepEqual(got, want) {
		t.Errorf("*got.LastExecutedAt = %+v, want %+v", got, want)
	}
	assert.Equal(t, 3, got.CurrentVersion)

	// The reopened store goes on from where the first one stopped.
	next, v := nextVersion(got, "SELECT 4")
	require.NoError(t, reopened.Endpoints().Update(ctx, next, v))
	stale, staleV := nextVersion(sqlE, "SELECT stale")
	assert.ErrorIs(t, reopened.Endpoints().Update(ctx, stale, staleV), driver.ErrConflict)
}

// outcomes counts what concurrent calls returned.
type outcomes struct {
	mu                      sync.Mutex
	ok, conflicts, failures int
	errs                    []error
}

func (o *outcomes) add(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err == nil:
		o.ok++
	case errors.Is(err, driver.ErrConflict):
		o.conflicts++
	default:
		o.failures++
		o.errs = append(o.errs, err)
	}
}

func TestEndpointsConcurrently(t *testing.T) {
	const workers = 8
	forEachBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		st := s.Endpoints()

		// Racing creates of one name: one wins, the others conflict.
		var creates outcomes
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, v := endpointFixture("p", fmt.Sprintf("contender%d", w))
				e.Name = "contested"
				creates.add(st.Create(ctx, e, v))
			}()
		}
		wg.Wait()
		v := creates.errs
		assert.True(t, (len(v) == 0), "creates.errs = %v, want it empty", v)
		assert.Equal(t, 1, creates.ok)
		if got, want := creates.conflicts, workers-1; got != want {
			t.Errorf("creates.conflicts = %v, want %v", got, want)
		}

		// Racing updates from the same read: one new version wins.
		base, err := st.Get(ctx, "p", "contested")
		require.NoError(t, err)
		var updates outcomes
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, v := nextVersion(base, fmt.Sprintf("SELECT %d", w))
				updates.add(st.Update(ctx, e, v))
			}()
		}
		wg.Wait()
		if v := updates.errs; !(len(v) == 0) {
			t.Errorf("updates.errs = %v, want it empty", v)
		}
		assert.Equal(t, 1, updates.ok)
		if got, want := updates.conflicts, workers-1; got != want {
			t.Errorf("updates.conflicts = %v, want %v", got, want)
		}
		vs, err := st.Versions(ctx, "p", base.ID)
		require.NoError(t, err)
		assert.Len(t, vs, 2)

		// Runs recorded while the endpoint is read and edited: none fails,
		// and the latest run time stays.
		var mixed outcomes
		latest := t0.Add(time.Duration(workers*10) * time.Second)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 10; i++ {
					at := t0.Add(time.Duration(w*10+i+1) * time.Second)
					mixed.add(st.MarkExecuted(ctx, "p", base.ID, at))
					_, err := st.Get(ctx, "p", "contested")
					mixed.add(err)
					_, err = st.List(ctx, "p")
					mixed.add(err)
				}
			}()
		}
		wg.Wait()
		if v := mixed.errs; !(len(v) == 0) {
			t.Errorf("mixed.errs = %v, want it empty", v)
		}
		got, err := st.Get(ctx, "p", "contested")
		require.NoError(t, err)
		if got, want := *got.LastExecutedAt, latest; !reflect.DeepEqual(got, want) {
			t.Errorf("*got.LastExecutedAt = %+v, want %+v", got, want)
		}
	})
}
