package endpoint_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/stretchr/testify/require"
)

// endless is a query without end on SQLite.
const endless = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n, 'some text' AS s FROM r"

// TestDefaultRowLimit: a run that names no limit returns 100 rows, and
// tells that there are more; the largest limit is 50,000, and a larger one
// is refused naming it.
func TestDefaultRowLimit(t *testing.T) {
	e := newEnv(t)
	e.create(t, "many", e.query("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 60000) SELECT n FROM r"))
	res, err := e.svc.Run(context.Background(), "1", "many", endpoint.RunRequest{})
	require.NoError(t, err)
	rows := res.Results.([][]any)
	require.Len(t, rows, 100, "no limit: %d rows, hasMore %v; want 100 and more", len(rows), res.HasMore)
	require.True(t, res.HasMore, "no limit: %d rows, hasMore %v; want 100 and more", len(rows), res.HasMore)
	limit := 50000
	res, err = e.svc.Run(context.Background(), "1", "many", endpoint.RunRequest{Limit: &limit})
	require.NoError(t, err, "limit 50000: %v", err)
	require.Len(t, res.Results.([][]any), 50000, "limit 50000: %v", err)
	limit++
	_, err = e.svc.Run(context.Background(), "1", "many", endpoint.RunRequest{Limit: &limit})
	wantError(t, err, 400, endpoint.CodeInvalidInput, "Limit must be between 0 and 50000, got 50001.", "limit")
	wantLimit(t, err, endpoint.LimitMaxLimit, 50000)
}

// wantLimit fails t unless err is an *endpoint.Error naming limit, set to
// value.
func wantLimit(t *testing.T, err error, limit string, value int64) {
	t.Helper()
	e := asError(t, err)
	require.Equal(t, limit, e.Limit, "error %q names limit %q = %d, want %q = %d", e.Detail, e.Limit, e.LimitValue, limit, value)
	require.Equal(t, value, e.LimitValue, "error %q names limit %q = %d, want %q = %d", e.Detail, e.Limit, e.LimitValue, limit, value)
}

// TestResultBytes: the rows a run reads may weigh MaxResultBytes, which
// the Service hands the executor as Bounds.MaxBytes for it to stop reading
// (sqlexec, here on a query without end); past it the run is a 400 naming
// the limit.
func TestResultBytes(t *testing.T) {
	e := newEnv(t)
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: execOf(e), MaxResultBytes: 2000})
	require.NoError(t, err)
	e.svc = svc
	e.create(t, "wide", e.query(endless))
	// 10 rows of about 25 bytes fit; 1,000 do not.
	small := 10
	if _, err := e.svc.Run(context.Background(), "1", "wide", endpoint.RunRequest{Limit: &small}); err != nil {
		t.Fatalf("10 rows: %v", err)
	}
	big := 1000
	_, err = e.svc.Run(context.Background(), "1", "wide", endpoint.RunRequest{Limit: &big})
	wantError(t, err, http.StatusBadRequest, endpoint.CodeResultTooLarge,
		"The result is larger than max_result_bytes (2000 bytes); ask for fewer rows (limit) or narrow the query.", "")
	wantLimit(t, err, endpoint.LimitMaxResultBytes, 2000)
}

// TestResultBytesDefault: without a setting a run may read 10 MiB.
func TestResultBytesDefault(t *testing.T) {
	e := newEnv(t)
	e.create(t, "endless", e.query(endless))
	max := 50000
	// 50,000 rows of about 25 bytes are 1.25 MB: under the default.
	if _, err := e.svc.Run(context.Background(), "1", "endless", endpoint.RunRequest{Limit: &max}); err != nil {
		t.Fatal(err)
	}
	e.create(t, "fat", e.query("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n, printf('%.*c', 1000, 'x') AS s FROM r"))
	_, err := e.svc.Run(context.Background(), "1", "fat", endpoint.RunRequest{Limit: &max})
	wantLimit(t, err, endpoint.LimitMaxResultBytes, endpoint.DefaultMaxResultBytes)
}

// timeoutExec records the deadline and the bounds of its last query.
type timeoutExec struct {
	driver.Executor
	deadline time.Time
	bounds   driver.Bounds
}

func (x *timeoutExec) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	x.deadline, _ = ctx.Deadline()
	x.bounds = b
	return x.Executor.Query(ctx, st, b)
}

// TestRunTimeout: runs are bounded to 30 s unless configured otherwise,
// through the context and the Bounds an executor passes to its engine; a
// run past its limit is a 504 naming it.
func TestRunTimeout(t *testing.T) {
	e := newEnv(t)
	x := &timeoutExec{Executor: execOf(e)}
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: x})
	require.NoError(t, err)
	e.svc = svc
	e.create(t, "one", e.query("SELECT 1"))
	start := time.Now()
	if _, err := e.svc.Run(context.Background(), "1", "one", endpoint.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	if x.bounds.Timeout != 30*time.Second || x.deadline.Sub(start) < 29*time.Second || x.deadline.Sub(start) > 31*time.Second {
		t.Fatalf("default: bounds %+v, deadline in %v; want 30 s", x.bounds, x.deadline.Sub(start))
	}
	require.Equal(t, int64(endpoint.DefaultMaxResultBytes), x.bounds.MaxBytes, "bounds %+v: want 10 MiB", x.bounds)

	svc, err = endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: execOf(e), RunTimeout: 150 * time.Millisecond})
	require.NoError(t, err)
	e.svc = svc
	e.create(t, "endless", e.query("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"))
	start = time.Now()
	_, err = e.svc.Run(context.Background(), "1", "endless", endpoint.RunRequest{})
	wantError(t, err, http.StatusGatewayTimeout, endpoint.CodeTimeout, "query timed out: it ran longer than run_timeout (150ms)", "")
	wantLimit(t, err, endpoint.LimitRunTimeout, 150)
	require.LessOrEqual(t, time.Since(start), 2*time.Second, "the run stopped after")
	none, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: x, RunTimeout: -1, MaxResultBytes: -1})
	require.NoError(t, err, "a negative RunTimeout (none) is refused")
	x.deadline = time.Time{}
	if _, err := none.Run(context.Background(), "1", "one", endpoint.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	// SQLite stops early: the query runs as written, reading the default
	// page and one row more.
	if x.bounds != (driver.Bounds{MaxRows: endpoint.DefaultLimit + 1}) || !x.deadline.IsZero() {
		t.Fatalf("no RunTimeout nor MaxResultBytes: bounds %+v, deadline %v; want the rows of a page and no other bound", x.bounds, x.deadline)
	}
}

// TestSaveCaps: a query longer than MaxQueryLength, or with more
// placeholders than MaxPlaceholders, is refused at save with a 400 naming
// the limit; the defaults are 100 KiB and 1,000.
func TestSaveCaps(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// 30,000 placeholders saved but never ran; 1,000 is the default,
	// whatever the length allows.
	noLength, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: execOf(e), MaxQueryLength: -1})
	require.NoError(t, err)
	for _, svc := range []*endpoint.Service{noLength, e.svc} {
		for _, n := range []int{30000, 1001} {
			many := "SELECT 1 WHERE 'FR' IN (" + strings.Repeat("{variables.country}, ", n) + "'')"
			_, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "many", Query: e.query(many, "country")})
			if svc == e.svc && n == 30000 {
				wantLimit(t, err, endpoint.LimitMaxQueryLength, 100<<10)
				continue
			}
			wantError(t, err, http.StatusBadRequest, endpoint.CodeQueryTooLarge, fmt.Sprintf("Query has %d placeholders, more than max_placeholders (1000).", n), "query")
			wantLimit(t, err, endpoint.LimitMaxPlaceholders, 1000)
		}
	}
	ok := "SELECT 1 WHERE 'FR' IN (" + strings.Repeat("{variables.country}, ", 1000) + "'')"
	if _, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "ok", Query: e.query(ok, "country")}); err != nil {
		t.Fatalf("1000 placeholders: %v", err)
	}
	if _, err := e.svc.Run(ctx, "1", "ok", endpoint.RunRequest{Variables: map[string]any{"country": "FR"}}); err != nil {
		t.Fatalf("a run of 1000 placeholders: %v (%v)", err, errors.Unwrap(err))
	}

	long := "SELECT 1 -- " + strings.Repeat("x", 100<<10)
	_, err = e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "long", Query: e.query(long)})
	wantError(t, err, http.StatusBadRequest, endpoint.CodeQueryTooLarge, "Query is 102412 bytes long, more than max_query_length (102400 bytes).", "query")
	wantLimit(t, err, endpoint.LimitMaxQueryLength, 100<<10)
	_, err = e.svc.Update(ctx, "1", "ok", endpoint.UpdateRequest{Query: e.query(long)})
	wantLimit(t, err, endpoint.LimitMaxQueryLength, 100<<10)
	trends := &endpoint.Query{Kind: endpoint.KindTrends, Insight: []byte(`{"kind": "TrendsQuery", "series": [{"event": "` + strings.Repeat("x", 100<<10) + `"}]}`)}
	_, err = e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "trends", Query: trends})
	wantLimit(t, err, endpoint.LimitMaxQueryLength, 100<<10)

	// Settings: a shorter length, one placeholder.
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: execOf(e), MaxQueryLength: 60, MaxPlaceholders: 1})
	require.NoError(t, err)
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "two", Query: e.query("SELECT {variables.country}, {variables.country}", "country")})
	wantError(t, err, http.StatusBadRequest, endpoint.CodeQueryTooLarge, "Query has 2 placeholders, more than max_placeholders (1).", "query")
	_, err = svc.Create(ctx, "1", endpoint.CreateRequest{Name: "long", Query: e.query("SELECT {variables.country} AS a_rather_long_column_name_here_ok")})
	wantLimit(t, err, endpoint.LimitMaxQueryLength, 60)
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "one", Query: e.query("SELECT {variables.country}", "country")}); err != nil {
		t.Fatal(err)
	}
	if _, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: execOf(e), MaxQueryLength: -1, MaxPlaceholders: -1, MaxResultBytes: -1}); err != nil {
		t.Fatalf("negative settings (no bound): %v", err)
	}
}
