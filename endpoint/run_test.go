package endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/apikey"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/embed"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answering is a fake executor that answers every query with res, and
// records each.
func answering(res *driver.Result) *heldexec.Fake {
	return heldexec.NewFake(nil, heldexec.Answer(res))
}

// ids returns the first column of the rows as int64s.
func ids(t *testing.T, res *endpoint.RunResult) []int64 {
	t.Helper()
	out := []int64{}
	for _, row := range res.Results.([][]any) {
		out = append(out, row[0].(int64))
	}
	return out
}

func run(e *env, name string, vars map[string]any) (*endpoint.RunResult, error) {
	return e.svc.Run(context.Background(), "1", name, endpoint.RunRequest{Variables: vars})
}

// TestRunValues: each variable type filters the rows it should.
func TestRunValues(t *testing.T) {
	e := newEnv(t)
	e.create(t, "by_country", e.query("SELECT id FROM orders WHERE country = {variables.country} ORDER BY id", "country"))
	e.create(t, "min_amount", e.query("SELECT id FROM orders WHERE amount >= {variables.min_amount} ORDER BY id", "min_amount"))
	e.create(t, "paid", e.query("SELECT id FROM orders WHERE paid = {variables.paid} ORDER BY id", "paid"))
	e.create(t, "plans", e.query("SELECT id FROM orders WHERE plan IN {variables.plans} ORDER BY id", "plans"))
	e.create(t, "plan", e.query("SELECT id FROM orders WHERE plan = {variables.plan} ORDER BY id", "plan"))
	e.create(t, "range", e.query("SELECT id FROM orders WHERE created >= {variables.from} AND created < {variables.to} ORDER BY id", "from", "to"))
	e.create(t, "twice", e.query("SELECT id FROM orders WHERE country = {variables.country} OR plan = {variables.country} ORDER BY id", "country"))
	for _, tc := range []struct {
		name string
		vars map[string]any
		want []int64
	}{
		{"by_country", map[string]any{"country": "US"}, []int64{1, 3, 5}},
		{"by_country", map[string]any{"country": "XX"}, []int64{}},
		{"by_country", map[string]any{"country": "' OR 1=1 --"}, []int64{}},
		{"min_amount", map[string]any{"min_amount": "12"}, []int64{2, 4, 5}},
		{"min_amount", map[string]any{"min_amount": 25.5}, []int64{2, 5}},
		{"min_amount", map[string]any{"min_amount": json.Number("99")}, []int64{5}},
		{"paid", map[string]any{"paid": true}, []int64{1, 3, 4, 6}},
		{"paid", map[string]any{"paid": "false"}, []int64{2, 5}},
		{"plans", map[string]any{"plans": []any{"pro", "enterprise"}}, []int64{2, 3, 4, 5}},
		{"plans", map[string]any{"plans": []string{"free"}}, []int64{1, 6}},
		{"plan", map[string]any{"plan": "pro"}, []int64{2, 3}},
		{"range", map[string]any{"from": "2025-01-02", "to": "2025-01-04"}, []int64{2, 3}},
		{"range", map[string]any{"from": "2025-01-02T11:00:00Z", "to": "2025-01-05T14:00:00Z"}, []int64{2, 3, 4}},
		{"twice", map[string]any{"country": "free"}, []int64{1, 6}},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.name, tc.vars), func(t *testing.T) {
			res, err := run(e, tc.name, tc.vars)
			require.NoError(t, err)
			require.Equal(t, tc.want, ids(t, res), "ids")
			if res.Name != tc.name || res.EndpointVersion != 1 || res.HasMore ||
				!reflect.DeepEqual(res.Columns, []string{"id"}) || !reflect.DeepEqual(res.Types, []string{"INTEGER"}) {
				t.Fatalf("result = %+v", res)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.create(t, "two", e.query("SELECT id FROM orders WHERE country = {variables.country} AND amount > {variables.min_amount}", "country", "min_amount"))
	e.create(t, "dates", e.query("SELECT id FROM orders WHERE created >= {variables.from}", "from"))
	e.create(t, "plans", e.query("SELECT id FROM orders WHERE plan IN ({variables.plans})", "plans"))
	no := false
	e.create(t, "off", e.query("SELECT 1"))
	if _, err := e.svc.Update(ctx, "1", "off", endpoint.UpdateRequest{IsActive: &no}); err != nil {
		t.Fatal(err)
	}
	intp := func(n int) *int { return &n }
	for _, tc := range []struct {
		name, endpoint string
		req            endpoint.RunRequest
		status         int
		code, detail   string
		attr           string
	}{
		{"all missing, sorted; the default does not fill in", "two", endpoint.RunRequest{},
			400, "required_variable_missing", "Required variable(s) 'country', 'min_amount' not provided", "variables.country"},
		{"one missing", "two", endpoint.RunRequest{Variables: map[string]any{"country": "US"}},
			400, "required_variable_missing", "Required variable(s) 'min_amount' not provided", "variables.min_amount"},
		{"unknown, sorted", "two", endpoint.RunRequest{Variables: map[string]any{"country": "US", "min_amount": 1, "zz": 1, "aa": 2}},
			400, "unknown_variable", "Unknown variable(s): aa, zz", "variables.aa"},
		{"unknown before missing", "two", endpoint.RunRequest{Variables: map[string]any{"contry": "US"}},
			400, "unknown_variable", "Unknown variable(s): contry", "variables.contry"},
		{"a page bound is no variable", "two", endpoint.RunRequest{Variables: map[string]any{"country": "US", "min_amount": 1, "endpoint_limit": 5}},
			400, "unknown_variable", "Unknown variable(s): endpoint_limit", "variables.endpoint_limit"},
		{"bad number", "two", endpoint.RunRequest{Variables: map[string]any{"country": "US", "min_amount": "12abc"}},
			400, "invalid_variable_value", `Invalid value for variable 'min_amount': expected Number, got "12abc": not a number`, "variables.min_amount"},
		{"null", "two", endpoint.RunRequest{Variables: map[string]any{"country": nil, "min_amount": 1}},
			400, "invalid_variable_value", `Invalid value for variable 'country': expected String, got null: null is not a value`, "variables.country"},
		{"bad date", "dates", endpoint.RunRequest{Variables: map[string]any{"from": "2025-02-30"}},
			400, "invalid_variable_value", "", "variables.from"},
		{"list value not an option", "plans", endpoint.RunRequest{Variables: map[string]any{"plans": []any{"gold"}}},
			400, "invalid_variable_value", "", "variables.plans"},
		{"empty list", "plans", endpoint.RunRequest{Variables: map[string]any{"plans": []any{}}},
			400, "invalid_variable_value", "", "variables.plans"},
		{"version not found", "two", endpoint.RunRequest{Version: intp(7)},
			404, "not_found", "Version 7 not found for endpoint 'two'", ""},
		{"version zero", "two", endpoint.RunRequest{Version: intp(0)},
			400, "invalid_input", "Version must be a positive integer, got 0.", "version"},
		{"negative limit", "two", endpoint.RunRequest{Limit: intp(-1)},
			400, "invalid_input", "Limit must be between 0 and 50000, got -1.", "limit"},
		{"limit above max", "two", endpoint.RunRequest{Limit: intp(50001)},
			400, "invalid_input", "Limit must be between 0 and 50000, got 50001.", "limit"},
		{"negative offset", "two", endpoint.RunRequest{Offset: intp(-5)},
			400, "invalid_input", "Offset must not be negative, got -5.", "offset"},
		{"bad refresh", "two", endpoint.RunRequest{Refresh: "always"},
			400, "invalid_input", "Invalid refresh 'always'. Expected one of: cache, force, direct.", "refresh"},
		{"inactive", "off", endpoint.RunRequest{},
			404, "not_found", "Endpoint 'off' is not active.", ""},
		{"unknown endpoint", "nope", endpoint.RunRequest{},
			404, "not_found", "Endpoint 'nope' not found.", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.Run(ctx, "1", tc.endpoint, tc.req)
			var got *endpoint.Error
			require.ErrorAs(t, err, &got, "Run")
			if got.Status != tc.status || got.Code != tc.code || got.Attr != tc.attr ||
				tc.detail != "" && got.Detail != tc.detail {
				t.Fatalf("Run: {%d %s %q attr %q}, want {%d %s %q attr %q}", got.Status, got.Code, got.Detail, got.Attr, tc.status, tc.code, tc.detail, tc.attr)
			}
			if tc.code == "invalid_variable_value" && !errors.Is(err, variable.ErrInvalidValue) {
				t.Fatalf("a value error should wrap variable.ErrInvalidValue: %v", err)
			}
		})
	}
	// Another project's key never reaches project 1's endpoint.
	_, err := e.svc.Run(ctx, "2", "two", endpoint.RunRequest{Variables: map[string]any{"country": "US", "min_amount": 1}})
	wantError(t, err, 404, "not_found", "Endpoint 'two' not found.", "")
}

func TestRunPaging(t *testing.T) {
	e := newEnv(t, func(c *endpoint.Config) { c.DefaultLimit, c.MaxLimit = 4, 5 })
	// A trailing semicolon and comment do not break the paging wrapper.
	e.create(t, "all", e.query("SELECT id FROM orders ORDER BY id; -- all of them"))
	intp := func(n int) *int { return &n }
	for _, tc := range []struct {
		limit, offset *int
		want          []int64
		more          bool
	}{
		{nil, nil, []int64{1, 2, 3, 4}, true},
		{intp(2), nil, []int64{1, 2}, true},
		{intp(2), intp(4), []int64{5, 6}, false},
		{intp(5), intp(1), []int64{2, 3, 4, 5, 6}, false},
		{intp(5), intp(2), []int64{3, 4, 5, 6}, false},
		{intp(0), nil, []int64{}, true},
		{nil, intp(6), []int64{}, false},
		{nil, intp(100), []int64{}, false},
	} {
		res, err := e.svc.Run(context.Background(), "1", "all", endpoint.RunRequest{Limit: tc.limit, Offset: tc.offset})
		require.NoError(t, err)
		if got := ids(t, res); !reflect.DeepEqual(got, tc.want) || res.HasMore != tc.more {
			t.Errorf("limit %v offset %v: ids %v hasMore %v, want %v %v", deref(tc.limit), deref(tc.offset), got, res.HasMore, tc.want, tc.more)
		}
	}
}

// TestRunShapes: queries of several shapes survive the paging wrapper.
func TestRunShapes(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, sql string
		want      []int64
	}{
		{"cte", "WITH us AS (SELECT * FROM orders WHERE country = {variables.country}) SELECT id FROM us ORDER BY id", []int64{1, 3, 5}},
		{"own_limit", "SELECT id FROM orders WHERE country = {variables.country} ORDER BY id DESC LIMIT 2", []int64{5, 3}},
		{"trailing_comment", "SELECT id FROM orders WHERE country = {variables.country} ORDER BY id -- newest last", []int64{1, 3, 5}},
		{"block_comment", "/* head */ SELECT id FROM orders WHERE country = {variables.country} /* mid */ ORDER BY id /* tail", []int64{1, 3, 5}},
		{"union", "SELECT id FROM orders WHERE country = {variables.country} UNION ALL SELECT 100 ORDER BY 1", []int64{1, 3, 5, 100}},
		{"group", "SELECT count(*) FROM orders WHERE country = {variables.country} GROUP BY country", []int64{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: tc.name, Query: e.query(tc.sql, "country")})
			if tc.name == "block_comment" {
				// An unclosed block comment is refused when saved.
				wantError(t, err, 400, "invalid_input", "Invalid query at line 1, column 92: block comment /* is never closed", "query")
				return
			}
			require.NoError(t, err)
			res, err := run(e, tc.name, map[string]any{"country": "US"})
			require.NoError(t, err)
			require.Equal(t, tc.want, ids(t, res), "ids")
		})
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestRunVersions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.create(t, "ep", e.query("SELECT id FROM orders WHERE country = {variables.country} ORDER BY id", "country"))
	if _, err := e.svc.Update(ctx, "1", "ep", endpoint.UpdateRequest{
		Query: e.query("SELECT id FROM orders WHERE amount > {variables.min_amount} ORDER BY id", "min_amount"),
	}); err != nil {
		t.Fatal(err)
	}
	res, err := run(e, "ep", map[string]any{"min_amount": 20})
	if err != nil || res.EndpointVersion != 2 || !reflect.DeepEqual(ids(t, res), []int64{2, 5}) {
		t.Fatalf("current version: %+v, %v", res, err)
	}
	_, err = run(e, "ep", map[string]any{"country": "US"})
	wantError(t, err, 400, "unknown_variable", "Unknown variable(s): country", "variables.country")

	one := 1
	res, err = e.svc.Run(ctx, "1", "ep", endpoint.RunRequest{Version: &one, Variables: map[string]any{"country": "US"}})
	if err != nil || res.EndpointVersion != 1 || !reflect.DeepEqual(ids(t, res), []int64{1, 3, 5}) {
		t.Fatalf("version 1: %+v, %v", res, err)
	}
	_, err = e.svc.Run(ctx, "1", "ep", endpoint.RunRequest{Version: &one, Variables: map[string]any{"min_amount": 20}})
	wantError(t, err, 400, "unknown_variable", "Unknown variable(s): min_amount", "variables.min_amount")
}

func TestRunDebug(t *testing.T) {
	e := newEnv(t)
	e.create(t, "ep", e.query("SELECT id FROM orders WHERE country = {variables.country} AND amount > {variables.min_amount}", "country", "min_amount"))
	secret := "Zanzibar' --"
	res, err := e.svc.Run(context.Background(), "1", "ep", endpoint.RunRequest{
		Variables: map[string]any{"country": secret, "min_amount": 3}, Debug: true,
	})
	require.NoError(t, err)
	d := res.Debug
	require.NotNil(t, d, "no debug info")
	// Without an offset, SQLite runs the query as written, stopping after
	// limit+1 rows; with one, the query is wrapped to page in SQL.
	want := "SELECT id FROM orders WHERE country = ? AND amount > ?"
	if d.SQL != want || d.ArgCount != 2 || d.RenderMS < 0 || d.ExecuteMS < 0 {
		t.Fatalf("debug = %+v, want SQL %q and 2 arguments", d, want)
	}
	require.NotContains(t, d.SQL, "Zanzibar", "a value entered the SQL text")
	offset := 1
	res, err = e.svc.Run(context.Background(), "1", "ep", endpoint.RunRequest{
		Variables: map[string]any{"country": secret, "min_amount": 3}, Debug: true, Offset: &offset,
	})
	require.NoError(t, err)
	want = "SELECT * FROM (\nSELECT id FROM orders WHERE country = ? AND amount > ?\n) AS endpoint_q LIMIT ? OFFSET ?"
	if d := res.Debug; d == nil || d.SQL != want || d.ArgCount != 4 {
		t.Fatalf("debug with an offset = %+v, want SQL %q and 4 arguments", d, want)
	}
	res, err = run(e, "ep", map[string]any{"country": "US", "min_amount": 3})
	require.NoError(t, err, "debug info without asking: %+v, %v", res, err)
	require.Nil(t, res.Debug, "debug info without asking: %+v, %v", res, err)
}

// TestRunArgs: values reach the executor as typed, bound arguments, in
// marker order, with the page bounds last.
func TestRunArgs(t *testing.T) {
	fx := answering(&driver.Result{Columns: []string{"n"}, Types: []string{"INTEGER"}, Rows: [][]any{{int64(1)}}})
	e := newEnv(t, func(c *endpoint.Config) { c.Executor = fx })
	e.create(t, "ep", e.query("SELECT n FROM t WHERE a = {variables.min_amount} AND b = {variables.paid} AND c >= {variables.from} AND d IN {variables.plans} AND e = {variables.min_amount}",
		"min_amount", "paid", "from", "plans"))
	seven, three := 7, 3
	_, err := e.svc.Run(context.Background(), "1", "ep", endpoint.RunRequest{
		Variables: map[string]any{"min_amount": "12", "paid": "TRUE", "from": "-1d", "plans": []any{"pro", "free"}},
		Limit:     &seven, Offset: &three,
	})
	require.NoError(t, err)
	want := []any{int64(12), true, "2025-05-31", "pro", "free", int64(12), int64(8), int64(3)}
	last := fx.Last()
	require.Equal(t, want, last.Args, "args")
	require.Len(t, want, strings.Count(last.SQL, "?"), "query %q has not one marker per argument", last.SQL)
}

// failingAfterSave is a fake executor whose queries, once saved is set,
// fail with a driver's error naming a table and a host (or, with wait, wait
// until their context ends); before, they answer no rows (a save checks its
// query with the engine, which must answer then).
func failingAfterSave(saved *atomic.Bool, wait bool) *heldexec.Fake {
	after := func(driver.Statement) bool { return saved.Load() }
	if wait {
		return heldexec.NewFake(nil, heldexec.Answer(&driver.Result{}), heldexec.WaitForCancelWhen(after))
	}
	return heldexec.NewFake(nil, heldexec.Answer(&driver.Result{}),
		heldexec.Fail(errors.New("pq: relation \"secret_table\" does not exist at 10.0.0.7"), after))
}

func TestRunExecutionErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("executor failure", func(t *testing.T) {
		var saved atomic.Bool
		e := newEnv(t, func(c *endpoint.Config) { c.Executor = failingAfterSave(&saved, false) })
		e.create(t, "ep", e.query("SELECT 1"))
		saved.Store(true)
		_, err := e.svc.Run(ctx, "1", "ep", endpoint.RunRequest{})
		wantError(t, err, http.StatusBadGateway, "execution_failed", "query execution failed", "")
		require.ErrorIs(t, err, endpoint.ErrExecution, "not ErrExecution")
	})
	t.Run("SQLite error", func(t *testing.T) {
		// The query's own mistake is its author's to read (see
		// TestQueryErrorsAreTheAuthors), refused when it is saved.
		e := newEnv(t)
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "ep", Query: e.query("SELECT * FROM no_such_table")})
		wantError(t, err, http.StatusBadRequest, endpoint.CodeQueryError, "The database refused the query: no such table: no_such_table (line 1, column 15).", "query.query")
	})
	t.Run("timeout", func(t *testing.T) {
		var saved atomic.Bool
		e := newEnv(t, func(c *endpoint.Config) {
			c.Executor, c.RunTimeout = failingAfterSave(&saved, true), 20*time.Millisecond
		})
		e.create(t, "ep", e.query("SELECT 1"))
		saved.Store(true)
		_, err := e.svc.Run(ctx, "1", "ep", endpoint.RunRequest{})
		wantError(t, err, http.StatusGatewayTimeout, "timeout", "query timed out: it ran longer than run_timeout (20ms)", "")
		require.ErrorIs(t, err, endpoint.ErrTimeout)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		if e := asError(t, err); e.Limit != endpoint.LimitRunTimeout || e.LimitValue != 20 {
			t.Fatalf("limit %q %d, want run_timeout 20 (ms)", e.Limit, e.LimitValue)
		}
	})
	t.Run("caller deadline", func(t *testing.T) {
		var saved atomic.Bool
		e := newEnv(t, func(c *endpoint.Config) { c.Executor = failingAfterSave(&saved, true) })
		e.create(t, "ep", e.query("SELECT 1"))
		saved.Store(true)
		dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err := e.svc.Run(dctx, "1", "ep", endpoint.RunRequest{})
		wantError(t, err, http.StatusGatewayTimeout, "timeout", "query timed out", "")
	})
	t.Run("no last_executed_at on failure", func(t *testing.T) {
		var saved atomic.Bool
		e := newEnv(t, func(c *endpoint.Config) { c.Executor = failingAfterSave(&saved, false) })
		e.create(t, "ep", e.query("SELECT 1"))
		saved.Store(true)
		e.svc.Run(ctx, "1", "ep", endpoint.RunRequest{})
		got, _ := e.svc.Get(ctx, "1", "ep")
		require.Nil(t, got.LastExecutedAt, "a failed run was recorded at")
	})
}

func TestLastExecutedAt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ep := e.create(t, "ep", e.query("SELECT 1"))
	start := e.clock.Now()
	for i := 0; i < 5; i++ {
		_, err := run(e, "ep", nil)
		require.NoError(t, err)
		e.clock.Advance(100 * time.Millisecond)
	}
	require.NoError(t, e.svc.Flush(ctx))
	require.Equal(t, int64(1), e.eps.marks.Load(), "5 runs within a second wrote last_executed_at")
	got, _ := e.svc.Get(ctx, "1", "ep")
	require.NotNil(t, got.LastExecutedAt, "last_executed_at = %v, want %v", got.LastExecutedAt, start)
	require.True(t, got.LastExecutedAt.Equal(start), "last_executed_at = %v, want %v", got.LastExecutedAt, start)
	require.Equal(t, 1, got.CurrentVersion, "a run changed the endpoint: %+v", got)
	require.True(t, got.UpdatedAt.Equal(ep.UpdatedAt), "a run changed the endpoint: %+v", got)
	e.clock.Advance(time.Second)
	_, err := run(e, "ep", nil)
	require.NoError(t, err)
	got, _ = e.svc.Get(ctx, "1", "ep")
	if n := e.eps.marks.Load(); n != 2 || !got.LastExecutedAt.Equal(e.clock.Now()) {
		t.Fatalf("after a second: %d writes, last_executed_at %v; want 2, %v", n, got.LastExecutedAt, e.clock.Now())
	}

	// Every run writes when the resolution is negative (the background
	// writer keeps the latest mark of an endpoint among those queued at
	// once: each run is flushed here).
	e2 := newEnv(t, func(c *endpoint.Config) { c.ExecutedResolution = -1 })
	e2.create(t, "ep", e2.query("SELECT 1"))
	for i := 0; i < 3; i++ {
		run(e2, "ep", nil)
		require.NoError(t, e2.svc.Flush(ctx))
	}
	require.Equal(t, int64(3), e2.eps.marks.Load(), "with resolution -1")
}

// TestRunDoesNotRevalidate: runs of a saved version use the compiled query
// and the variables as validated; they do not read the variables again.
func TestRunDoesNotRevalidate(t *testing.T) {
	e := newEnv(t)
	e.create(t, "ep", e.query("SELECT id FROM orders WHERE country = {variables.country}", "country"))
	before := e.vstore.getMany.Load()
	for i := 0; i < 10; i++ {
		_, err := run(e, "ep", map[string]any{"country": "US"})
		require.NoError(t, err)
	}
	n := e.vstore.getMany.Load() - before
	require.Equal(t, int64(0), n, "10 runs read the variables")
}

// TestRunWithoutCache: with the cache off, every run compiles from the
// store and answers the same.
func TestRunWithoutCache(t *testing.T) {
	e := newEnv(t, func(c *endpoint.Config) { c.CacheSize = -1 })
	e.create(t, "ep", e.query("SELECT id FROM orders WHERE country = {variables.country} ORDER BY id", "country"))
	for i := 0; i < 3; i++ {
		res, err := run(e, "ep", map[string]any{"country": "US"})
		require.NoError(t, err, "run %d: %v", i, err)
		require.Equal(t, []int64{1, 3, 5}, ids(t, res), "run %d: %v", i, err)
	}
	require.GreaterOrEqual(t, e.vstore.getMany.Load(), int64(4), "with no cache, variables were read")
}

func TestRunConcurrent(t *testing.T) {
	e := newEnv(t)
	e.create(t, "ep", e.query("SELECT id FROM orders WHERE country = {variables.country} ORDER BY id", "country"))
	done := make(chan error)
	for i := 0; i < 8; i++ {
		go func() {
			for j := 0; j < 20; j++ {
				res, err := run(e, "ep", map[string]any{"country": "US"})
				// A run that joined another's has its rows as JSON.
				if err == nil && resultsJSON(t, res) != "[[1],[3],[5]]" {
					err = fmt.Errorf("got rows %s", resultsJSON(t, res))
				}
				if err != nil {
					done <- err
					return
				}
				e.clock.Advance(time.Millisecond * 300)
			}
			done <- nil
		}()
	}
	for i := 0; i < 8; i++ {
		err := <-done
		require.NoError(t, err)
	}
}

// TestRunResultJSON: an empty result encodes as empty arrays, not null.
func TestRunResultJSON(t *testing.T) {
	e := newEnv(t)
	e.create(t, "ep", e.query("SELECT id, country FROM orders WHERE country = {variables.country}", "country"))
	res, err := run(e, "ep", map[string]any{"country": "none"})
	require.NoError(t, err)
	require.NotEqual(t, "", res.ExecutionID, "no execution id or statistics: %+v", res)
	require.NotNil(t, res.Statistics, "no execution id or statistics: %+v", res)
	res.ExecutionID, res.Statistics.ElapsedMS = "x", 1.5
	b, _ := json.Marshal(res)
	want := `{"name":"ep","endpoint_version":1,"columns":["id","country"],"types":["INTEGER","TEXT"],"results":[],"hasMore":false,"endpoint_materialized":false,` +
		`"execution_id":"x","endpoint_version_created_at":"2025-06-01T12:00:00Z","is_cached":false,"last_refresh":"2025-06-01T12:00:00Z",` +
		`"statistics":{"elapsed_ms":1.5,"rows_read":null,"bytes_read":null}}`
	require.Equal(t, want, string(b), "JSON = %s", b)
}

// admitEnv is a Service on a settable clock with the SQL endpoints
// "mat" (materialized, no table yet) and "plain".
func admitEnv(t *testing.T) (*endpoint.Service, *endpointtest.Clock) {
	t.Helper()
	c := endpointtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	env := endpointtest.New(t, endpointtest.WithDemoEvents(100), endpointtest.WithConfig(func(cfg *endpoint.Config) { cfg.Now = c.Now }))
	svc := env.Service
	ctx := context.Background()
	for _, e := range []endpoint.CreateRequest{
		{Name: "mat", IsMaterialized: true, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: matSQL}},
		{Name: "plain", Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: matSQL}},
	} {
		_, err := svc.Create(ctx, "1", e)
		require.NoError(t, err, "Create %s", e.Name)
	}
	return svc, c
}

const matSQL = "SELECT event, count(*) AS n FROM events GROUP BY event"

// TestAdmitChargesWhatAnswers: admission's decision (Admission.Stored, the
// budget a key's run is charged to) is what answers the run
// (EndpointMaterialized) in every state of a materialized endpoint: no
// table, a fresh one, a new version without one, an older version, a
// stale table, refresh direct; and never for an endpoint that is not
// materialized.
func TestAdmitChargesWhatAnswers(t *testing.T) {
	svc, c := admitEnv(t)
	ctx := context.Background()
	host := endpoint.Caller{Project: "1"}
	check := func(step, name string, version int, refresh string, want bool) {
		t.Helper()
		req := endpoint.RunRequest{Refresh: refresh}
		if version > 0 {
			req.Version = &version
		}
		adm, err := svc.Admit(ctx, endpoint.Budgets{}, host, endpoint.Ask{Act: endpoint.ActRun, Endpoint: name, Run: &req})
		require.NoError(t, err, "%s: Admit", step)
		res, err := svc.Run(ctx, "1", name, req)
		require.NoError(t, err, "%s: Run", step)
		if assert.Equal(t, want, adm.Stored, "%s, %s version %d: charged as stored %v, answered from the table %v; want %v (inline reason %q)", step, name, version, adm.Stored, res.EndpointMaterialized, want, res.InlineReason) {
			assert.Equal(t, want, res.EndpointMaterialized, "%s, %s version %d: charged as stored %v, answered from the table %v; want %v (inline reason %q)", step, name, version, adm.Stored, res.EndpointMaterialized, want, res.InlineReason)
		}
	}
	check("no table", "mat", 0, "", false)
	check("not materialized", "plain", 0, "", false)
	require.NoError(t, svc.Materialize(ctx, "1", "mat"), "Materialize")
	check("fresh table", "mat", 0, "", true)
	check("fresh table", "mat", 1, "", true)
	check("fresh table, force", "mat", 0, endpoint.RefreshForce, true)
	check("fresh table, direct", "mat", 0, endpoint.RefreshDirect, true)
	v2 := &endpoint.Query{Kind: endpoint.KindSQL, SQL: strings.Replace(matSQL, "count(*)", "count(1)", 1)}
	_, err := svc.Update(ctx, "1", "mat", endpoint.UpdateRequest{Query: v2})
	require.NoError(t, err, "Update")
	c.Advance(2 * time.Second) // past RecheckInterval: runs see version 2
	check("version 2 without a table", "mat", 0, "", false)
	check("version 2 without a table, direct", "mat", 0, endpoint.RefreshDirect, false)
	require.NoError(t, svc.Materialize(ctx, "1", "mat"), "Materialize")
	check("version 2's table", "mat", 0, "", true)
	check("version 2's table", "mat", 2, "", true)
	check("older version", "mat", 1, "", false)
	check("older version, direct", "mat", 1, endpoint.RefreshDirect, false)
	c.Advance(48 * time.Hour)
	check("stale table", "mat", 0, "", false)
}

// TestAdmitOrder: admission decides who, then what, then which record,
// then which budget: a caller refused for any of the first three is never
// charged (the token's rpm, the key's budget and the project's slot are
// not asked), and a refusal names its reason, not a budget.
func TestAdmitOrder(t *testing.T) {
	svc, c := admitEnv(t)
	ctx := context.Background()
	keys, err := apikey.New(apikey.Config{Store: memstore.NewKeyStore(), Now: c.Now})
	require.NoError(t, err)
	mk := func(project string, scopes ...string) *apikey.Key {
		k, _, err := keys.Create(ctx, project, apikey.CreateRequest{Name: "k", Scopes: scopes, RunsPerMinute: 1, MaterializedRunsPerMinute: 1})
		require.NoError(t, err, "Keys.Create")
		return &k
	}
	reader, writer, other := mk("1", apikey.ScopeEndpointRead), mk("1", apikey.ScopeEndpointWrite), mk("2", apikey.Scopes...)
	var rated, slots, released int
	b := endpoint.Budgets{
		Keys:      keys,
		TokenRate: func(context.Context, *embed.Claims) error { rated++; return nil },
		Slot:      func(string) (func(), error) { slots++; return func() { released++ }, nil },
	}
	run := func(name string, version int) endpoint.Ask {
		req := endpoint.RunRequest{}
		if version != 0 {
			req.Version = &version
		}
		return endpoint.Ask{Act: endpoint.ActRun, Endpoint: name, Run: &req}
	}
	token := &embed.Claims{Project: "1", Endpoints: []string{"plain"}, RPM: 1}
	refused := []struct {
		what   string
		caller endpoint.Caller
		ask    endpoint.Ask
		status int
		says   string
	}{
		{"a key of another project", endpoint.Caller{Project: "1", Key: other}, run("plain", 0), http.StatusForbidden, "project '1'"},
		{"a token of another project", endpoint.Caller{Project: "2", Token: token}, run("plain", 0), http.StatusForbidden, "project '2'"},
		{"a key without the scope", endpoint.Caller{Project: "1", Key: writer}, run("plain", 0), http.StatusForbidden, apikey.ScopeEndpointRead},
		{"a query without query:run", endpoint.Caller{Project: "1", Key: reader}, endpoint.Ask{Act: endpoint.ActQuery}, http.StatusForbidden, apikey.ScopeQueryRun},
		{"a refresh without endpoint:write", endpoint.Caller{Project: "1", Key: reader}, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: "mat"}, http.StatusForbidden, apikey.ScopeEndpointWrite},
		{"a token's query", endpoint.Caller{Project: "1", Token: token}, endpoint.Ask{Act: endpoint.ActQuery}, http.StatusForbidden, "embed token"},
		{"a token's refresh", endpoint.Caller{Project: "1", Token: token}, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: "plain"}, http.StatusForbidden, "embed token"},
		{"an endpoint the token does not name", endpoint.Caller{Project: "1", Token: token}, run("mat", 0), http.StatusForbidden, "'mat'"},
		{"an unknown endpoint", endpoint.Caller{Project: "1", Key: reader}, run("nothing", 0), http.StatusNotFound, "nothing"},
		{"an unknown version", endpoint.Caller{Project: "1", Key: reader}, run("plain", 9), http.StatusNotFound, "Version 9"},
		{"a version below 1", endpoint.Caller{Project: "1", Key: reader}, run("plain", -1), http.StatusBadRequest, "Version must be a positive integer"},
		{"refresh direct of an endpoint not materialized", endpoint.Caller{Project: "1", Key: reader},
			endpoint.Ask{Act: endpoint.ActRun, Endpoint: "plain", Run: &endpoint.RunRequest{Refresh: endpoint.RefreshDirect}}, http.StatusBadRequest, "direct"},
		{"a refresh of an endpoint not materialized", endpoint.Caller{Project: "1", Key: writer}, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: "plain"}, http.StatusBadRequest, "not materialized"},
		{"a refresh of an unknown endpoint", endpoint.Caller{Project: "1", Key: writer}, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: "nothing"}, http.StatusNotFound, "nothing"},
		{"a token's save", endpoint.Caller{Project: "1", Token: token}, endpoint.Ask{Act: endpoint.ActSave, Endpoint: "plain", Update: &endpoint.UpdateRequest{}}, http.StatusForbidden, "embed token"},
		{"a save without endpoint:write", endpoint.Caller{Project: "1", Key: reader}, endpoint.Ask{Act: endpoint.ActSave, Endpoint: "mat", Update: &endpoint.UpdateRequest{}}, http.StatusForbidden, apikey.ScopeEndpointWrite},
		{"an update of an unknown endpoint", endpoint.Caller{Project: "1", Key: writer}, endpoint.Ask{Act: endpoint.ActSave, Endpoint: "nothing", Update: &endpoint.UpdateRequest{}}, http.StatusNotFound, "nothing"},
		{"a fixed variable the endpoint lacks", endpoint.Caller{Project: "1", Token: &embed.Claims{Project: "1", Endpoints: []string{"plain"}, Fixed: map[string]any{"team": 1}}},
			run("plain", 0), http.StatusForbidden, "team"},
	}
	for _, r := range refused {
		_, err := svc.Admit(ctx, b, r.caller, r.ask)
		var e *endpoint.Error
		if !errors.As(err, &e) || e.Status != r.status || !strings.Contains(e.Detail, r.says) {
			t.Errorf("%s: Admit = %v, want a %d saying %q", r.what, err, r.status, r.says)
		}
	}
	require.Equal(t, 0, rated, "refused asks were charged: token rpm %d, project slots %d", rated, slots)
	require.Equal(t, 0, slots, "refused asks were charged: token rpm %d, project slots %d", rated, slots)
	// Nor the keys' budgets: each key's one run of the minute is there.
	for _, k := range []struct {
		key *apikey.Key
		ask endpoint.Ask
	}{{reader, run("plain", 0)}, {writer, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: "mat"}}} {
		adm, err := svc.Admit(ctx, b, endpoint.Caller{Project: "1", Key: k.key}, k.ask)
		require.NoError(t, err, "the first ask of the minute")
		assert.False(t, adm.Stored, "charged as stored: a run of an endpoint not materialized, a refresh")
		adm.Release()
		adm.Release()
	}
	if assert.Equal(t, 2, slots, "slots taken %d, given back %d; want 2 and 2 (Release twice gives back once)", slots, released) {
		assert.Equal(t, 2, released, "slots taken %d, given back %d; want 2 and 2 (Release twice gives back once)", slots, released)
	}
	// A save that starts no refresh costs nothing, whatever the budget.
	on := true
	for _, save := range []endpoint.Ask{
		{Act: endpoint.ActSave, Endpoint: "plain", Update: &endpoint.UpdateRequest{Description: new(string)}},
		{Act: endpoint.ActSave, Endpoint: "mat", Update: &endpoint.UpdateRequest{IsMaterialized: &on}},
		{Act: endpoint.ActSave, Endpoint: "made", Create: &endpoint.CreateRequest{Name: "made"}},
	} {
		_, err := svc.Admit(ctx, b, endpoint.Caller{Project: "1", Key: writer}, save)
		assert.NoError(t, err, "a save that starts no refresh")
	}
	assert.Equal(t, 2, slots, "saves that start no refresh took %d slots", slots-2)
	// A refresh took the writer's inline budget.
	_, err = svc.Admit(ctx, b, endpoint.Caller{Project: "1", Key: writer}, endpoint.Ask{Act: endpoint.ActRefresh, Endpoint: "mat"})
	var e *endpoint.Error
	if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests || e.Limit != apikey.LimitRunsPerMinute {
		t.Errorf("a second refresh in the minute: %v, want a 429 of %s", err, apikey.LimitRunsPerMinute)
	}
	// A token's run is counted against its rpm, and carries its
	// credentials, whatever the request held.
	req := endpoint.RunRequest{KeyID: "forged", Fixed: map[string]any{"x": 1}}
	if _, err := svc.Admit(ctx, b, endpoint.Caller{Project: "1", Token: token}, endpoint.Ask{Act: endpoint.ActRun, Endpoint: "plain", Run: &req}); err != nil {
		t.Fatalf("a token's run: %v", err)
	}
	if rated != 1 || req.Token != token || req.KeyID != "" || req.Fixed != nil {
		t.Errorf("a token's run: rpm counted %d, request token %v key %q fixed %v; want 1, the token, none, none", rated, req.Token, req.KeyID, req.Fixed)
	}
}

// recordReads counts the reads of an endpoint's record.
type recordReads struct {
	driver.Store
	gets atomic.Int64
}

func (s *recordReads) Get(ctx context.Context, project, name string) (driver.Endpoint, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, project, name)
}

// handoffEnv is a Service that reads an endpoint's record on every run
// (RecheckInterval negative), with the SQL endpoint "count" of one
// string variable, and the count of the record's reads.
func handoffEnv(t *testing.T) (*endpoint.Service, *recordReads) {
	t.Helper()
	store := &recordReads{}
	env := endpointtest.New(t, endpointtest.WithDemoEvents(100), endpointtest.WithConfig(func(cfg *endpoint.Config) {
		cfg.RecheckInterval = -1
		store.Store = cfg.Endpoints
		cfg.Endpoints = store
	}))
	svc := env.Service
	ctx := context.Background()
	_, err := svc.CreateVariable(ctx, "1", variable.Variable{ID: "6f1c2f8e-3a4b-4c5d-8e9f-0a1b2c3d4e5f", Name: "name", Type: variable.String})
	require.NoError(t, err)
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "count", Query: &endpoint.Query{
		Kind: endpoint.KindSQL, SQL: "SELECT count(*) AS n FROM events WHERE event = {variables.name}",
		Variables: map[string]endpoint.VariableRef{"6f1c2f8e-3a4b-4c5d-8e9f-0a1b2c3d4e5f": {VariableID: "6f1c2f8e-3a4b-4c5d-8e9f-0a1b2c3d4e5f", CodeName: "name"}},
	}})
	require.NoError(t, err)
	return svc, store
}

// TestAdmitHandsTheRunOver: the Run given the request Admit filled in
// goes on from Admit's work: the endpoint's record is read once for both,
// not once by each; and the answer is the one a run alone gives.
func TestAdmitHandsTheRunOver(t *testing.T) {
	svc, store := handoffEnv(t)
	ctx := context.Background()
	alone, err := svc.Run(ctx, "1", "count", endpoint.RunRequest{Variables: map[string]any{"name": "purchase"}})
	require.NoError(t, err)

	req := endpoint.RunRequest{Variables: map[string]any{"name": "purchase"}}
	before := store.gets.Load()
	adm, err := svc.Admit(ctx, endpoint.Budgets{}, endpoint.Caller{Project: "1"}, endpoint.Ask{Act: endpoint.ActRun, Endpoint: "count", Run: &req})
	require.NoError(t, err)
	defer adm.Release()
	res, err := svc.Run(ctx, "1", "count", req)
	require.NoError(t, err)
	assert.Equal(t, int64(1), store.gets.Load()-before, "Admit and Run read the record once between them")
	assert.Equal(t, alone.Results, res.Results)
	assert.Equal(t, alone.Columns, res.Columns)
}

// TestAdmitHandoffOnlyForTheSameRun: what Admit prepared serves one run
// of the same request, project and endpoint only: a second run of the
// request, a request whose values changed, and a run of another endpoint
// prepare anew, and answer for what they ask.
func TestAdmitHandoffOnlyForTheSameRun(t *testing.T) {
	svc, store := handoffEnv(t)
	ctx := context.Background()
	admit := func(req *endpoint.RunRequest) {
		t.Helper()
		adm, err := svc.Admit(ctx, endpoint.Budgets{}, endpoint.Caller{Project: "1"}, endpoint.Ask{Act: endpoint.ActRun, Endpoint: "count", Run: req})
		require.NoError(t, err)
		adm.Release()
	}
	count := func(req endpoint.RunRequest) int64 {
		t.Helper()
		res, err := svc.Run(ctx, "1", "count", req)
		require.NoError(t, err)
		return res.Results.([][]any)[0][0].(int64)
	}
	purchases := count(endpoint.RunRequest{Variables: map[string]any{"name": "purchase"}})
	signups := count(endpoint.RunRequest{Variables: map[string]any{"name": "signed_up"}})
	require.NotEqual(t, purchases, signups)

	req := endpoint.RunRequest{Variables: map[string]any{"name": "purchase"}}
	admit(&req)
	assert.Equal(t, purchases, count(req))
	before := store.gets.Load()
	assert.Equal(t, purchases, count(req), "a second run of the request")
	assert.Equal(t, int64(1), store.gets.Load()-before, "the second run reads the record itself")

	admit(&req)
	changed := req
	changed.Variables = map[string]any{"name": "signed_up"}
	assert.Equal(t, signups, count(changed), "a request whose values changed after Admit")

	admit(&req)
	_, err := svc.Run(ctx, "1", "nope", req)
	require.Error(t, err, "a run of another endpoint is that endpoint's")
	assert.Equal(t, 404, endpoint.StatusOf(err))
}

// BenchmarkRunOverhead measures the library's own cost per run: a full
// Service.Run (options, endpoint look-up in the MemoryStore, cached compiled
// version, three variables checked and coerced, paging, rendering, result
// shaping, last_executed_at throttle) over an executor that returns fixed
// rows without doing any work.
func BenchmarkRunOverhead(b *testing.B) {
	fx := heldexec.NewFake(nil, heldexec.Unrecorded(), heldexec.Answer(&driver.Result{
		Columns: []string{"day", "orders", "revenue"},
		Types:   []string{"TEXT", "INTEGER", "REAL"},
		Rows:    [][]any{{"2025-05-01", int64(12), 340.5}, {"2025-05-02", int64(9), 120.0}, {"2025-05-03", int64(15), 512.25}},
	}))
	e := newEnv(b, func(c *endpoint.Config) { c.Executor = fx })
	e.create(b, "daily", e.query(
		"SELECT substr(created, 1, 10) AS day, count(*) AS orders, sum(amount) AS revenue FROM orders "+
			"WHERE country = {variables.country} AND amount >= {variables.min_amount} AND created >= {variables.from} "+
			"GROUP BY day ORDER BY day", "country", "min_amount", "from"))
	ctx := context.Background()
	req := endpoint.RunRequest{Variables: map[string]any{"country": "US", "min_amount": "10", "from": "2025-05-01"}}
	_, err := e.svc.Run(ctx, "1", "daily", req)
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := e.svc.Run(ctx, "1", "daily", req)
		if err != nil || res.HasMore {
			b.Fatal(err)
		}
	}
}

// slowGets is a store whose reads return a while after they read, so that
// a run's read of an endpoint overlaps the writes of another goroutine.
type slowGets struct{ driver.Store }

func (s slowGets) Get(ctx context.Context, project, name string) (driver.Endpoint, error) {
	e, err := s.Store.Get(ctx, project, name)
	time.Sleep(100 * time.Microsecond)
	return e, err
}

// TestRunsDuringWrites: while runs go on in other goroutines, every write
// of the endpoint is seen by the next run of the goroutine that wrote it:
// a run that read the old record or compiled the old version while the
// write went through does not put it back in the cache.
func TestRunsDuringWrites(t *testing.T) {
	e := newEnv(t, func(c *endpoint.Config) { c.Endpoints = slowGets{c.Endpoints} })
	ctx := context.Background()
	e.create(t, "ep", e.query("SELECT 0 AS v"))
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := run(e, "ep", nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 1; i <= 40; i++ {
		q := e.query(fmt.Sprintf("SELECT %d AS v", i))
		if _, err := e.svc.Update(ctx, "1", "ep", endpoint.UpdateRequest{Query: q}); err != nil {
			t.Fatal(err)
		}
		res, err := run(e, "ep", nil)
		require.NoError(t, err)
		// The run may have joined another goroutine's run of the new
		// version, whose answer it has as JSON.
		got := resultsJSON(t, res)
		require.Equal(t, i+1, res.EndpointVersion, "after update %d: version %d results %s", i, res.EndpointVersion, got)
		require.Equal(t, fmt.Sprintf("[[%d]]", i), got, "after update %d: version %d results %s", i, res.EndpointVersion, got)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// wrappedOnly is an executor whose engine does not stop early
// (engine.Engine.StopsEarly), so that every run pages through the wrapper,
// as before runs could go unwrapped.
type wrappedOnly struct{ driver.Executor }

func (x wrappedOnly) Engine() engine.Engine { return computesAll{x.Executor.Engine()} }

// computesAll is an engine that computes every row of a result whether
// or not they are read.
type computesAll struct{ engine.Engine }

func (computesAll) StopsEarly() bool { return false }

// TestDirectRunsAnswerAsWrapped: a run that reads a plain SELECT as written,
// stopping after limit+1 rows, answers exactly what the run through the
// paging wrapper answers (rows, hasMore, columns and types), for every
// limit and offset; only plain SELECTs without an offset skip the wrapper.
func TestDirectRunsAnswerAsWrapped(t *testing.T) {
	e := newEnv(t)
	wrapped, err := endpoint.New(endpoint.Config{
		Endpoints: e.eps, Variables: e.vstore, Executor: wrappedOnly{sqlexec.New(e.db, engine.SQLite)}, Now: e.clock.Now,
	})
	require.NoError(t, err)
	queries := []struct {
		sql    string
		vars   []string
		values map[string]any
		direct bool
	}{
		{"SELECT id, country FROM orders ORDER BY id", nil, nil, true},
		{"SELECT country, count(*) AS n, sum(amount) AS s, max(created) AS last FROM orders GROUP BY country ORDER BY n DESC, country", nil, nil, true},
		{"SELECT * FROM orders WHERE amount > {variables.min_amount} ORDER BY amount", []string{"min_amount"}, map[string]any{"min_amount": 5}, true},
		{"SELECT id FROM orders WHERE plan IN ({variables.plans}) ORDER BY id", []string{"plans"}, map[string]any{"plans": []any{"pro", "free"}}, true},
		{"SELECT id, NULL AS z, amount * 2 AS a2, paid = 1 AS p FROM orders ORDER BY id LIMIT 4", nil, nil, true},
		{"SELECT 1", nil, nil, true},
		{"-- newest first\nSELECT id FROM orders ORDER BY id DESC; -- done", nil, nil, true},
		{"SELECT id FROM orders WHERE 0", nil, nil, true},
		{"SELECT NULL AS n FROM orders", nil, nil, true},
		{"WITH x AS (SELECT id FROM orders) SELECT * FROM x ORDER BY id", nil, nil, false},
	}
	ctx := context.Background()
	for i, q := range queries {
		name := fmt.Sprintf("q%d", i)
		e.create(t, name, e.query(q.sql, q.vars...))
		for _, limit := range []int{0, 1, 2, 5, 6, 7, 100} {
			for _, offset := range []*int{nil, ptr(0), ptr(2)} {
				req := endpoint.RunRequest{Variables: q.values, Limit: ptr(limit), Offset: offset, Debug: true}
				got, err := e.svc.Run(ctx, "1", name, req)
				require.NoError(t, err, "%s limit %d", q.sql, limit)
				want, err := wrapped.Run(ctx, "1", name, req)
				require.NoError(t, err)
				where := fmt.Sprintf("%q limit %d offset %v", q.sql, limit, offset)
				if !reflect.DeepEqual(got.Results, want.Results) || got.HasMore != want.HasMore ||
					!slices.Equal(got.Columns, want.Columns) || !slices.Equal(got.Types, want.Types) {
					t.Fatalf("%s: direct %v %v %q %q, wrapped %v %v %q %q", where,
						got.Results, got.HasMore, got.Columns, got.Types, want.Results, want.HasMore, want.Columns, want.Types)
				}
				isDirect := !strings.HasPrefix(got.Debug.SQL, "SELECT * FROM (\n")
				wantDirect := q.direct && (offset == nil || *offset == 0)
				assert.Equal(t, wantDirect, isDirect, "%s: ran %q, unwrapped", where, got.Debug.SQL)
				assert.True(t, strings.HasPrefix(want.Debug.SQL, "SELECT * FROM (\n"), "%s: the wrapped-only Service ran %q", where, want.Debug.SQL)
			}
		}
	}
}

// TestDirectRunColumnNames: through the wrapper SQLite renames a column
// whose name repeats ("id:1"); run as written, the engine names it as the
// query does, but the answer has the names the version was saved with (the
// description at save runs through the wrapper), whichever way it ran.
func TestDirectRunColumnNames(t *testing.T) {
	e := newEnv(t)
	e.create(t, "dup", e.query("SELECT o.id, p.id FROM orders o JOIN orders p ON p.id = o.id ORDER BY o.id"))
	got, err := run(e, "dup", nil)
	require.NoError(t, err, "direct: %q, %v", got.Columns, err)
	require.True(t, slices.Equal(got.Columns, []string{"id", "id:1"}), "direct: %q, %v", got.Columns, err)
	got, err = e.svc.Run(context.Background(), "1", "dup", endpoint.RunRequest{Offset: ptr(1)})
	require.NoError(t, err, "wrapped: %q, %v", got.Columns, err)
	require.True(t, slices.Equal(got.Columns, []string{"id", "id:1"}), "wrapped: %q, %v", got.Columns, err)
}

func ptr[T any](v T) *T { return &v }

// TestDirectRunsOnlySelect: statements that are not a plain SELECT still go
// through the wrapper, which SQLite refuses for anything but a query, so a
// saved DELETE or INSERT fails instead of writing.
func TestDirectRunsOnlySelect(t *testing.T) {
	e := newEnv(t)
	for i, sql := range []string{
		"DELETE FROM orders WHERE id = 1",
		"WITH x AS (SELECT 1) DELETE FROM orders WHERE id = 2",
		"INSERT INTO orders SELECT 7, country, plan, amount, paid, created FROM orders WHERE id = 1 RETURNING id",
		"UPDATE orders SET amount = 0 RETURNING id",
		"SELECT * INTO copy FROM orders",
	} {
		name := fmt.Sprintf("w%d", i)
		if _, err := e.svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: name, Query: e.query(sql)}); err != nil {
			continue // refused at save: fine too
		}
		_, err := run(e, name, nil)
		assert.Error(t, err, "%q ran", sql)
	}
	var n int
	var sum float64
	if err := e.db.QueryRow("SELECT count(*), sum(amount) FROM orders").Scan(&n, &sum); err != nil || n != 6 || sum != 154.5 {
		t.Fatalf("orders changed: %d rows, amount %v, %v", n, sum, err)
	}
}

// requireForbidden requires err to be a 403 *endpoint.Error about attr
// whose detail holds each of subs.
func requireForbidden(t *testing.T, err error, attr string, subs ...string) {
	t.Helper()
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, http.StatusForbidden, e.Status, e.Detail)
	require.Equal(t, endpoint.CodeForbidden, e.Code, e.Detail)
	require.Equal(t, attr, e.Attr, e.Detail)
	for _, sub := range subs {
		assert.Contains(t, e.Detail, sub)
	}
}

// TestMintEmbedTokenAsNeverWidens: a token minted on behalf of a credential
// runs only endpoints it may use, needs its scope endpoint:read, fixes
// every variable it fixes to the same value, and carries an rpm within
// its per-minute budgets (inline and materialized) and, 60 times over,
// its per-hour ones; one asked without rpm gets the credential's bound,
// never none. The host (no Grant) mints any.
func TestMintEmbedTokenAsNeverWidens(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	for _, name := range []string{"a", "b"} {
		e.create(t, name, e.query("SELECT id FROM orders WHERE country = {variables.country} AND plan = {variables.plan}", "country", "plan"))
	}
	tk := &embed.StaticKeys{}
	require.NoError(t, tk.Add("", "k", []byte(strings.Repeat("s", 32))))
	signer := &embed.Signer{Keys: tk}
	keyGrant := func(scopes []string, endpoints []string, rpm, rph, mrpm, mrph int) *apikey.Grant {
		k := apikey.Key{Scopes: scopes, Endpoints: endpoints, RunsPerMinute: rpm, RunsPerHour: rph, MaterializedRunsPerMinute: mrpm, MaterializedRunsPerHour: mrph}
		g := k.Grant()
		return &g
	}
	read := []string{apikey.ScopeKeyAdmin, apikey.ScopeEndpointRead}
	mint := func(by *apikey.Grant, c embed.Claims) (embed.Claims, error) {
		token, minted, err := e.svc.MintEmbedTokenAs(ctx, signer, "1", by, c, time.Hour)
		if err != nil {
			return minted, err
		}
		got, err := signer.Verify(token, "1")
		require.NoError(t, err, "the minted token does not verify")
		require.Equal(t, minted.RPM, got.RPM, "the token carries rpm")
		return *got, nil
	}
	oneEndpoint := keyGrant(read, []string{"a"}, 1, 1000, 1000, 1000)
	for _, c := range []struct {
		name   string
		by     *apikey.Grant
		claims embed.Claims
		attr   string
		sub    string
	}{
		{"another endpoint", oneEndpoint, embed.Claims{Endpoints: []string{"a", "b"}, RPM: 1}, "endpoints", "'b'"},
		{"no endpoint:read", keyGrant([]string{apikey.ScopeKeyAdmin}, nil, -1, -1, -1, -1), embed.Claims{Endpoints: []string{"a"}}, "endpoints", "'endpoint:read'"},
		{"rpm", oneEndpoint, embed.Claims{Endpoints: []string{"a"}, RPM: 2}, "rpm", "This API key may start 1 run answered inline per minute (runs_per_minute 1); the embed token it mints may not allow more (rpm 2)."},
		{"rpm over materialized_runs_per_minute", keyGrant(read, nil, -1, -1, 3, -1), embed.Claims{Endpoints: []string{"a"}, RPM: 4}, "rpm", "(materialized_runs_per_minute 3)"},
		{"rpm over runs_per_hour", keyGrant(read, nil, -1, 120, -1, -1), embed.Claims{Endpoints: []string{"a"}, RPM: 3}, "rpm", "(rpm 3 = 180 runs per hour)"},
		{"rpm over materialized_runs_per_hour", keyGrant(read, nil, -1, -1, -1, 60), embed.Claims{Endpoints: []string{"a"}, RPM: 2}, "rpm", "materialized_runs_per_hour 60"},
		{"an hour under 60 runs", keyGrant(read, nil, -1, 59, -1, -1), embed.Claims{Endpoints: []string{"a"}}, "rpm", "(rpm 1 = 60 runs per hour)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := mint(c.by, c.claims)
			requireForbidden(t, err, c.attr, c.sub)
		})
	}
	// Within it; without rpm, the bound of the key.
	for _, c := range []struct {
		by      *apikey.Grant
		claims  embed.Claims
		wantRPM int
	}{
		{oneEndpoint, embed.Claims{Endpoints: []string{"a"}, RPM: 1}, 1},
		{oneEndpoint, embed.Claims{Endpoints: []string{"a"}}, 1},
		{keyGrant(read, nil, 240, 2400, 1200, 12000), embed.Claims{Endpoints: []string{"a", "b"}}, 40},
		{keyGrant(read, nil, 240, 2400, 1200, 12000), embed.Claims{Endpoints: []string{"a", "b"}, RPM: 40}, 40},
		{keyGrant(read, nil, -1, -1, 7, -1), embed.Claims{Endpoints: []string{"a"}}, 7},
		{keyGrant(read, nil, -1, -1, -1, -1), embed.Claims{Endpoints: []string{"a"}}, 0},
		{nil, embed.Claims{Endpoints: []string{"a", "b"}}, 0},
		{nil, embed.Claims{Endpoints: []string{"a", "b"}, RPM: embed.MaxRPM}, embed.MaxRPM},
	} {
		got, err := mint(c.by, c.claims)
		require.NoError(t, err, "%+v", c.claims)
		assert.Equal(t, c.wantRPM, got.RPM, "%+v from %+v: rpm", c.claims, c.by)
	}

	// Fixed variables: a token's Grant (a host that lets a token ask for a
	// narrower one) gives only tokens that fix what it fixes, alike.
	parent := apikey.TokenGrant(embed.Claims{Endpoints: []string{"a"}, Fixed: map[string]any{"country": "US"}, RPM: 5})
	for name, fixed := range map[string]map[string]any{
		"not fixed":       nil,
		"another value":   {"country": "DE"},
		"another name":    {"plan": "pro"},
		"another spelled": {"Country": "US"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := mint(&parent, embed.Claims{Endpoints: []string{"a"}, Fixed: fixed, RPM: 5})
			requireForbidden(t, err, "fixed", "fixes variable 'country'")
		})
	}
	got, err := mint(&parent, embed.Claims{Endpoints: []string{"a"}, Fixed: map[string]any{"country": "US", "plan": "pro"}})
	require.NoError(t, err, "a narrower token")
	if got.RPM != 5 || got.Fixed["country"] != "US" {
		t.Errorf("a narrower token: %+v", got)
	}
	_, err = mint(&parent, embed.Claims{Endpoints: []string{"a"}, Fixed: map[string]any{"country": "US"}, RPM: 6})
	requireForbidden(t, err, "rpm", "(rpm 6)")
	_, err = mint(&parent, embed.Claims{Endpoints: []string{"b"}, Fixed: map[string]any{"country": "US"}})
	requireForbidden(t, err, "endpoints", "This embed token may not use endpoint 'b'")

	// A bad rpm is a 400 before any grant.
	_, err = mint(oneEndpoint, embed.Claims{Endpoints: []string{"a"}, RPM: -1})
	var ee *endpoint.Error
	if !errors.As(err, &ee) || ee.Status != http.StatusBadRequest || ee.Attr != "rpm" {
		t.Errorf("rpm -1: got %v, want a 400 naming rpm", err)
	}
}

// dailyPurchasesPG is dailyPurchases as a PostgreSQL user writes it.
const dailyPurchasesPG = `SELECT substr(timestamp, 1, 10) AS day, count(*) AS purchases, sum(amount) AS revenue
FROM (SELECT timestamp, json_extract_path_text(CAST(properties AS json), 'country') AS country,
             CAST(json_extract_path_text(CAST(properties AS json), 'amount') AS decimal) AS amount
      FROM events WHERE event = 'purchase') AS p
WHERE country = {variables.country} AND timestamp >= {variables.from} AND timestamp < {variables.to}
GROUP BY day ORDER BY day`

// trendsPGBench is daily $pageview by $browser over 30 days.
const trendsPGBench = `{"kind":"TrendsQuery","series":[{"kind":"EventsNode","event":"$pageview"}],"interval":"day",
	"dateRange":{"date_from":"2025-05-02","date_to":"2025-05-31"},"breakdownFilter":{"breakdown":"$browser","breakdown_type":"event"}}`

// pgBench is a Service on PostgreSQL over 1,000,000 demo events, with the
// daily purchases query and the trends query each saved inline and
// materialized. It is built once, by the first benchmark that needs it.
var pgBench struct {
	once sync.Once
	svc  *endpoint.Service
	err  error
}

func pgBenchService(b *testing.B) *endpoint.Service {
	b.Helper()
	dsn := testdb.PostgresDSN(b)
	pgBench.once.Do(func() { pgBench.svc, pgBench.err = newPGBenchService(dsn) })
	require.NoError(b, pgBench.err)
	return pgBench.svc
}

func newPGBenchService(dsn string) (*endpoint.Service, error) {
	ctx := context.Background()
	db, err := sqlexec.Open("pgx", dsn, engine.PostgreSQL)
	if err != nil {
		return nil, err
	}
	for _, stmt := range demo.SchemaFor(engine.PostgreSQL) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return nil, err
		}
	}
	if err := demo.Insert(ctx, db, engine.PostgreSQL, "1", matBenchEvents, 7); err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, "ANALYZE events"); err != nil {
		return nil, err
	}
	trends := &endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(trendsPGBench)}
	return newBenchService(sqlexec.New(db, engine.PostgreSQL), dailyPurchasesPG, func(q *endpoint.Query) []benchEndpoint {
		return []benchEndpoint{{"inline", q, false}, {"daily", q, true}, {"trends_inline", trends, false}, {"trends", trends, true}}
	})
}

func benchPG(b *testing.B, svc *endpoint.Service, name string, req endpoint.RunRequest, materialized bool) {
	ctx := context.Background()
	for b.Loop() {
		res, err := svc.Run(ctx, "1", name, req)
		if err != nil {
			var e *endpoint.Error
			require.False(b, errors.As(err, &e), "%v: %v", err, e.Err)
			b.Fatal(err)
		}
		require.Equal(b, materialized, res.EndpointMaterialized, "%s: materialized", name)
	}
}

// BenchmarkPostgres runs the daily purchases endpoint and the trends
// endpoint on 1,000,000 demo events in PostgreSQL (ENDPOINTKIT_TEST_POSTGRES),
// inline and from their materialized tables.
func BenchmarkPostgres(b *testing.B) {
	// The database lives as long as this benchmark, not a sub-benchmark.
	svc := pgBenchService(b)
	browser := endpoint.RunRequest{Variables: map[string]any{"$browser": "Chrome"}}
	b.Run("sql/inline", func(b *testing.B) { benchPG(b, svc, "inline", matBenchRequest, false) })
	b.Run("sql/materialized", func(b *testing.B) { benchPG(b, svc, "daily", matBenchRequest, true) })
	b.Run("trends/inline", func(b *testing.B) { benchPG(b, svc, "trends_inline", browser, false) })
	b.Run("trends/materialized", func(b *testing.B) { benchPG(b, svc, "trends", browser, true) })
}

// verdictOf is what a run answered, as the rules decide it: the status and
// the code and detail of a refusal; the data itself is not compared.
func verdictOf(err error) string {
	if err == nil {
		return "200"
	}
	var e *endpoint.Error
	if !errors.As(err, &e) {
		return "error " + err.Error()
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Detail)
}

// TestRulesByState is the rules-by-state matrix: for SQL, Trends and
// Retention endpoints, inline and then materialized (and inline again),
// each request is answered alike with refresh cache (after the same request
// filled the cache, or not), force and direct: a request the rules of the
// endpoint's state refuse is refused whatever is cached. A cached answer of
// an insight run made inline was given to the same request once the
// endpoint was materialized, while force refused it ("Unknown variable(s):
// date_from").
func TestRulesByState(t *testing.T) {
	env := endpointtest.New(t, endpointtest.WithDemoEvents(400), endpointtest.WithConfig(func(c *endpoint.Config) {
		c.ResultCache = memstore.NewResultCache(1 << 20)
	}))
	ctx := context.Background()
	svc, p := env.Service, env.Project
	v, err := svc.CreateVariable(ctx, p, variable.Variable{Name: "Event", Type: variable.String})
	require.NoError(t, err)
	d, err := svc.CreateVariable(ctx, p, variable.Variable{Name: "From", Type: variable.Date})
	require.NoError(t, err)
	limit := 5
	type request struct {
		name string
		req  endpoint.RunRequest
	}
	vars := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	kinds := []struct {
		name     string
		query    endpoint.Query
		requests []request
	}{
		{"sql", endpoint.Query{Kind: endpoint.KindSQL,
			SQL:       "SELECT event, count(*) AS n FROM events WHERE event = {variables.event} AND timestamp >= {variables.from} GROUP BY event",
			Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID}, d.ID: {VariableID: d.ID}}},
			[]request{
				{"valid", endpoint.RunRequest{Variables: vars("event", "purchase", "from", "2025-04-01")}},
				{"missing", endpoint.RunRequest{Variables: vars("event", "purchase")}},
				{"unknown", endpoint.RunRequest{Variables: vars("event", "purchase", "from", "2025-04-01", "nope", 1)}},
				{"wrong type", endpoint.RunRequest{Variables: vars("event", "purchase", "from", "yesterday-ish")}},
				{"limit", endpoint.RunRequest{Variables: vars("event", "purchase", "from", "2025-04-01"), Limit: &limit}},
			}},
		{"trends", endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"kind": "TrendsQuery",
			"series": [{"kind": "EventsNode", "event": "$pageview"}], "interval": "day",
			"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-10"},
			"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`)},
			[]request{
				{"empty", endpoint.RunRequest{Variables: vars()}},
				{"breakdown", endpoint.RunRequest{Variables: vars("$browser", "Chrome")}},
				{"dates", endpoint.RunRequest{Variables: vars("date_from", "2025-05-03")}},
				{"breakdown and dates", endpoint.RunRequest{Variables: vars("$browser", "Chrome", "date_from", "2025-05-03")}},
				{"unknown", endpoint.RunRequest{Variables: vars("$browser", "Chrome", "nope", "x")}},
				{"wrong type", endpoint.RunRequest{Variables: vars("$browser", "Chrome", "date_from", "not a date")}},
				{"limit", endpoint.RunRequest{Variables: vars("$browser", "Chrome"), Limit: &limit}},
			}},
		{"retention", endpoint.Query{Kind: endpoint.KindRetention, Insight: []byte(`{"kind": "RetentionQuery",
			"retentionFilter": {"period": "Day", "totalIntervals": 5,
				"targetEntity": {"id": "$pageview", "type": "events"}, "returningEntity": {"id": "$pageview", "type": "events"}},
			"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-10"},
			"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`)},
			[]request{
				{"empty", endpoint.RunRequest{Variables: vars()}},
				{"breakdown", endpoint.RunRequest{Variables: vars("$browser", "Chrome")}},
				{"dates", endpoint.RunRequest{Variables: vars("$browser", "Chrome", "date_to", "2025-05-08")}},
				{"unknown", endpoint.RunRequest{Variables: vars("$browser", "Chrome", "nope", "x")}},
			}},
	}
	cases, stored := 0, 0
	for _, k := range kinds {
		q := k.query
		_, err := svc.Create(ctx, p, endpoint.CreateRequest{Name: k.name, Query: &q})
		require.NoError(t, err)
		for _, state := range []string{"inline", "materialized", "inline again"} {
			if state != "inline" {
				on := state == "materialized"
				_, err := svc.Update(ctx, p, k.name, endpoint.UpdateRequest{IsMaterialized: &on})
				require.NoError(t, err, "%v", k.name)
				if on {
					require.NoError(t, svc.Materialize(ctx, p, k.name), "%v", k.name)
				}
			}
			for _, r := range k.requests {
				run := func(refresh string) string {
					req := r.req
					req.Refresh = refresh
					adm, admErr := svc.Admit(ctx, endpoint.Budgets{}, endpoint.Caller{Project: p}, endpoint.Ask{Act: endpoint.ActRun, Endpoint: k.name, Run: &req})
					res, err := svc.Run(ctx, p, k.name, req)
					chargedAsAnswered(t, fmt.Sprintf("%s %s, %s, refresh %q", k.name, state, r.name, refresh), adm, admErr, res, err)
					if err == nil && res.EndpointMaterialized {
						stored++
					}
					return verdictOf(err)
				}
				// Cached first (the cache may hold this request's answer
				// of an earlier state), then computed, then cached again.
				cached := run("")
				forced := run(endpoint.RefreshForce)
				again := run(endpoint.RefreshCache)
				what := fmt.Sprintf("%s %s, %s", k.name, state, r.name)
				got, want := cached, forced
				require.Equal(t, want, got, "%s: from the cache (before force): cached", what)
				if got, want := again, forced; got != want {
					t.Fatalf("%s: from the cache (after force): again = %q, want %q", what, got, want)
				}
				if state == "materialized" {
					got, want := run(endpoint.RefreshDirect), forced
					require.Equal(t, want, got, "%s: direct: run(endpoint.RefreshDirect)", what)
				}
				cases++
			}
		}
	}
	got, want := cases, 3*(5+7+4)
	require.Equal(t, want, got, "cases")
	require.NotEqual(t, 0, stored, "no run read a stored table: the budget dimension checked nothing")
}

// chargedAsAnswered is the budget dimension of the rules matrix: the
// budget admission charges a run to (Service.Admit's Stored: the
// materialized budget or the inline one) is the one of what answered it
// (EndpointMaterialized), and admission refuses what the run refuses (the
// rules of the endpoint's state), alike, before any budget is charged.
func chargedAsAnswered(t *testing.T, what string, adm endpoint.Admission, admErr error, res *endpoint.RunResult, err error) {
	t.Helper()
	if admErr != nil {
		got, want := verdictOf(err), verdictOf(admErr)
		assert.Equal(t, want, got, "%s: admission refused", what)
		return
	}
	if err != nil {
		t.Errorf("%s: admitted, and the run refused %q", what, verdictOf(err))
		return
	}
	assert.Equal(t, res.EndpointMaterialized, adm.Stored, "%s: charged as stored", what)
}
