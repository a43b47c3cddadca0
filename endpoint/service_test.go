package endpoint_test

import (
	"context"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/endpoint/sqlstore"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const badName = "Must start with a letter, contain only alphanumeric characters, hyphens, or underscores, and be between 1 and 128 characters long."

func TestNewConfig(t *testing.T) {
	e := newEnv(t)
	full := memConfig(answering(&driver.Result{}))
	for _, tc := range []struct {
		name string
		edit func(*endpoint.Config)
		want string
	}{
		{"no endpoints", func(c *endpoint.Config) { c.Endpoints = nil }, "Config.Endpoints is nil"},
		{"no variables", func(c *endpoint.Config) { c.Variables = nil }, "Config.Variables is nil"},
		{"no executor", func(c *endpoint.Config) { c.Executor = nil }, "Config.Executor is nil"},
		{"negative limit", func(c *endpoint.Config) { c.DefaultLimit = -1 }, "must not be negative"},
		{"default above max", func(c *endpoint.Config) { c.DefaultLimit, c.MaxLimit = 10, 5 }, "exceeds MaxLimit"},
		{"complete", func(*endpoint.Config) {}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := full
			tc.edit(&cfg)
			_, err := endpoint.New(cfg)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("New: %v, want %q", err, tc.want)
			}
		})
	}
	_ = e
}

func TestCreateChecks(t *testing.T) {
	e := newEnv(t)
	e.create(t, "taken", e.query("SELECT 1"))
	country := e.vars["country"].ID
	other, err := e.svc.CreateVariable(context.Background(), "2", variable.Variable{Name: "elsewhere", Type: variable.String})
	require.NoError(t, err)
	const missing1, missing2 = "00000000-0000-4000-8000-000000000002", "00000000-0000-4000-8000-000000000001"
	ref := func(pairs ...string) map[string]endpoint.VariableRef {
		m := map[string]endpoint.VariableRef{}
		for i := 0; i < len(pairs); i += 2 {
			m[pairs[i]] = endpoint.VariableRef{VariableID: pairs[i], CodeName: pairs[i+1]}
		}
		return m
	}
	sqlq := func(text string, vars map[string]endpoint.VariableRef) *endpoint.Query {
		return &endpoint.Query{Kind: endpoint.KindSQL, SQL: text, Variables: vars}
	}
	for _, tc := range []struct {
		name           string
		req            endpoint.CreateRequest
		status         int
		code, detail   string
		attr           string
		detailIsPrefix bool
	}{
		{"missing name", endpoint.CreateRequest{Query: e.query("SELECT 1")},
			400, "invalid_input", "This field is required.", "name", false},
		{"name starts with digit", endpoint.CreateRequest{Name: "1abc", Query: e.query("SELECT 1")},
			400, "invalid_input", "Invalid name '1abc'. " + badName, "name", false},
		{"name with space", endpoint.CreateRequest{Name: "a b", Query: e.query("SELECT 1")},
			400, "invalid_input", "Invalid name 'a b'. " + badName, "name", false},
		{"name with dot", endpoint.CreateRequest{Name: "a.b", Query: e.query("SELECT 1")},
			400, "invalid_input", "Invalid name 'a.b'. " + badName, "name", false},
		{"name of 129", endpoint.CreateRequest{Name: "a" + strings.Repeat("b", 128), Query: e.query("SELECT 1")},
			400, "invalid_input", "Invalid name 'a" + strings.Repeat("b", 128) + "'. " + badName, "name", false},
		{"name taken", endpoint.CreateRequest{Name: "taken", Query: e.query("SELECT 2")},
			409, "conflict", "An endpoint with this name already exists for this project.", "name", false},
		{"missing query", endpoint.CreateRequest{Name: "q"},
			400, "invalid_input", "This field is required.", "query", false},
		{"empty query text", endpoint.CreateRequest{Name: "q", Query: sqlq("  \n ", nil)},
			400, "invalid_input", "This field is required.", "query.query", false},
		{"missing kind", endpoint.CreateRequest{Name: "q", Query: &endpoint.Query{SQL: "SELECT 1"}},
			400, "invalid_input", "This field is required.", "query.kind", false},
		{"unknown kind", endpoint.CreateRequest{Name: "q", Query: &endpoint.Query{Kind: "FunnelsQuery"}},
			400, "unsupported_query", "Unsupported query kind 'FunnelsQuery'. Supported kinds: HogQLQuery, TrendsQuery, RetentionQuery, LifecycleQuery.", "query", false},
		{"ids not UUIDs, sorted", endpoint.CreateRequest{Name: "q", Query: sqlq("SELECT 1", ref("zzz", "a", "abc", "b", country, "country"))},
			400, "invalid_variable_id", "Variable ID(s) not valid UUIDs: abc, zzz", "query.variables", false},
		{"variableId not a UUID", endpoint.CreateRequest{Name: "q", Query: sqlq("SELECT 1", map[string]endpoint.VariableRef{country: {VariableID: "nope"}})},
			400, "invalid_variable_id", "Variable ID(s) not valid UUIDs: nope", "query.variables", false},
		{"key and variableId differ", endpoint.CreateRequest{Name: "q", Query: sqlq("SELECT 1", map[string]endpoint.VariableRef{country: {VariableID: missing1}})},
			400, "invalid_variable_id", "Variable key " + country + " does not match its variableId " + missing1 + ".", "query.variables", false},
		{"ids not found, sorted", endpoint.CreateRequest{Name: "q", Query: sqlq("SELECT 1", ref(missing1, "a", missing2, "b", country, "country"))},
			400, "variable_not_found", "Variable ID(s) not found: " + missing2 + ", " + missing1 + ". A variable must first be created in data management.", "query.variables", false},
		{"variable of another project", endpoint.CreateRequest{Name: "q", Query: sqlq("SELECT {variables.elsewhere}", ref(other.ID, "elsewhere"))},
			400, "variable_not_found", "Variable ID(s) not found: " + other.ID + ". A variable must first be created in data management.", "query.variables", false},
		{"code_name differs from the variable's", endpoint.CreateRequest{Name: "q", Query: sqlq("SELECT {variables.land}", ref(country, "land"))},
			400, "invalid_input", "Variable " + country + " has code_name 'country', not 'land'.", "query.variables", false},
		{"undefined, sorted, once each", endpoint.CreateRequest{Name: "q", Query: sqlq("SELECT {variables.b}, {variables.a}, {variables.b}, {variables.country}", ref(country, "country"))},
			400, "undefined_variable", "Query references undefined variable(s): a, b", "query", false},
		{"undefined without any variables", endpoint.CreateRequest{Name: "q", Query: sqlq("SELECT * FROM orders WHERE country = {variables.country}", nil)},
			400, "undefined_variable", "Query references undefined variable(s): country", "query", false},
		{"placeholder syntax", endpoint.CreateRequest{Name: "q", Query: sqlq("SELECT 1\nWHERE x = {variables.}", nil)},
			400, "invalid_input", `Invalid query at line 2, column 22: missing code name after "variables."`, "query", false},
		{"two statements", endpoint.CreateRequest{Name: "q", Query: sqlq("SELECT 1 -- a; b\n; DROP TABLE orders", nil)},
			400, "invalid_input", "Invalid query at line 2, column 1: an endpoint runs a single statement; remove the ';' and what follows it.", "query", false},
		{"unterminated quote", endpoint.CreateRequest{Name: "q", Query: sqlq("SELECT 'abc", nil)},
			400, "invalid_input", "Invalid query at line 1, column 8: ", "query", true},
		{"multi list outside IN", endpoint.CreateRequest{Name: "q", Query: e.query("SELECT * FROM orders WHERE plan = {variables.plans}", "plans")},
			400, "invalid_input", "Variable 'plans' at line 1, column 35: list value outside IN", "query", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.eps.Store.(*memstore.Store)
			listBefore, _ := before.List(context.Background(), "1")
			_, err := e.svc.Create(context.Background(), "1", tc.req)
			var got *endpoint.Error
			require.ErrorAs(t, err, &got, "Create")
			detailOK := got.Detail == tc.detail || tc.detailIsPrefix && strings.HasPrefix(got.Detail, tc.detail)
			if got.Status != tc.status || got.Code != tc.code || !detailOK || got.Attr != tc.attr {
				t.Fatalf("Create: {%d %s %q attr %q}, want {%d %s %q attr %q}", got.Status, got.Code, got.Detail, got.Attr, tc.status, tc.code, tc.detail, tc.attr)
			}
			sentinel := map[int]error{400: endpoint.ErrInvalid, 409: endpoint.ErrConflict}[tc.status]
			require.ErrorIs(t, err, sentinel, "errors.Is")
			listAfter, _ := before.List(context.Background(), "1")
			require.Len(t, listAfter, len(listBefore), "a refused Create stored an endpoint")
		})
	}
}

func TestCreate(t *testing.T) {
	e := newEnv(t)
	country := e.vars["country"]
	upper := strings.ToUpper(country.ID)
	// An upper-case id, and a reference without variableId or code_name,
	// are stored in canonical, complete form.
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT * FROM orders WHERE country = {variables.country}",
		Variables: map[string]endpoint.VariableRef{upper: {}}}
	inactive := false
	ep, err := e.svc.Create(context.Background(), "1", endpoint.CreateRequest{
		Name: "Orders-by_country", Description: "orders", Query: q, IsActive: &inactive,
	})
	require.NoError(t, err)
	want := map[string]endpoint.VariableRef{country.ID: {VariableID: country.ID, CodeName: "country"}}
	require.Equal(t, want, ep.Query.Variables, "stored variables")
	if ep.ID == "" || ep.CurrentVersion != 1 || ep.VersionsCount != 1 || ep.IsActive ||
		!ep.CreatedAt.Equal(e.clock.Now()) || !ep.UpdatedAt.Equal(e.clock.Now()) || ep.LastExecutedAt != nil {
		t.Fatalf("created endpoint = %+v", ep)
	}
	got, err := e.svc.Get(context.Background(), "1", "Orders-by_country")
	if err != nil || got.ID != ep.ID || !reflect.DeepEqual(got.Query, ep.Query) {
		t.Fatalf("Get = %+v, %v; want %+v", got, err, ep)
	}
	versions, err := e.svc.Versions(context.Background(), "1", ep.Name)
	if err != nil || len(versions) != 1 || versions[0].Version != 1 || !reflect.DeepEqual(versions[0].Query, ep.Query) {
		t.Fatalf("Versions = %+v, %v", versions, err)
	}
	// A name of 128 characters is allowed; the same name in another
	// project is another endpoint.
	e.create(t, "a"+strings.Repeat("b", 127), e.query("SELECT 1"))
	if _, err := e.svc.Create(context.Background(), "2", endpoint.CreateRequest{Name: "Orders-by_country", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1"}}); err != nil {
		t.Fatalf("same name in another project: %v", err)
	}
}

func TestGetListDelete(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, n := range []string{"b", "a", "c"} {
		e.create(t, n, e.query("SELECT 1"))
	}
	list, err := e.svc.List(ctx, "1")
	require.NoError(t, err)
	var names []string
	for _, ep := range list {
		names = append(names, ep.Name)
	}
	require.Equal(t, []string{"a", "b", "c"}, names, "List names")
	if empty, err := e.svc.List(ctx, "9"); err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("List of an empty project = %#v, %v; want an empty, non-nil slice", empty, err)
	}
	_, err = e.svc.Get(ctx, "2", "a")
	wantError(t, err, http.StatusNotFound, "not_found", "Endpoint 'a' not found.", "")
	wantError(t, e.svc.Delete(ctx, "2", "a"), http.StatusNotFound, "not_found", "Endpoint 'a' not found.", "")
	require.NoError(t, e.svc.Delete(ctx, "1", "a"))
	_, err = e.svc.Get(ctx, "1", "a")
	wantError(t, err, http.StatusNotFound, "not_found", "Endpoint 'a' not found.", "")
	_, err = e.svc.Run(ctx, "1", "a", endpoint.RunRequest{})
	wantError(t, err, http.StatusNotFound, "not_found", "Endpoint 'a' not found.", "")
	wantError(t, e.svc.Delete(ctx, "1", "a"), http.StatusNotFound, "not_found", "Endpoint 'a' not found.", "")
	_, err = e.svc.Versions(ctx, "1", "a")
	wantError(t, err, http.StatusNotFound, "not_found", "Endpoint 'a' not found.", "")
}

func TestUpdate(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	v1 := e.query("SELECT id FROM orders WHERE country = {variables.country} ORDER BY id", "country")
	ep := e.create(t, "orders", v1)
	str := func(s string) *string { return &s }
	no := false

	// Fields other than the query make no version.
	e.clock.Advance(1000)
	got, err := e.svc.Update(ctx, "1", "orders", endpoint.UpdateRequest{Description: str("changed"), IsActive: &no})
	require.NoError(t, err)
	if got.CurrentVersion != 1 || got.VersionsCount != 1 || got.Description != "changed" || got.IsActive ||
		!got.UpdatedAt.Equal(e.clock.Now()) || !got.CreatedAt.Equal(ep.CreatedAt) {
		t.Fatalf("after description change: %+v", got)
	}

	// The same query again, even spelt with an upper-case id, is no change.
	same := e.query(v1.SQL, "country")
	for id, ref := range same.Variables {
		delete(same.Variables, id)
		same.Variables[strings.ToUpper(id)] = ref
	}
	got, err = e.svc.Update(ctx, "1", "orders", endpoint.UpdateRequest{Query: same})
	require.NoError(t, err, "same query: version %d, %v; want 1", got.CurrentVersion, err)
	require.Equal(t, 1, got.CurrentVersion, "same query: version %d, %v; want 1", got.CurrentVersion, err)

	// A changed query makes version 2, then 3.
	for want := 2; want <= 3; want++ {
		q := e.query(v1.SQL+strings.Repeat(" ", want), "country")
		got, err = e.svc.Update(ctx, "1", "orders", endpoint.UpdateRequest{Query: q})
		if err != nil || got.CurrentVersion != want || got.VersionsCount != want || got.Query.SQL != q.SQL {
			t.Fatalf("query change: %+v, %v; want version %d", got, err, want)
		}
	}
	versions, err := e.svc.Versions(ctx, "1", "orders")
	if err != nil || len(versions) != 3 || versions[0].Query.SQL != v1.SQL {
		t.Fatalf("Versions = %+v, %v", versions, err)
	}

	// A rename.
	got, err = e.svc.Update(ctx, "1", "orders", endpoint.UpdateRequest{Name: str("orders_v2")})
	if err != nil || got.Name != "orders_v2" || got.CurrentVersion != 3 {
		t.Fatalf("rename: %+v, %v", got, err)
	}
	_, err = e.svc.Get(ctx, "1", "orders")
	wantError(t, err, 404, "not_found", "Endpoint 'orders' not found.", "")
	_, err = e.svc.Update(ctx, "1", "orders", endpoint.UpdateRequest{Description: str("x")})
	wantError(t, err, 404, "not_found", "Endpoint 'orders' not found.", "")
}

// TestUpdateFailsWhole: an update that fails any check changes nothing,
// not even the fields that were valid.
func TestUpdateFailsWhole(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.create(t, "other", e.query("SELECT 1"))
	str := func(s string) *string { return &s }
	good := e.query("SELECT 2")
	for _, tc := range []struct {
		name   string
		req    endpoint.UpdateRequest
		status int
		code   string
		detail string
	}{
		{"bad name", endpoint.UpdateRequest{Name: str("9lives"), Description: str("new"), Query: good},
			400, "invalid_input", "Invalid name '9lives'. " + badName},
		{"empty name", endpoint.UpdateRequest{Name: str(""), Description: str("new")},
			400, "invalid_input", "This field is required."},
		{"name taken", endpoint.UpdateRequest{Name: str("other"), Description: str("new"), Query: good},
			409, "conflict", "An endpoint with this name already exists for this project."},
		{"undefined variable", endpoint.UpdateRequest{Description: str("new"), Query: e.query("SELECT {variables.nope}")},
			400, "undefined_variable", "Query references undefined variable(s): nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.create(t, "target", e.query("SELECT 1"))
			defer e.svc.Delete(ctx, "1", "target")
			_, err := e.svc.Update(ctx, "1", "target", tc.req)
			wantError(t, err, tc.status, tc.code, tc.detail, "-")
			after, err := e.svc.Get(ctx, "1", "target")
			require.NoError(t, err, "after a refused update: %+v, %v; want %+v", after, err, before)
			require.Equal(t, before, after, "after a refused update: %+v, %v; want %+v", after, err, before)
			vs, _ := e.svc.Versions(ctx, "1", "target")
			require.Len(t, vs, 1, "a refused update left")
		})
	}
}

// TestConcurrentUpdates: concurrent query changes through one Service each
// make a version; none is lost and numbers stay dense.
func TestConcurrentUpdates(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.create(t, "busy", e.query("SELECT 0"))
	const n = 8
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := e.query("SELECT " + strings.Repeat("1+", i) + "0")
			_, err := e.svc.Update(ctx, "1", "busy", endpoint.UpdateRequest{Query: q})
			assert.NoError(t, err)
			if _, err := e.svc.Run(ctx, "1", "busy", endpoint.RunRequest{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	vs, err := e.svc.Versions(ctx, "1", "busy")
	require.NoError(t, err, "Versions = %d, %v; want %d", len(vs), err, n+1)
	require.Len(t, vs, n+1, "Versions = %d, %v; want %d", len(vs), err, n+1)
	for i, v := range vs {
		require.Equal(t, i+1, v.Version, "version")
	}
}

// TestDefaultClock: without Config.Now, times are UTC to the microsecond,
// as SQL stores keep them.
func TestDefaultClock(t *testing.T) {
	svc := memService(t, answering(&driver.Result{}), nil)
	before := time.Now().Add(-time.Second)
	ep, err := svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "ep", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1"}})
	require.NoError(t, err)
	if ep.CreatedAt.Location() != time.UTC || ep.CreatedAt.Nanosecond()%1000 != 0 || ep.CreatedAt.Before(before) {
		t.Fatalf("CreatedAt = %v", ep.CreatedAt)
	}
}

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
		db := testdb.SQLitePool(t, dsn, 0)
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
	clk := endpointtest.NewClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
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
