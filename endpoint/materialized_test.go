package endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/materialize"
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
	endpoint.Executor
	fail               atomic.Bool
	inflight, overlaps atomic.Int32
}

func (x *matExec) Exec(ctx context.Context, q string, args []any) error {
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
	return x.Executor.Exec(ctx, q, args)
}

// newMatEnv is newEnv with demo events and the wrapped executor.
func newMatEnv(t testing.TB, events int) (*env, *matExec) {
	t.Helper()
	x := &matExec{}
	e := newEnv(t, func(c *endpoint.Config) {})
	if err := demo.Load(context.Background(), e.db, events, 7); err != nil {
		t.Fatal(err)
	}
	x.Executor = execOf(e)
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: x, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	return e, x
}

func (e *env) createMat(t testing.TB, name string, q *endpoint.Query, req endpoint.CreateRequest) endpoint.Endpoint {
	t.Helper()
	req.Name, req.Query, req.IsMaterialized = name, q, true
	ep, err := e.svc.Create(context.Background(), "1", req)
	if err != nil {
		t.Fatalf("Create(%s): %v", name, err)
	}
	return ep
}

func (e *env) get(t testing.TB, name string) endpoint.Endpoint {
	t.Helper()
	ep, err := e.svc.Get(context.Background(), "1", name)
	if err != nil {
		t.Fatalf("Get(%s): %v", name, err)
	}
	return ep
}

func (e *env) materialize(t testing.TB, name string) {
	t.Helper()
	if err := e.svc.Materialize(context.Background(), "1", name); err != nil {
		t.Fatalf("Materialize(%s): %v", name, err)
	}
}

func (e *env) mustRun(t testing.TB, name string, vars map[string]any) *endpoint.RunResult {
	t.Helper()
	res, err := e.svc.Run(context.Background(), "1", name, endpoint.RunRequest{Variables: vars})
	if err != nil {
		t.Fatalf("Run(%s, %v): %v", name, vars, err)
	}
	return res
}

// tables lists the stored tables of materialized endpoints in the database.
func (e *env) tables(t testing.TB) []string {
	t.Helper()
	rows, err := e.db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'endpointkit_mat_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

func runVars(country, from, to string) map[string]any {
	return map[string]any{"country": country, "from": from, "to": to}
}

// TestMaterializedSQLEqualsInline: after a refresh, runs read the stored
// table and answer exactly what the same query inline answers, for many
// values drawn from the data (countries with and without purchases, empty
// and reversed ranges); dates off the day boundary are answered inline,
// and say so.
func TestMaterializedSQLEqualsInline(t *testing.T) {
	e, _ := newMatEnv(t, 20_000)
	q := e.query(dailyPurchases, "country", "from", "to")
	ep := e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	m := ep.Materialization
	if !m.CanMaterialize || m.Reason != "" || m.Status != endpoint.StatusPending || m.LastMaterializedAt != nil {
		t.Fatalf("materialization after create = %+v, want can_materialize and pending", m)
	}
	if ep.MaterializationFreshness != endpoint.Seconds(endpoint.DefaultFreshness) {
		t.Fatalf("freshness = %v, want the default", time.Duration(ep.MaterializationFreshness))
	}
	if res := e.mustRun(t, "daily", runVars("US", "2025-05-01", "2025-05-08")); res.EndpointMaterialized {
		t.Fatal("a run before the first refresh read a table")
	}
	e.materialize(t, "daily")
	m = e.get(t, "daily").Materialization
	if m.Status != endpoint.StatusCompleted || m.LastMaterializedAt == nil || !m.LastMaterializedAt.Equal(e.clock.Now()) || m.Error != "" {
		t.Fatalf("materialization after refresh = %+v", m)
	}

	countries := append([]string{"XX", ""}, demo.Countries...)
	days := []string{"2025-02-01", "2025-03-03", "2025-03-31", "2025-04-15", "2025-05-01", "2025-05-20", "2025-06-01", "2025-07-01"}
	offDay := []string{"2025-04-15T12:00:00Z", "2025-05-01T00:00:01Z", "2025-05-20T23:59:59Z"}
	n, materialized := 0, 0
	check := func(vars map[string]any, wantMaterialized bool) {
		t.Helper()
		got, want := e.mustRun(t, "daily", vars), e.mustRun(t, "inline", vars)
		if got.EndpointMaterialized != wantMaterialized {
			t.Fatalf("%v: endpoint_materialized = %v, want %v", vars, got.EndpointMaterialized, wantMaterialized)
		}
		if wantMaterialized && (got.EndpointMaterializedAt == nil || !got.EndpointMaterializedAt.Equal(*m.LastMaterializedAt)) {
			t.Fatalf("%v: endpoint_materialized_at = %v", vars, got.EndpointMaterializedAt)
		}
		if !reflect.DeepEqual(got.Results, want.Results) || !reflect.DeepEqual(got.Columns, want.Columns) || got.HasMore != want.HasMore {
			t.Fatalf("%v:\nmaterialized %v %v\ninline       %v %v", vars, got.Columns, got.Results, want.Columns, want.Results)
		}
		n++
		if got.EndpointMaterialized {
			materialized++
		}
	}
	for i, c := range countries {
		for j, from := range days {
			to := days[(j+1+i)%len(days)] // forward, and sometimes reversed (empty)
			check(runVars(c, from, to), true)
		}
		check(runVars(c, offDay[i%len(offDay)], "2025-06-01"), false)
		check(runVars(c, "2025-04-01", offDay[(i+1)%len(offDay)]), false)
	}
	if n < 100 || materialized < 90 {
		t.Fatalf("%d runs, %d materialized", n, materialized)
	}
	// The answer holds rows at all: the comparison is not of empty results.
	if rows := e.mustRun(t, "daily", runVars("US", "2025-03-03", "2025-06-01")).Results.([][]any); len(rows) < 80 {
		t.Fatalf("%d days of US purchases, want about 90", len(rows))
	}
}

// TestMaterializedPaging: limit and offset page a materialized read as they
// page the inline query.
func TestMaterializedPaging(t *testing.T) {
	e, _ := newMatEnv(t, 5000)
	q := e.query(dailyPurchases, "country", "from", "to")
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	e.materialize(t, "daily")
	for _, p := range [][2]int{{5, 0}, {5, 3}, {1000, 0}, {3, 1000}, {0, 0}} {
		limit, offset := p[0], p[1]
		req := endpoint.RunRequest{Variables: runVars("US", "2025-03-03", "2025-06-01"), Limit: &limit, Offset: &offset}
		got, err := e.svc.Run(context.Background(), "1", "daily", req)
		if err != nil {
			t.Fatal(err)
		}
		want, err := e.svc.Run(context.Background(), "1", "inline", req)
		if err != nil {
			t.Fatal(err)
		}
		if !got.EndpointMaterialized || !reflect.DeepEqual(got.Results, want.Results) || got.HasMore != want.HasMore {
			t.Fatalf("limit %d offset %d: %v %v, want %v %v", limit, offset, got.Results, got.HasMore, want.Results, want.HasMore)
		}
	}
}

// TestMaterializedRequiresEveryVariable: every variable of a materialized
// SQL endpoint is required, whether the table or the inline query answers.
func TestMaterializedRequiresEveryVariable(t *testing.T) {
	e, _ := newMatEnv(t, 1000)
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})
	for _, refreshed := range []bool{false, true} {
		if refreshed {
			e.materialize(t, "daily")
		}
		_, err := e.svc.Run(context.Background(), "1", "daily", endpoint.RunRequest{Variables: map[string]any{"country": "US"}})
		wantError(t, err, 400, endpoint.CodeRequiredVariableMissing, "Required variable(s) 'from', 'to' not provided", "variables")
		_, err = e.svc.Run(context.Background(), "1", "daily", endpoint.RunRequest{Variables: map[string]any{"country": "US", "from": "2025-05-01", "to": "someday"}})
		if asError(t, err).Code != endpoint.CodeInvalidVariableValue {
			t.Fatalf("bad date: %v", err)
		}
	}
}

// TestMaterializationStaleRunsInline: past its freshness period a table no
// longer serves; RefreshStale rebuilds exactly the stale and pending
// endpoints.
func TestMaterializationStaleRunsInline(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	q := e.query(dailyPurchases, "country", "from", "to")
	freshness := endpoint.Seconds(10 * time.Minute)
	e.createMat(t, "daily", q, endpoint.CreateRequest{MaterializationFreshness: freshness})
	e.createMat(t, "other", q, endpoint.CreateRequest{})
	e.create(t, "plain", q)
	ctx := context.Background()
	n, err := e.svc.RefreshStale(ctx)
	if err != nil || n != 2 {
		t.Fatalf("RefreshStale of two pending endpoints = %d, %v", n, err)
	}
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 0 {
		t.Fatalf("RefreshStale of fresh endpoints = %d, %v", n, err)
	}
	vars := runVars("US", "2025-05-01", "2025-05-08")
	if !e.mustRun(t, "daily", vars).EndpointMaterialized {
		t.Fatal("a fresh table did not serve")
	}
	e.clock.Advance(10*time.Minute + time.Second)
	if e.mustRun(t, "daily", vars).EndpointMaterialized {
		t.Fatal("a stale table served")
	}
	if !e.mustRun(t, "other", vars).EndpointMaterialized {
		t.Fatal("the default freshness is an hour")
	}
	if n, err := e.svc.RefreshStale(ctx); err != nil || n != 1 {
		t.Fatalf("RefreshStale of one stale endpoint = %d, %v", n, err)
	}
	res := e.mustRun(t, "daily", vars)
	if !res.EndpointMaterialized || !res.EndpointMaterializedAt.Equal(e.clock.Now()) {
		t.Fatalf("after the refresh: %v at %v", res.EndpointMaterialized, res.EndpointMaterializedAt)
	}
	if got := e.tables(t); len(got) != 2 {
		t.Fatalf("tables %v, want one per materialized endpoint", got)
	}
}

// TestMaterializationFailureKeepsLastTable: a failed refresh reports
// failed with an error that leaks nothing, and the last good table keeps
// serving; a failed first refresh leaves runs inline.
func TestMaterializationFailureKeepsLastTable(t *testing.T) {
	e, x := newMatEnv(t, 2000)
	q := e.query(dailyPurchases, "country", "from", "to")
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.createMat(t, "never", q, endpoint.CreateRequest{})
	e.materialize(t, "daily")
	built := *e.get(t, "daily").Materialization.LastMaterializedAt
	vars := runVars("DE", "2025-04-01", "2025-05-01")
	before := e.mustRun(t, "daily", vars)

	x.fail.Store(true)
	e.clock.Advance(time.Minute)
	for _, name := range []string{"daily", "never"} {
		err := e.svc.Materialize(context.Background(), "1", name)
		wantError(t, err, 502, endpoint.CodeMaterializationFailed,
			"Materialization of endpoint '"+name+"' failed: the query could not be executed against the database", "")
		if !strings.Contains(fmt.Sprint(errors.Unwrap(err)), "disk I/O") {
			t.Fatalf("the cause is not reachable: %v", errors.Unwrap(err))
		}
	}
	m := e.get(t, "daily").Materialization
	if m.Status != endpoint.StatusFailed || m.Error != "the query could not be executed against the database" ||
		m.LastMaterializedAt == nil || !m.LastMaterializedAt.Equal(built) {
		t.Fatalf("after a failed refresh: %+v", m)
	}
	after := e.mustRun(t, "daily", vars)
	if !after.EndpointMaterialized || !reflect.DeepEqual(after.Results, before.Results) {
		t.Fatalf("the last good table stopped serving: %+v", after)
	}
	if m := e.get(t, "never").Materialization; m.Status != endpoint.StatusFailed || m.LastMaterializedAt != nil {
		t.Fatalf("never refreshed: %+v", m)
	}
	if e.mustRun(t, "never", vars).EndpointMaterialized {
		t.Fatal("an endpoint without a table read one")
	}
	if n, err := e.svc.RefreshStale(context.Background()); n != 0 || err == nil {
		t.Fatalf("RefreshStale with a fresh and a failing endpoint = %d, %v", n, err)
	}
	x.fail.Store(false)
	e.materialize(t, "never")
	if m := e.get(t, "never").Materialization; m.Status != endpoint.StatusCompleted || m.Error != "" {
		t.Fatalf("after a good refresh: %+v", m)
	}
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
		"Cannot materialize endpoint. Reason: variable 'country' is used with the operator LIKE; only =, >=, >, <, <= can be materialized", "is_materialized")
	if _, err := e.svc.Get(ctx, "1", "m"); asError(t, err).Status != 404 {
		t.Fatalf("a refused create stored the endpoint: %v", err)
	}

	before := e.create(t, "sql", e.query(`SELECT count(*) FROM orders WHERE country = {variables.country}`, "country"))
	if !before.Materialization.CanMaterialize || before.Materialization.Status != "" {
		t.Fatalf("materialization of a plain endpoint = %+v", before.Materialization)
	}
	yes, desc := true, "new"
	_, err = e.svc.Update(ctx, "1", "sql", endpoint.UpdateRequest{Description: &desc, Query: like, IsMaterialized: &yes})
	if asError(t, err).Code != endpoint.CodeCannotMaterialize {
		t.Fatalf("update to a LIKE query: %v", err)
	}
	if after := e.get(t, "sql"); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused update changed the endpoint:\n%+v\n%+v", after, before)
	}
	e.create(t, "like", like)
	_, err = e.svc.Update(ctx, "1", "like", endpoint.UpdateRequest{IsMaterialized: &yes})
	if asError(t, err).Code != endpoint.CodeCannotMaterialize {
		t.Fatalf("materializing a LIKE query: %v", err)
	}
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
		{endpoint.CreateRequest{MaterializationBuckets: map[string]materialize.Bucket{"country": materialize.Hour}}, "materialization_buckets",
			"materialization_buckets: 'country' is not a Date variable of this query."},
		{endpoint.CreateRequest{MaterializationBuckets: map[string]materialize.Bucket{"from": "year"}}, "materialization_buckets",
			"materialization_buckets: invalid bucket 'year' for 'from'. Expected one of: minute, hour, day, week, month."},
		{endpoint.CreateRequest{OptionalBreakdowns: []string{"country"}}, "optional_breakdowns",
			"optional_breakdowns apply to insight endpoints only."},
	} {
		tc.req.Name, tc.req.Query, tc.req.IsMaterialized = "bad", q, true
		_, err := e.svc.Create(ctx, "1", tc.req)
		wantError(t, err, 400, endpoint.CodeInvalidInput, tc.detail, tc.attr)
	}

	e.create(t, "inline", q)
	hourly := map[string]materialize.Bucket{"from": materialize.Hour, "to": materialize.Hour}
	e.createMat(t, "hourly", q, endpoint.CreateRequest{MaterializationBuckets: hourly})
	e.materialize(t, "hourly")
	vars := runVars("US", "2025-05-01T06:00:00Z", "2025-05-09T18:00:00Z")
	got, want := e.mustRun(t, "hourly", vars), e.mustRun(t, "inline", vars)
	if !got.EndpointMaterialized || !reflect.DeepEqual(got.Results, want.Results) {
		t.Fatalf("hour bucket: %v %v, want %v", got.EndpointMaterialized, got.Results, want.Results)
	}

	daily := map[string]materialize.Bucket{}
	ep, err := e.svc.Update(ctx, "1", "hourly", endpoint.UpdateRequest{MaterializationBuckets: &daily})
	if err != nil {
		t.Fatal(err)
	}
	if ep.Materialization.Status != endpoint.StatusPending || ep.Materialization.LastMaterializedAt != nil || ep.MaterializationBuckets != nil {
		t.Fatalf("after changing the buckets: %+v %v", ep.Materialization, ep.MaterializationBuckets)
	}
	if e.mustRun(t, "hourly", runVars("US", "2025-05-01", "2025-05-09")).EndpointMaterialized {
		t.Fatal("a table built with other buckets served")
	}
	e.materialize(t, "hourly")
	if !e.mustRun(t, "hourly", runVars("US", "2025-05-01", "2025-05-09")).EndpointMaterialized {
		t.Fatal("the rebuilt table does not serve")
	}
}

// TestMaterializationVersions: a new version runs inline until its own
// table is built; the previous table is dropped only then; older versions
// always run inline; turning materialization off or deleting the endpoint
// drops its table.
func TestMaterializationVersions(t *testing.T) {
	e, _ := newMatEnv(t, 2000)
	ctx := context.Background()
	ep := e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})
	e.materialize(t, "daily")
	v1 := materialize.TableName(ep.ID, 1)
	if got := e.tables(t); !reflect.DeepEqual(got, []string{v1}) {
		t.Fatalf("tables %v, want [%s]", got, v1)
	}
	vars := runVars("FR", "2025-04-01", "2025-05-01")
	weekly := e.query(strings.Replace(dailyPurchases, "date(timestamp)", "strftime('%Y-%W', timestamp)", 1), "country", "from", "to")
	up, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{Query: weekly})
	if err != nil {
		t.Fatal(err)
	}
	if up.Materialization.Status != endpoint.StatusPending || up.Materialization.LastMaterializedAt != nil {
		t.Fatalf("a new version: %+v", up.Materialization)
	}
	if res := e.mustRun(t, "daily", vars); res.EndpointMaterialized || res.EndpointVersion != 2 {
		t.Fatalf("version 2 before its refresh: %+v", res)
	}
	one := 1
	if res, err := e.svc.Run(ctx, "1", "daily", endpoint.RunRequest{Variables: vars, Version: &one}); err != nil || res.EndpointMaterialized {
		t.Fatalf("version 1: %+v, %v", res, err)
	}
	if got := e.tables(t); !reflect.DeepEqual(got, []string{v1}) {
		t.Fatalf("the old table went before the new one was built: %v", got)
	}
	e.materialize(t, "daily")
	v2 := materialize.TableName(ep.ID, 2)
	if got := e.tables(t); !reflect.DeepEqual(got, []string{v2}) {
		t.Fatalf("tables %v, want [%s]", got, v2)
	}
	if res := e.mustRun(t, "daily", vars); !res.EndpointMaterialized || len(res.Results.([][]any)) == 0 {
		t.Fatalf("version 2 after its refresh: %+v", res)
	}
	if res, err := e.svc.Run(ctx, "1", "daily", endpoint.RunRequest{Variables: vars, Version: &one}); err != nil || res.EndpointMaterialized {
		t.Fatalf("version 1 after version 2's refresh: %+v, %v", res, err)
	}

	no := false
	off, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{IsMaterialized: &no})
	if err != nil || off.Materialization.Status != "" || len(e.tables(t)) != 0 {
		t.Fatalf("turned off: %+v, %v, tables %v", off.Materialization, err, e.tables(t))
	}
	yes := true
	if _, err := e.svc.Update(ctx, "1", "daily", endpoint.UpdateRequest{IsMaterialized: &yes}); err != nil {
		t.Fatal(err)
	}
	e.materialize(t, "daily")
	if len(e.tables(t)) != 1 {
		t.Fatalf("tables %v", e.tables(t))
	}
	if err := e.svc.Delete(ctx, "1", "daily"); err != nil {
		t.Fatal(err)
	}
	if got := e.tables(t); len(got) != 0 {
		t.Fatalf("tables left after delete: %v", got)
	}
}

// TestMaterializeOneAtATime: concurrent refreshes of one endpoint, by
// Materialize and RefreshStale, never overlap, and runs during them
// answer correctly from the table or inline.
func TestMaterializeOneAtATime(t *testing.T) {
	e, x := newMatEnv(t, 2000)
	q := e.query(dailyPurchases, "country", "from", "to")
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	vars := runVars("US", "2025-04-01", "2025-05-01")
	want := e.mustRun(t, "inline", vars).Results
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			switch i % 3 {
			case 0:
				err = e.svc.Materialize(context.Background(), "1", "daily")
			case 1:
				_, err = e.svc.RefreshStale(context.Background())
			default:
				var res *endpoint.RunResult
				if res, err = e.svc.Run(context.Background(), "1", "daily", endpoint.RunRequest{Variables: vars}); err == nil && !reflect.DeepEqual(res.Results, want) {
					err = fmt.Errorf("run during refreshes: %v, want %v", res.Results, want)
				}
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := x.overlaps.Load(); n != 0 {
		t.Fatalf("%d refreshes overlapped another", n)
	}
	if m := e.get(t, "daily").Materialization; m.Status != endpoint.StatusCompleted {
		t.Fatalf("status %s", m.Status)
	}
}

// TestMaterializationJSON: the endpoint JSON shows the materialization
// object and the settings.
func TestMaterializationJSON(t *testing.T) {
	e, _ := newMatEnv(t, 500)
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{
		MaterializationFreshness: endpoint.Seconds(90 * time.Minute),
		MaterializationBuckets:   map[string]materialize.Bucket{"to": materialize.Week},
	})
	e.materialize(t, "daily")
	b, err := json.Marshal(e.get(t, "daily"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"materialization_freshness": 5400.0,
		"materialization_buckets":   map[string]any{"to": "week"},
		"materialization": map[string]any{
			"can_materialize": true, "reason": "", "status": "completed",
			"last_materialized_at": "2025-06-01T12:00:00Z", "error": "",
		},
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s = %#v, want %#v", k, got[k], w)
		}
	}
	if _, ok := got["materialization_state"]; ok {
		t.Error("the stored state leaks into the JSON")
	}
}
