package endpoint_test

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
)

// edgeQuery reads a date range: its partial buckets and live tail read
// the source by the time column, on every engine.
const edgeQuery = `SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY event`

// edgeEngine is an engine the edge check runs on, with how to open an
// empty database of it and drop an index of the demo schema.
type edgeEngine struct {
	name, env string
	eng       engine.Engine
	open      func(testing.TB) *sql.DB
	drop      func(index string) string
	rows      int
}

var edgeEngines = []edgeEngine{
	{"sqlite", "", engine.SQLite, func(t testing.TB) *sql.DB {
		db, err := sql.Open("sqlite", ":memory:")
		require.NoError(t, err)
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}, func(ix string) string { return "DROP INDEX " + ix }, 3000},
	// Enough rows that the planners prefer an index to reading the table.
	{"postgres", testdb.PostgresEnv, engine.PostgreSQL, testdb.Postgres, func(ix string) string { return "DROP INDEX " + ix }, 20000},
	{"mariadb", testdb.MySQLEnv, engine.MySQL, testdb.MySQL, func(ix string) string { return "DROP INDEX " + ix + " ON events" }, 20000},
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
	cfg := endpoint.Config{
		Endpoints: memstore.New(), Variables: variable.NewMemoryStore(),
		Executor: sqlexec.New(db, e.eng), Now: func() time.Time { return now },
		Observer: obs,
	}
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

// refreshRecorder keeps the refresh events it observes.
type refreshRecorder struct {
	mu  sync.Mutex
	evs []endpoint.RefreshEvent
}

func (r *refreshRecorder) ObserveRun(context.Context, endpoint.RunEvent) {}

func (r *refreshRecorder) ObserveRefresh(_ context.Context, ev endpoint.RefreshEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

// TestEdgeIndexObserved: each refresh's event carries its check, for an
// Observer to count (endpoint/metrics does); runs do not check again.
func TestEdgeIndexObserved(t *testing.T) {
	ctx := context.Background()
	rec := &refreshRecorder{}
	svc := edgeService(t, edgeEngines[0], false, []string{"events_timestamp", "events_project_timestamp", "events_project_event_timestamp"}, rec)
	require.NoError(t, svc.Materialize(ctx, "1", "edges"))
	for range 3 {
		res, err := svc.Run(ctx, "1", "edges", endpoint.RunRequest{Variables: map[string]any{"from": "2025-05-02T09:30:00Z", "to": "2025-05-20T15:15:00Z"}})
		require.NoError(t, err)
		require.True(t, res.EndpointMaterialized)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var edges []endpoint.RefreshEvent
	for _, ev := range rec.evs {
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
