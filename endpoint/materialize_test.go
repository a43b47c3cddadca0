package endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dailyPurchases is "daily purchases and revenue for a country between two
// dates" over the demo events; country and amount are columns of a derived
// table, since only columns can be materialized.
const dailyPurchases = `SELECT date(timestamp) AS day, count(*) AS purchases, sum(amount) AS revenue
FROM (SELECT timestamp, json_extract(properties, '$.country') AS country, json_extract(properties, '$.amount') AS amount
      FROM events WHERE event = 'purchase') AS p
WHERE country = {variables.country} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY day ORDER BY day`

// matExec wraps the env's executor: it can fail the refreshes' writes, and
// it records how many refreshes of SQL endpoints overlap.
type matExec struct {
	driver.Executor
	fail               atomic.Bool
	inflight, overlaps atomic.Int32
}

func (x *matExec) Exec(ctx context.Context, stmts []driver.Statement, tx driver.Write) error {
	return execEach(ctx, x.Executor, stmts, tx.Tx, x.exec)
}

// exec fails or counts the statement q, which run runs.
func (x *matExec) exec(q string, run func() error) error {
	if strings.HasPrefix(q, "DROP TABLE IF EXISTS") && strings.HasSuffix(q, `_next"`) {
		if x.inflight.Add(1) > 1 {
			x.overlaps.Add(1)
		}
		time.Sleep(time.Millisecond) // widen the window a second refresh would need
	}
	if strings.HasPrefix(q, "ALTER TABLE") {
		defer x.inflight.Add(-1)
	}
	if x.fail.Load() && strings.HasPrefix(q, "CREATE TABLE") {
		if strings.HasSuffix(strings.SplitN(q, " ", 4)[2], `_next"`) {
			x.inflight.Add(-1)
		}
		return errors.New("sqlite: disk I/O error at /var/secret/path")
	}
	return run()
}

// newMatEnv is newEnv with demo events and the wrapped executor.
func newMatEnv(t testing.TB, events int) (*env, *matExec) {
	t.Helper()
	x := &matExec{}
	e := newEnv(t, func(c *endpoint.Config) {})
	require.NoError(t, demo.Load(context.Background(), e.db, events, 7))
	x.Executor = execOf(e)
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: x, Now: e.clock.Now})
	require.NoError(t, err)
	e.svc = svc
	return e, x
}

func (e *env) createMat(t testing.TB, name string, q *endpoint.Query, req endpoint.CreateRequest) endpoint.Endpoint {
	t.Helper()
	req.Name, req.Query, req.IsMaterialized = name, q, true
	ep, err := e.svc.Create(context.Background(), "1", req)
	require.NoError(t, err, "Create(%s)", name)
	return ep
}

func (e *env) get(t testing.TB, name string) endpoint.Endpoint {
	t.Helper()
	ep, err := e.svc.Get(context.Background(), "1", name)
	require.NoError(t, err, "Get(%s)", name)
	return ep
}

func (e *env) materialize(t testing.TB, name string) {
	t.Helper()
	require.NoError(t, e.svc.Materialize(context.Background(), "1", name), "Materialize(%s)", name)
}

func (e *env) mustRun(t testing.TB, name string, vars map[string]any) *endpoint.RunResult {
	t.Helper()
	res, err := e.svc.Run(context.Background(), "1", name, endpoint.RunRequest{Variables: vars})
	require.NoError(t, err, "Run(%s, %v)", name, vars)
	return res
}

// tables lists the stored tables of materialized endpoints in the database.
func (e *env) tables(t testing.TB) []string {
	t.Helper()
	rows, err := e.db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'endpointkit_mat_%' ORDER BY name`)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		out = append(out, n)
	}
	return out
}

func runVars(country, from, to string) map[string]any {
	return map[string]any{"country": country, "from": from, "to": to}
}

// TestMaterializationRefusedChangesNothing: a query that cannot be
// materialized is refused with its reason on create and on update, and the
// refusal changes nothing.
func TestMaterializationRefusedChangesNothing(t *testing.T) {
	e, _ := newMatEnv(t, 100)
	ctx := context.Background()
	like := e.query(`SELECT count(*) FROM orders WHERE country LIKE {variables.country}`, "country")
	_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "m", Query: like, IsMaterialized: true})
	wantError(t, err, 400, endpoint.CodeCannotMaterialize,
		"Cannot materialize endpoint. Reason: variable 'country' is used with the operator LIKE; only =, >=, >, <, <= and IN can be materialized", "is_materialized")
	if _, err := e.svc.Get(ctx, "1", "m"); asError(t, err).Status != 404 {
		t.Fatalf("a refused create stored the endpoint: %v", err)
	}

	before := e.create(t, "sql", e.query(`SELECT count(*) FROM orders WHERE country = {variables.country}`, "country"))
	require.True(t, before.Materialization.CanMaterialize, "materialization of a plain endpoint = %+v", before.Materialization)
	require.Equal(t, endpoint.MaterializationStatus(""), before.Materialization.Status, "materialization of a plain endpoint = %+v", before.Materialization)
	yes, desc := true, "new"
	_, err = e.svc.Update(ctx, "1", "sql", endpoint.UpdateRequest{Description: &desc, Query: like, IsMaterialized: &yes})
	require.Equal(t, endpoint.CodeCannotMaterialize, asError(t, err).Code, "update to a LIKE query: %v", err)
	require.Equal(t, before, e.get(t, "sql"), "a refused update changed the endpoint")
	e.create(t, "like", like)
	_, err = e.svc.Update(ctx, "1", "like", endpoint.UpdateRequest{IsMaterialized: &yes})
	require.Equal(t, endpoint.CodeCannotMaterialize, asError(t, err).Code, "materializing a LIKE query: %v", err)
	m := e.get(t, "like").Materialization
	if m.CanMaterialize || !strings.Contains(m.Reason, "LIKE") || m.Status != "" {
		t.Fatalf("materialization of a LIKE endpoint = %+v", m)
	}
	if err := e.svc.Materialize(ctx, "1", "like"); asError(t, err).Status != 400 {
		t.Fatalf("Materialize of an endpoint that is not materialized: %v", err)
	}
}

// TestMaterializationSettings: bucket overrides and optional breakdowns are
// checked against the query; a changed bucket needs a refresh before the
// table serves again, and the hour bucket serves hour boundaries.
func TestMaterializationSettings(t *testing.T) {
	e, _ := newMatEnv(t, 3000)
	ctx := context.Background()
	q := e.query(dailyPurchases, "country", "from", "to")
	for _, tc := range []struct {
		req    endpoint.CreateRequest
		attr   string
		detail string
	}{
		{endpoint.CreateRequest{MaterializationBuckets: map[string]engine.Bucket{"country": engine.Hour}}, "materialization_buckets",
			"materialization_buckets: 'country' is not a Date variable of this query."},
		{endpoint.CreateRequest{MaterializationBuckets: map[string]engine.Bucket{"from": "year"}}, "materialization_buckets",
			"materialization_buckets: invalid bucket 'year' for 'from'. Expected one of: minute, hour, day, week, month."},
		{endpoint.CreateRequest{OptionalBreakdowns: []string{"country"}}, "optional_breakdown_properties",
			"optional_breakdown_properties apply to insight endpoints only."},
	} {
		tc.req.Name, tc.req.Query, tc.req.IsMaterialized = "bad", q, true
		_, err := e.svc.Create(ctx, "1", tc.req)
		wantError(t, err, 400, endpoint.CodeInvalidInput, tc.detail, tc.attr)
	}

	e.create(t, "inline", q)
	hourly := map[string]engine.Bucket{"from": engine.Hour, "to": engine.Hour}
	e.createMat(t, "hourly", q, endpoint.CreateRequest{MaterializationBuckets: hourly})
	e.materialize(t, "hourly")
	vars := runVars("US", "2025-05-01T06:00:00Z", "2025-05-09T18:00:00Z")
	got, want := e.mustRun(t, "hourly", vars), e.mustRun(t, "inline", vars)
	require.True(t, got.EndpointMaterialized, "hour bucket: %v %v, want %v", got.EndpointMaterialized, got.Results, want.Results)
	require.Equal(t, want.Results, got.Results, "hour bucket: %v %v, want %v", got.EndpointMaterialized, got.Results, want.Results)

	daily := map[string]engine.Bucket{}
	ep, err := e.svc.Update(ctx, "1", "hourly", endpoint.UpdateRequest{MaterializationBuckets: &daily})
	require.NoError(t, err)
	if ep.Materialization.Status != endpoint.StatusPending || ep.Materialization.LastMaterializedAt != nil || ep.MaterializationBuckets != nil {
		t.Fatalf("after changing the buckets: %+v %v", ep.Materialization, ep.MaterializationBuckets)
	}
	require.False(t, e.mustRun(t, "hourly", runVars("US", "2025-05-01", "2025-05-09")).EndpointMaterialized, "a table built with other buckets served")
	e.materialize(t, "hourly")
	require.True(t, e.mustRun(t, "hourly", runVars("US", "2025-05-01", "2025-05-09")).EndpointMaterialized, "the rebuilt table does not serve")
}

// TestMaterializationJSON: the endpoint JSON shows the materialization
// object and the settings.
func TestMaterializationJSON(t *testing.T) {
	e, _ := newMatEnv(t, 500)
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{
		MaterializationFreshness: endpoint.Seconds(90 * time.Minute),
		MaterializationBuckets:   map[string]engine.Bucket{"to": engine.Week},
	})
	e.materialize(t, "daily")
	b, err := json.Marshal(e.get(t, "daily"))
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	want := map[string]any{
		"materialization_freshness": 5400.0,
		"materialization_buckets":   map[string]any{"to": "week"},
		"materialization": map[string]any{
			"can_materialize": true, "reason": "", "status": "completed",
			"last_materialized_at": "2025-06-01T12:00:00Z", "error": "", "hibernating": false,
			// The bucket override of to shows in its verdict.
			"variables": []any{
				map[string]any{"code_name": "country", "as": "key", "expression": `"country"`},
				map[string]any{"code_name": "from", "as": "range", "expression": `"timestamp"`, "bucket": "day"},
				map[string]any{"code_name": "to", "as": "range", "expression": `"timestamp"`, "bucket": "week"},
			},
		},
	}
	for k, w := range want {
		assert.Equal(t, w, got[k], "%s", k)
	}
	_, ok := got["materialization_state"]
	assert.False(t, ok, "the stored state leaks into the JSON")
}
