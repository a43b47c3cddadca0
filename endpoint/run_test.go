package endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/require"
)

// fixedExecutor answers every query with the same result, or err, and
// remembers the last query.
type fixedExecutor struct {
	res       *driver.Result
	err       error
	lastQuery string
	lastArgs  []any
}

func (f *fixedExecutor) Engine() engine.Engine { return engine.SQLite }

func (f *fixedExecutor) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	f.lastQuery, f.lastArgs = st.SQL(), st.Args()
	if f.err != nil {
		return nil, f.err
	}
	return f.res, nil
}

func (f *fixedExecutor) Exec(ctx context.Context, stmts []driver.Statement, tx driver.Write) error {
	return f.err
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
	fx := &fixedExecutor{res: &driver.Result{Columns: []string{"n"}, Types: []string{"INTEGER"}, Rows: [][]any{{int64(1)}}}}
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
	require.Equal(t, want, fx.lastArgs, "args")
	require.Len(t, want, strings.Count(fx.lastQuery, "?"), "query %q has not one marker per argument", fx.lastQuery)
}

type errExecutor struct {
	fixedExecutor
	wait bool
	// saved: the endpoints were created, the queries from now on fail (a
	// save checks its query with the engine, which must answer then).
	saved atomic.Bool
}

func (x *errExecutor) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	if !x.saved.Load() {
		return &driver.Result{}, nil
	}
	if x.wait {
		<-ctx.Done()
		return nil, fmt.Errorf("driver: interrupted: %w", ctx.Err())
	}
	return nil, errors.New("pq: relation \"secret_table\" does not exist at 10.0.0.7")
}

func TestRunExecutionErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("executor failure", func(t *testing.T) {
		x := &errExecutor{}
		e := newEnv(t, func(c *endpoint.Config) { c.Executor = x })
		e.create(t, "ep", e.query("SELECT 1"))
		x.saved.Store(true)
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
		x := &errExecutor{wait: true}
		e := newEnv(t, func(c *endpoint.Config) { c.Executor, c.RunTimeout = x, 20*time.Millisecond })
		e.create(t, "ep", e.query("SELECT 1"))
		x.saved.Store(true)
		_, err := e.svc.Run(ctx, "1", "ep", endpoint.RunRequest{})
		wantError(t, err, http.StatusGatewayTimeout, "timeout", "query timed out: it ran longer than run_timeout (20ms)", "")
		require.ErrorIs(t, err, endpoint.ErrTimeout)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		if e := asError(t, err); e.Limit != endpoint.LimitRunTimeout || e.LimitValue != 20 {
			t.Fatalf("limit %q %d, want run_timeout 20 (ms)", e.Limit, e.LimitValue)
		}
	})
	t.Run("caller deadline", func(t *testing.T) {
		x := &errExecutor{wait: true}
		e := newEnv(t, func(c *endpoint.Config) { c.Executor = x })
		e.create(t, "ep", e.query("SELECT 1"))
		x.saved.Store(true)
		dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err := e.svc.Run(dctx, "1", "ep", endpoint.RunRequest{})
		wantError(t, err, http.StatusGatewayTimeout, "timeout", "query timed out", "")
	})
	t.Run("no last_executed_at on failure", func(t *testing.T) {
		x := &errExecutor{}
		e := newEnv(t, func(c *endpoint.Config) { c.Executor = x })
		e.create(t, "ep", e.query("SELECT 1"))
		x.saved.Store(true)
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
