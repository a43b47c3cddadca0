package endpoint_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// checkEngine is an engine the save's check is tested on: how to open a
// database of it, and the variable that names its server ("" for SQLite).
type checkEngine struct {
	name string
	env  string
	eng  engine.Engine
	open func(testing.TB) *sql.DB
}

var checkEngines = []checkEngine{
	{"sqlite", "", engine.SQLite, func(t testing.TB) *sql.DB {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "check.db"))
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}},
	{"postgres", testdb.PostgresEnv, engine.PostgreSQL, testdb.Postgres},
	{"mariadb", testdb.MySQLEnv, engine.MySQL, testdb.MySQL},
}

// checkService is a Service on e's demo events table, whose policy lists
// events (scoped by project_id) and lets queries name any other table.
func checkService(t testing.TB, e checkEngine) *endpoint.Service {
	t.Helper()
	return checkServiceOn(t, e, func(x driver.Executor) driver.Executor { return x })
}

// checkServiceOn is checkService whose executor is wrap's of e's.
func checkServiceOn(t testing.TB, e checkEngine, wrap func(driver.Executor) driver.Executor, opts ...func(*endpoint.Config)) *endpoint.Service {
	t.Helper()
	if e.env != "" {
		testdb.Require(t, e.env)
	}
	db := e.open(t)
	ctx := context.Background()
	for _, s := range demo.SchemaFor(e.eng) {
		_, err := db.ExecContext(ctx, s)
		require.NoError(t, err, s)
	}
	require.NoError(t, demo.Insert(ctx, db, e.eng, "1", 20, 1))
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}, AnyTable: true}, nil)
	require.NoError(t, err)
	x := sqlexec.New(db, e.eng)
	t.Cleanup(func() { x.Close() })
	cfg := endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: wrap(x), Access: policy}
	for _, o := range opts {
		o(&cfg)
	}
	svc, err := endpoint.New(cfg)
	require.NoError(t, err)
	return svc
}

// badQueries are queries the engines refuse for their text, with what
// every engine's answer says: the words and the place.
var badQueries = []struct {
	name, sql string
	want      []string
	line, col int
}{
	{"unknown column", "SELECT evnt FROM events", []string{"evnt", "(line 1, column 8)", "did you mean event?"}, 1, 8},
	{"unknown column in GROUP BY", "SELECT count(*) AS n\nFROM events\nGROUP BY evnt", []string{"evnt", "(line 3, column 10)", "did you mean event?"}, 3, 10},
	{"unknown table", "SELECT event FROM evnts", []string{"evnts", "(line 1, column 19)", "There is no table evnts; did you mean events?"}, 1, 19},
	{"syntax error at the end", "SELECT event FROM events WHERE", []string{"yntax error", "line 1, column 31", "found the end of the query"}, 1, 31},
}

// TestQueryCheckedAtSave: on every engine, a query that reads an unknown
// column or table, or does not parse, is refused at Create, at Update and
// by the editor's query route, a 400 query_error that says what and where
// (the nearest names for a name), attr query.query; nothing is saved, and
// an update refused leaves the last version running. They were saved
// (201) and failed only when run.
func TestQueryCheckedAtSave(t *testing.T) {
	for _, e := range checkEngines {
		t.Run(e.name, func(t *testing.T) {
			svc := checkService(t, e)
			ctx := context.Background()
			good := &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT event FROM events ORDER BY event LIMIT 1"}
			_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "good", Query: good})
			require.NoError(t, err)
			for _, c := range badQueries {
				t.Run(c.name, func(t *testing.T) {
					bad := &endpoint.Query{Kind: endpoint.KindSQL, SQL: c.sql}
					_, created := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "bad", Query: bad})
					_, updated := svc.Update(ctx, "1", "good", endpoint.UpdateRequest{Query: bad})
					_, queried := svc.RunQuery(ctx, "1", endpoint.QueryRequest{Query: bad})
					for route, err := range map[string]error{"create": created, "update": updated, "query": queried} {
						var ee *endpoint.Error
						require.ErrorAs(t, err, &ee, route)
						t.Logf("%s: %s", route, ee.Detail)
						assert.Equal(t, 400, ee.Status, route)
						assert.Equal(t, endpoint.CodeQueryError, ee.Code, "%s: %s", route, ee.Detail)
						assert.Equal(t, "query.query", ee.Attr, route)
						assert.Equal(t, [2]int{c.line, c.col}, [2]int{ee.Line, ee.Column}, "%s: %s", route, ee.Detail)
						for _, w := range c.want {
							assert.Contains(t, ee.Detail, w, route)
						}
					}
					_, err := svc.Get(ctx, "1", "bad")
					assert.True(t, errors.Is(err, endpoint.ErrNotFound), "a refused query was saved: %v", err)
					got, err := svc.Get(ctx, "1", "good")
					require.NoError(t, err)
					assert.Equal(t, 1, got.CurrentVersion)
					res, err := svc.Run(ctx, "1", "good", endpoint.RunRequest{})
					require.NoError(t, err, "the last version stopped running")
					assert.Equal(t, []string{"event"}, res.Columns)
				})
			}
		})
	}
}

// TestRefusedTableListsTheReadable: a table the policy does not let the
// project read is refused naming it, where it is, that it does not exist
// or cannot be read, and the tables that can be; the nearest one when a
// name is near. It said that endpoints "may not read" it, behind a Go
// package's prefix.
func TestRefusedTableListsTheReadable(t *testing.T) {
	policy, err := access.NewStatic(access.Rules{Tables: []access.Table{{Name: "orders"}, {Name: "customers"}}}, nil)
	require.NoError(t, err)
	e := newEnv(t, func(c *endpoint.Config) { c.Access = policy })
	ctx := context.Background()
	for _, c := range []struct{ sql, detail string }{
		{"SELECT * FROM ordrs", "Table 'ordrs' at line 1, column 15 does not exist or cannot be read by this project's endpoints. Did you mean orders?"},
		{"SELECT *\nFROM secrets", "Table 'secrets' at line 2, column 6 does not exist or cannot be read by this project's endpoints. Tables that can be read: customers, orders."},
	} {
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "t", Query: e.query(c.sql)})
		var ee *endpoint.Error
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, endpoint.CodeQueryNotAllowed, ee.Code)
		assert.Equal(t, c.detail, ee.Detail)
		assert.Equal(t, "query.query", ee.Attr)
	}
}

// TestAnalyzerSyntaxError: a query the analyzer cannot read says syntax
// error and where, in the user's words. It answered "Query not allowed:
// access: unexpected FROM: the analyzer does not know this syntax (line
// 1, column 16)".
func TestAnalyzerSyntaxError(t *testing.T) {
	e := newEnv(t)
	_, err := e.svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "t", Query: e.query("SELECT count(* FROM orders")})
	var ee *endpoint.Error
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, endpoint.CodeQueryError, ee.Code)
	assert.Equal(t, "query.query", ee.Attr)
	assert.Contains(t, ee.Detail, "Syntax error at line 1, column 16: unexpected FROM")
	assert.Equal(t, [2]int{1, 16}, [2]int{ee.Line, ee.Column})
}

// TestValueFaultsAreNotRefusedAtSave: a query the engine fails on a value
// it folded at the check (PostgreSQL divides the constant 1 by 0 while it
// plans) is saved, as before the check; its runs answer the fault. A
// variable's value at the check divides by nothing: a Number is bound to
// 1, not 0. The save is not silent: its answer carries a warning that
// names the fault, and the Observer is told (logged and counted), on a
// create and on an update alike.
func TestValueFaultsAreNotRefusedAtSave(t *testing.T) {
	obs := &saveChecks{}
	svc := checkServiceOn(t, checkEngines[1], func(x driver.Executor) driver.Executor { return x },
		func(c *endpoint.Config) { c.Observer = obs })
	ctx := context.Background()
	created, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "zero", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 1/0 AS x FROM events"}})
	require.NoError(t, err)
	assert.Contains(t, created.CheckWarning, "division by zero")
	assert.Contains(t, created.CheckWarning, "it was saved")
	_, err = svc.Run(ctx, "1", "zero", endpoint.RunRequest{})
	var ee *endpoint.Error
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, endpoint.CodeQueryError, ee.Code)
	assert.Contains(t, ee.Detail, "division by zero")

	updated, err := svc.Update(ctx, "1", "zero", endpoint.UpdateRequest{Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 2/0 AS x FROM events"}})
	require.NoError(t, err)
	assert.Contains(t, updated.CheckWarning, "division by zero")
	checked, err := svc.Update(ctx, "1", "zero", endpoint.UpdateRequest{Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT 2 AS x FROM events"}})
	require.NoError(t, err)
	assert.Empty(t, checked.CheckWarning, "a query the engine checked carries no warning")

	events := obs.list()
	require.Len(t, events, 2, "one event per unchecked save")
	for _, ev := range events {
		assert.Equal(t, "1", ev.Project)
		assert.Equal(t, "zero", ev.Endpoint)
		assert.ErrorContains(t, ev.Err, "division by zero")
	}
}

// saveChecks is an Observer that records the SaveCheckEvents it is told.
type saveChecks struct {
	endpoint.SlogObserver
	mu     sync.Mutex
	events []endpoint.SaveCheckEvent
}

func (o *saveChecks) ObserveSaveCheck(_ context.Context, ev endpoint.SaveCheckEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, ev)
}

func (o *saveChecks) list() []endpoint.SaveCheckEvent {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]endpoint.SaveCheckEvent(nil), o.events...)
}
