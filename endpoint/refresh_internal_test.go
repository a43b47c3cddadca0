package endpoint

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/materialize"
	"github.com/endpointkit/endpointkit/sql/access"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/sql/scope"
	"github.com/endpointkit/endpointkit/variable"
)

// edgeStub is an executor of engine e that runs nothing.
func edgeStub(e engine.Engine) *heldexec.Fake {
	return heldexec.NewFake(nil, heldexec.OnEngine(e), heldexec.Fail(errors.New("edgeStub runs nothing"), nil))
}

// explainingStub is an edgeStub that is a driver.Explainer whose Explain
// answers explain's.
type explainingStub struct {
	*heldexec.Fake
	explain func() (*driver.Result, error)
}

func (x explainingStub) Explain(context.Context, driver.Statement) (*driver.Result, error) {
	return x.explain()
}

// edgeVerdict is the verdict of a date range query with a live tail on e,
// scoped to project 1's rows.
func edgeVerdict(t *testing.T, e engine.Engine) *verdict {
	t.Helper()
	a, err := materialize.Analyze("SELECT event, count(*) AS n FROM events WHERE timestamp >= {variables.from} AND timestamp < {variables.to} GROUP BY event",
		materialize.Options{Engine: e, Types: map[string]variable.Type{"from": variable.Date, "to": variable.Date}, TailColumn: "timestamp"})
	require.NoError(t, err)
	require.True(t, a.Materializable(), a.Reason())
	v := &verdict{ok: true, plan: a.Plan}
	v.scopeSource(scope.New(&access.Rules{Tables: []access.Table{{Name: "events", TenantColumn: "project_id"}}}, "1", e))
	require.True(t, v.ok, v.reason)
	return v
}

// TestCheckEdgesNotChecked: on ClickHouse, and with an executor that
// cannot explain, the check says the plans are not checked, and what
// index the edges need; one that fails to explain is check_failed.
func TestCheckEdgesNotChecked(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2025, 5, 31, 12, 0, 0, 0, time.UTC)
	s := &Service{cfg: Config{Executor: edgeStub(engine.ClickHouse)}}
	edge, note := s.checkEdges(ctx, edgeVerdict(t, engine.ClickHouse), at)
	assert.Equal(t, EdgeIndexNotChecked, edge)
	assert.Contains(t, note, "the query plans of ClickHouse are not checked")
	assert.Contains(t, note, "index on its time column")

	s = &Service{cfg: Config{Executor: edgeStub(engine.SQLite)}}
	edge, note = s.checkEdges(ctx, edgeVerdict(t, engine.SQLite), at)
	assert.Equal(t, EdgeIndexNotChecked, edge)
	assert.Contains(t, note, "the executor does not show the engine's query plans")

	s = &Service{cfg: Config{Executor: explainingStub{edgeStub(engine.PostgreSQL), func() (*driver.Result, error) {
		return nil, errors.New("connection refused")
	}}}}
	edge, note = s.checkEdges(ctx, edgeVerdict(t, engine.PostgreSQL), at)
	assert.Equal(t, EdgeIndexCheckFailed, edge)
	assert.Equal(t, `the engine's query plan of the partial buckets of "timestamp" could not be read`, note)
}

// TestPlanScan: the plans of PostgreSQL and MariaDB are read as each
// prints them: a Seq Scan, or an index read without a range (the tenant's
// rows by equality), is a scan; a range on an index (bitmap or not) is
// not; derived tables are the engine's own.
func TestPlanScan(t *testing.T) {
	pg := func(plan string) *driver.Result {
		return &driver.Result{Columns: []string{"QUERY PLAN"}, Rows: [][]any{{plan}}}
	}
	for _, c := range []struct {
		e    engine.Engine
		res  *driver.Result
		want string
	}{
		{engine.PostgreSQL, pg(`[{"Plan": {"Node Type": "Aggregate", "Plans": [{"Node Type": "Seq Scan", "Relation Name": "events"}]}}]`), "the table events whole"},
		{engine.PostgreSQL, pg(`[{"Plan": {"Node Type": "Index Scan", "Relation Name": "events", "Index Name": "events_pkey", "Index Cond": "(project_id = '1'::text)"}}]`),
			"the table events through an index without a range on the time (events_pkey)"},
		{engine.PostgreSQL, pg(`[{"Plan": {"Node Type": "Index Scan", "Relation Name": "events", "Index Name": "events_project_timestamp", "Index Cond": "((project_id = '1'::text) AND (\"timestamp\" >= '2025'::text))"}}]`), ""},
		{engine.PostgreSQL, pg(`[{"Plan": {"Node Type": "Bitmap Heap Scan", "Relation Name": "events", "Plans": [{"Node Type": "Bitmap Index Scan", "Index Cond": "(\"timestamp\" > '2025'::text)"}]}}]`), ""},
		{engine.PostgreSQL, pg(`[{"Plan": {"Node Type": "Bitmap Heap Scan", "Relation Name": "events", "Plans": [{"Node Type": "Bitmap Index Scan", "Index Cond": "(project_id = '1'::text)"}]}}]`),
			"the table events through an index without a range on the time"},
		{engine.MySQL, &driver.Result{Columns: []string{"id", "select_type", "table", "type", "key"}, Rows: [][]any{{1, "PRIMARY", []byte("<derived2>"), "ALL", nil}, {2, "DERIVED", "events", "range", "events_timestamp"}}}, ""},
		{engine.MySQL, &driver.Result{Columns: []string{"id", "select_type", "table", "type", "key"}, Rows: [][]any{{1, "SIMPLE", "events", "ALL", nil}}}, "the table events whole"},
		{engine.MySQL, &driver.Result{Columns: []string{"id", "select_type", "table", "type", "key"}, Rows: [][]any{{1, "SIMPLE", "events", "ref", "PRIMARY"}}},
			"the table events through an index without a range on the time (access ref)"},
	} {
		got, err := planScan(c.e, c.res)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%v", c.res.Rows)
	}
	_, err := planScan(engine.PostgreSQL, pg("not json"))
	assert.Error(t, err)
	_, err = planScan(engine.MySQL, &driver.Result{Columns: []string{"id"}, Rows: [][]any{{1}}})
	assert.Error(t, err)
}
