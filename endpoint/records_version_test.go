package endpoint_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// TestVersions: each version shows its query, the variables a run
// takes (definitions and required), when it was saved, whether it can be
// materialized and whether the stored table was built from it.
func TestVersions(t *testing.T) {
	e, _ := newMatEnv(t, 500)
	ctx := context.Background()
	created := e.clock.Now()
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})
	e.materialize(t, "daily")
	e.clock.Advance(time.Hour)
	if _, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{Query: e.query("SELECT id FROM orders WHERE plan IN {variables.plans} OR country = {variables.country} OR id > 5", "plans", "country"),
		IsMaterialized: new(false)}); err != nil {
		t.Fatal(err)
	}
	infos, err := e.svc.Versions(ctx, "1", "daily")
	require.NoError(t, err, "Versions = %d, %v", len(infos), err)
	require.Len(t, infos, 2, "Versions = %d, %v", len(infos), err)
	v1, v2 := infos[0], infos[1]
	if v1.Version != 1 || !v1.CreatedAt.Equal(created) || v1.IsCurrent || v1.Query.SQL != dailyPurchases ||
		!v1.Materialization.CanMaterialize || v1.Materialization.Materialized {
		t.Fatalf("version 1 = %+v", v1)
	}
	var names []string
	for _, v := range v1.Variables {
		names = append(names, v.CodeName)
		require.True(t, v.Required, "variable %+v", v)
		require.NotEqual(t, "", v.ID, "variable %+v", v)
	}
	require.Equal(t, []string{"country", "from", "to"}, names, "version 1 variables %+v", v1.Variables)
	require.Equal(t, variable.Date, v1.Variables[1].Type, "version 1 variables %+v", v1.Variables)
	if v2.Version != 2 || !v2.IsCurrent || !v2.CreatedAt.Equal(created.Add(time.Hour)) || v2.Materialization.CanMaterialize ||
		v2.Materialization.Reason == "" || len(v2.Variables) != 2 || !v2.Variables[1].IsMulti ||
		!reflect.DeepEqual(v2.Variables[1].Values, []string{"free", "pro", "enterprise"}) {
		t.Fatalf("version 2 = %+v", v2)
	}
	one, err := e.svc.Version(ctx, "1", "daily", 1)
	require.NoError(t, err, "Version(1) = %+v, %v", one, err)
	require.Equal(t, v1, one, "Version(1) = %+v, %v", one, err)
	_, err = e.svc.Version(ctx, "1", "daily", 3)
	wantError(t, err, 404, endpoint.CodeNotFound, "Version 3 not found for endpoint 'daily'", "")
	_, err = e.svc.Version(ctx, "1", "daily", 0)
	wantError(t, err, 400, endpoint.CodeInvalidInput, "Version must be a positive integer, got 0.", "version")
	_, err = e.svc.Versions(ctx, "1", "nope")
	wantError(t, err, 404, endpoint.CodeNotFound, "Endpoint 'nope' not found.", "")

	// Materialized again, the current version's table is the one shown.
	if _, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{Query: e.query(dailyPurchases, "country", "from", "to"), IsMaterialized: new(true)}); err != nil {
		t.Fatal(err)
	}
	e.materialize(t, "daily")
	v3, err := e.svc.Version(ctx, "1", "daily", 3)
	if err != nil || !v3.Materialization.Materialized || v3.Materialization.LastMaterializedAt == nil {
		t.Fatalf("version 3 = %+v, %v", v3, err)
	}
	if v1, _ := e.svc.Version(ctx, "1", "daily", 1); v1.Materialization.Materialized {
		t.Fatal("version 1 shows the table of version 3")
	}
}

// TestRunSchema: a SQL version is described by its columns, as the
// database named them at save (kept with the version: no query now); an
// insight version by its variables.
func TestRunSchema(t *testing.T) {
	x := &queryCounter{}
	e := newEnv(t, func(c *endpoint.Config) { x.Executor = c.Executor; c.Executor = x })
	ctx := context.Background()
	e.create(t, "ep", e.query("SELECT id, country AS c, amount * 2 AS double FROM orders WHERE country = {variables.country} AND plan IN {variables.plans} AND created >= {variables.from} AND paid = {variables.paid} AND amount > {variables.min_amount}",
		"country", "plans", "from", "paid", "min_amount"))
	x.queries.Store(0) // the check of the save
	rs, err := e.svc.RunSchema(ctx, "1", "ep", 0)
	require.NoError(t, err)
	if !reflect.DeepEqual(rs.Columns, []string{"id", "c", "double"}) || rs.Version != 1 || !rs.IsCurrent || len(rs.Variables) != 5 ||
		rs.DefaultLimit != endpoint.DefaultLimit || rs.MaxLimit != endpoint.DefaultMaxLimit || rs.Kind != endpoint.KindSQL {
		t.Fatalf("RunSchema = %+v", rs)
	}
	require.Equal(t, int64(0), x.queries.Load())
	_, err = e.svc.RunSchema(ctx, "1", "ep", 2)
	wantError(t, err, 404, endpoint.CodeNotFound, "Version 2 not found for endpoint 'ep'", "")

	in := newInsightEnv(t)
	q := insightQuery(t, trendsByBrowser)
	if _, err := in.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "trends", Query: q}); err != nil {
		t.Fatal(err)
	}
	rs, err = in.svc.RunSchema(ctx, "1", "trends", 1)
	if err != nil || rs.Kind != endpoint.KindTrends || len(rs.Columns) != 0 {
		t.Fatalf("RunSchema(trends) = %+v, %v", rs, err)
	}
	b, _ := json.Marshal(rs.Variables)
	want := `[{"name":"$browser","code_name":"$browser","type":"String","required":false},{"name":"date_from","code_name":"date_from","type":"Date","required":false},{"name":"date_to","code_name":"date_to","type":"Date","required":false}]`
	require.Equal(t, want, string(b), "insight variables %s", b)
	if _, err := in.svc.Update(ctx, "1", "trends", endpoint.UpdateRequest{IsMaterialized: new(true)}); err != nil {
		t.Fatal(err)
	}
	rs, _ = in.svc.RunSchema(ctx, "1", "trends", 0)
	if len(rs.Variables) != 1 || !rs.Variables[0].Required || !rs.Materialized {
		t.Fatalf("a materialized insight's variables: %+v", rs)
	}
}

// TestMaterializationStatusNotMaterialized: an endpoint that is not
// materialized has no status; an unknown one is a 404.
func TestMaterializationStatusNotMaterialized(t *testing.T) {
	e := newEnv(t)
	e.create(t, "ep", e.query("SELECT 1 AS one"))
	r := e.status(t, "ep")
	b, _ := json.Marshal(r)
	want := `{"name":"ep","is_materialized":false,"status":null,"serving":false,"version":0,"last_success_at":null,"rows":null,"bytes":null,"duration_ms":null,"last_error":null,"last_error_at":null,"data_freshness_seconds":86400,"materialization_freshness_seconds":86400,"next_refresh_at":null,"hibernating":false,"hibernating_since":null,"progress":null,"source_rows":null,"savings_warning":null,"edge_index":null,"edge_index_warning":null}`
	require.Equal(t, want, string(b), "status = %s", b)
	_, err := e.svc.MaterializationStatus(context.Background(), "1", "nope")
	wantError(t, err, 404, endpoint.CodeNotFound, "Endpoint 'nope' not found.", "")
}

// TestMaterializationStatusLifecycle: pending, then ready with rows and
// duration, then pending again for a new version.
func TestMaterializationStatusLifecycle(t *testing.T) {
	e, _ := newMatEnv(t, 500)
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})
	r := e.status(t, "daily")
	if !isStatus(r, endpoint.StatusPending) || r.Serving || r.LastSuccessAt != nil || !r.NextRefreshAt.Equal(e.clock.Now()) {
		t.Fatalf("status before a refresh: %+v", r)
	}
	e.materialize(t, "daily")
	r = e.status(t, "daily")
	if !isStatus(r, endpoint.StatusCompleted) || !r.Serving || r.Rows == nil || r.DurationMS == nil || r.Version != 1 || r.LastError != nil {
		t.Fatalf("status after a refresh: %+v", r)
	}
	var n int64
	require.NoError(t, e.db.QueryRow(`SELECT count(*) FROM (`+"SELECT date(timestamp) AS day, country FROM (SELECT timestamp, json_extract(properties, '$.country') AS country FROM events WHERE event = 'purchase') GROUP BY day, country"+`)`).Scan(&n))
	require.Equal(t, n, *r.Rows, "rows")
	_, err := e.svc.Update(context.Background(), "1", "daily", endpoint.UpdateRequest{Query: e.query(dailyPurchases+" LIMIT 10", "country", "from", "to")})
	require.NoError(t, err)
	r = e.status(t, "daily")
	if !isStatus(r, endpoint.StatusPending) || r.Version != 1 || r.Serving {
		t.Fatalf("status after a new version: %+v", r)
	}
}

// TestStatusRouteAgreesWithTheEndpoint: the status route says what the
// endpoint's materialization says, in the same word (it said ready where
// the endpoint said completed), and gives the freshness its table follows
// (it gave only data_freshness_seconds, 86400, for a table refreshed every
// 1800 s).
func TestStatusRouteAgreesWithTheEndpoint(t *testing.T) {
	e, _ := newMatEnv(t, 300)
	half := endpoint.Seconds(30 * time.Minute)
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{MaterializationFreshness: half})
	for _, step := range []string{"pending", "completed"} {
		if step == "completed" {
			e.materialize(t, "daily")
		}
		r := e.status(t, "daily")
		ep := e.get(t, "daily")
		if r.Status == nil || *r.Status != ep.Materialization.Status || string(*r.Status) != step {
			t.Fatalf("%s: the route says %v, the endpoint %q", step, r.Status, ep.Materialization.Status)
		}
		require.Equal(t, 1800, r.MaterializationFreshnessSeconds, "%s: freshness %d s (data %d s), want 1800 (data %d)", step, r.MaterializationFreshnessSeconds, r.DataFreshnessSeconds, ep.DataFreshnessSeconds)
		require.Equal(t, ep.DataFreshnessSeconds, r.DataFreshnessSeconds, "%s: freshness %d s (data %d s), want 1800 (data %d)", step, r.MaterializationFreshnessSeconds, r.DataFreshnessSeconds, ep.DataFreshnessSeconds)
	}
}
