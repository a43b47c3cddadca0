package endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/endpointtest"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/metrics"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/demo"
	"github.com/endpointkit/endpointkit/insight"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newCountedEnv is newEnv with its executor wrapped in a heldexec.Fake
// (which counts the queries, can hold them, with room on Started for 16,
// and can report what the engine read), then more applied to the Config.
func newCountedEnv(t *testing.T, more ...func(*endpoint.Config)) (*env, *heldexec.Fake) {
	t.Helper()
	var x *heldexec.Fake
	e := newEnv(t, func(c *endpoint.Config) {
		x = heldexec.NewFake(c.Executor, heldexec.Held(16))
		c.Executor = x
		for _, f := range more {
			f(c)
		}
	})
	return e, x
}

// newCacheEnv is newEnv with a result cache of max bytes and a counting
// executor.
func newCacheEnv(t *testing.T, max int64) (*env, *heldexec.Fake, *memstore.ResultCache) {
	t.Helper()
	cache := memstore.NewResultCache(max)
	e, x := newCountedEnv(t, func(c *endpoint.Config) { c.ResultCache = cache })
	return e, x, cache
}

func runReq(t *testing.T, e *env, name string, req endpoint.RunRequest) *endpoint.RunResult {
	t.Helper()
	res, err := e.svc.Run(context.Background(), "1", name, req)
	require.NoError(t, err, "Run(%s)", name)
	return res
}

// resultsJSON is the JSON of an answer's results, computed or cached.
func resultsJSON(t *testing.T, res *endpoint.RunResult) string {
	t.Helper()
	// As the answer's JSON writes them: a float column's values as floats.
	b, err := json.Marshal(res)
	require.NoError(t, err)
	var answer struct{ Results json.RawMessage }
	require.NoError(t, json.Unmarshal(b, &answer))
	return string(answer.Results)
}

// TestResultCacheServes: a second identical run is answered from the cache
// without a query, with the same results, last_refresh and statistics, a
// new execution id and is_cached; a changed value, limit, offset or version
// misses; the answer expires with the endpoint's data freshness, as set at
// the time of the run.
func TestResultCacheServes(t *testing.T) {
	e, x, _ := newCacheEnv(t, 1<<20)
	e.create(t, "by_country", e.query("SELECT id, amount FROM orders WHERE country = {variables.country} ORDER BY id", "country"))
	x.Reset() // the check of the save
	us := endpoint.RunRequest{Variables: map[string]any{"country": "US"}}

	first := runReq(t, e, "by_country", us)
	if first.IsCached || x.Queries() != 1 || first.LastRefresh == nil || !first.LastRefresh.Equal(e.clock.Now()) {
		t.Fatalf("first run: cached %v, %d queries, last_refresh %v", first.IsCached, x.Queries(), first.LastRefresh)
	}
	e.clock.Advance(time.Minute)
	second := runReq(t, e, "by_country", us)
	if !second.IsCached || x.Queries() != 1 {
		t.Fatalf("second run: cached %v, %d queries", second.IsCached, x.Queries())
	}
	if resultsJSON(t, second) != resultsJSON(t, first) || !second.LastRefresh.Equal(*first.LastRefresh) ||
		second.Statistics == nil || second.Statistics.ElapsedMS != first.Statistics.ElapsedMS ||
		strings.Join(second.Columns, ",") != "id,amount" || second.ExecutionID == first.ExecutionID {
		t.Fatalf("cached answer %+v differs from %+v", second, first)
	}
	_, ok := second.Results.(json.RawMessage)
	require.True(t, ok, "a cached answer's results are %T, want json.RawMessage", second.Results)

	limit, offset := 1, 1
	for name, req := range map[string]endpoint.RunRequest{
		"another value": {Variables: map[string]any{"country": "DE"}},
		"a limit":       {Variables: us.Variables, Limit: &limit},
		"an offset":     {Variables: us.Variables, Offset: &offset},
	} {
		before := x.Queries()
		require.False(t, runReq(t, e, "by_country", req).IsCached, "%s: served from the cache", name)
		require.Equal(t, before+1, x.Queries(), "%s: served from the cache", name)
	}

	// A new version never serves the old version's answer, even for the
	// same values; the old version still has its own.
	q := e.query("SELECT id FROM orders WHERE country = {variables.country} ORDER BY id DESC", "country")
	_, err := e.svc.Update(context.Background(), "1", "by_country", endpoint.UpdateRequest{Query: q})
	require.NoError(t, err)
	v2 := runReq(t, e, "by_country", us)
	if v2.IsCached || v2.EndpointVersion != 2 || resultsJSON(t, v2) == resultsJSON(t, first) {
		t.Fatalf("version 2 answered %s (cached %v)", resultsJSON(t, v2), v2.IsCached)
	}
	one := 1
	if v1 := runReq(t, e, "by_country", endpoint.RunRequest{Variables: us.Variables, Version: &one}); !v1.IsCached || resultsJSON(t, v1) != resultsJSON(t, first) {
		t.Fatalf("version 1's cached answer: cached %v %s", v1.IsCached, resultsJSON(t, v1))
	}

	// Freshness: a day by default; a shorter setting applies to answers
	// cached before it.
	e.clock.Advance(20 * time.Minute)
	require.True(t, runReq(t, e, "by_country", us).IsCached, "an answer of 20 minutes missed with a freshness of a day")
	fifteen := 900
	if _, err := e.svc.Update(context.Background(), "1", "by_country", endpoint.UpdateRequest{DataFreshnessSeconds: &fifteen}); err != nil {
		t.Fatal(err)
	}
	require.False(t, runReq(t, e, "by_country", us).IsCached, "an answer older than the new freshness of 15 minutes was served")
	e.clock.Advance(14 * time.Minute)
	require.True(t, runReq(t, e, "by_country", us).IsCached, "an answer of 14 minutes missed with a freshness of 15")
	e.clock.Advance(time.Minute)
	require.False(t, runReq(t, e, "by_country", us).IsCached, "an answer of 15 minutes was served with a freshness of 15")
}

// TestRefreshModes: force computes and caches; direct is for materialized
// endpoints, answers from the stored table and neither reads nor writes
// the cache; debug runs bypass the cache.
func TestRefreshModes(t *testing.T) {
	e, x, _ := newCacheEnv(t, 1<<20)
	e.create(t, "plain", e.query("SELECT id FROM orders WHERE country = {variables.country} ORDER BY id", "country"))
	x.Reset() // the check of the save
	vars := map[string]any{"country": "US"}
	first := runReq(t, e, "plain", endpoint.RunRequest{Variables: vars})
	e.clock.Advance(time.Minute)
	forced := runReq(t, e, "plain", endpoint.RunRequest{Variables: vars, Refresh: "force"})
	if forced.IsCached || x.Queries() != 2 || !forced.LastRefresh.After(*first.LastRefresh) {
		t.Fatalf("force: cached %v, %d queries", forced.IsCached, x.Queries())
	}
	again := runReq(t, e, "plain", endpoint.RunRequest{Variables: vars, Refresh: "cache"})
	require.True(t, again.IsCached, "cache after force: cached %v, last_refresh %v, want the forced answer's %v", again.IsCached, again.LastRefresh, forced.LastRefresh)
	require.True(t, again.LastRefresh.Equal(*forced.LastRefresh), "cache after force: cached %v, last_refresh %v, want the forced answer's %v", again.IsCached, again.LastRefresh, forced.LastRefresh)
	res := runReq(t, e, "plain", endpoint.RunRequest{Variables: vars, Debug: true})
	require.False(t, res.IsCached, "a debug run was served from the cache")
	require.NotNil(t, res.Debug, "a debug run was served from the cache")
	_, err := e.svc.Run(context.Background(), "1", "plain", endpoint.RunRequest{Variables: vars, Refresh: "direct"})
	wantError(t, err, 400, endpoint.CodeInvalidInput,
		"refresh 'direct' reads the stored table of a materialized endpoint; endpoint 'plain' is not materialized.", "refresh")
	_, err = e.svc.Run(context.Background(), "1", "plain", endpoint.RunRequest{Variables: vars, Refresh: "Force"})
	wantError(t, err, 400, endpoint.CodeInvalidInput, "Invalid refresh 'Force'. Expected one of: cache, force, direct.", "refresh")
}

// TestRefreshDirect: a direct run of a materialized endpoint reads the
// stored table every time and leaves the cache alone.
func TestRefreshDirect(t *testing.T) {
	e, _ := newMatEnv(t, 1000)
	x := heldexec.NewFake(execOf(e))
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: x, Now: e.clock.Now,
		ResultCache: memstore.NewResultCache(1 << 20)})
	require.NoError(t, err)
	e.svc = svc
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	e.materialize(t, "daily")
	vars := runVars("US", "2025-05-01", "2025-05-08")
	before := x.Queries()
	for range 2 {
		res := runReq(t, e, "daily", endpoint.RunRequest{Variables: vars, Refresh: "direct"})
		if res.IsCached || !res.EndpointMaterialized || !res.LastRefresh.Equal(*res.EndpointMaterializedAt) {
			t.Fatalf("direct: cached %v, materialized %v", res.IsCached, res.EndpointMaterialized)
		}
	}
	n := x.Queries() - before
	require.Equal(t, 2, n, "two direct runs made")
	require.False(t, runReq(t, e, "daily", endpoint.RunRequest{Variables: vars}).IsCached, "a direct run wrote the cache")
}

// byCountryFlight saves "by_country" and starts n identical runs of it
// (country US) that join one flight: x holds the first run's query, and
// the other n-1 start once it executes. The caller releases x; wait waits
// for every run and returns their answers.
func byCountryFlight(t *testing.T, e *env, x *heldexec.Fake, n int) (req endpoint.RunRequest, wait func() []*endpoint.RunResult) {
	t.Helper()
	e.create(t, "by_country", e.query("SELECT id FROM orders WHERE country = {variables.country} ORDER BY id", "country"))
	// x holds the runs, not the check of the save.
	x.Reset()
	x.Hold()
	req = endpoint.RunRequest{Variables: map[string]any{"country": "US"}}
	var wg sync.WaitGroup
	results := make(chan *endpoint.RunResult, n)
	run := func() {
		defer wg.Done()
		res, err := e.svc.Run(context.Background(), "1", "by_country", req)
		assert.NoError(t, err)
		results <- res
	}
	wg.Add(1)
	go run()
	<-x.Started // the first run is executing
	for range n - 1 {
		wg.Add(1)
		go run()
	}
	return req, func() []*endpoint.RunResult {
		wg.Wait()
		close(results)
		var all []*endpoint.RunResult
		for res := range results {
			all = append(all, res)
		}
		return all
	}
}

// TestSingleFlight: identical runs under way at once compute once, with a
// cache and without one; each answer has its own execution id, and the
// runs that waited say is_cached. A waiting run whose context ends gives
// up alone.
func TestSingleFlight(t *testing.T) {
	for _, withCache := range []bool{false, true} {
		t.Run(fmt.Sprintf("cache=%v", withCache), func(t *testing.T) {
			e, x := newCountedEnv(t, func(c *endpoint.Config) {
				if withCache {
					c.ResultCache = memstore.NewResultCache(1 << 20)
				}
			})
			const n = 6
			req, wait := byCountryFlight(t, e, x, n)
			// A waiter whose context ends gives up with its context's error.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			_, err := e.svc.Run(ctx, "1", "by_country", req)
			cancel()
			wantError(t, err, 504, endpoint.CodeTimeout, "query timed out", "")
			time.Sleep(200 * time.Millisecond) // let the others join the flight
			x.Release()
			ids := map[string]bool{}
			computed := 0
			for _, res := range wait() {
				ids[res.ExecutionID] = true
				if !res.IsCached {
					computed++
				}
				require.Equal(t, "[[1],[3],[5]]", resultsJSON(t, res), "results")
			}
			if q := x.Queries(); q != 1 || computed != 1 || len(ids) != n {
				t.Fatalf("%d queries, %d answers computed, %d execution ids; want 1, 1, %d", q, computed, len(ids), n)
			}
		})
	}
}

// TestStatistics: elapsed_ms is measured; rows_read and bytes_read are
// what the executor reports, null when it reports nothing.
func TestStatistics(t *testing.T) {
	e, x := newCountedEnv(t)
	e.create(t, "all", e.query("SELECT id FROM orders"))
	res := runReq(t, e, "all", endpoint.RunRequest{})
	if res.Statistics == nil || res.Statistics.RowsRead != nil || res.Statistics.BytesRead != nil || res.Statistics.ElapsedMS < 0 {
		t.Fatalf("statistics without a report = %+v", res.Statistics)
	}
	b, _ := json.Marshal(res.Statistics)
	require.Contains(t, string(b), `"rows_read":null,"bytes_read":null`, "statistics JSON = %s", b)
	x.SetRead(6, 60)
	res = runReq(t, e, "all", endpoint.RunRequest{Refresh: "force"})
	if res.Statistics.RowsRead == nil || *res.Statistics.RowsRead != 6 || *res.Statistics.BytesRead != 60 {
		t.Fatalf("statistics with a report = %+v", res.Statistics)
	}
}

// TestVersionCreatedAt: every answer names when its version was saved.
func TestVersionCreatedAt(t *testing.T) {
	e := newEnv(t)
	created := e.clock.Now()
	e.create(t, "ep", e.query("SELECT 1 AS one"))
	res := runReq(t, e, "ep", endpoint.RunRequest{})
	require.NotNil(t, res.EndpointVersionCreatedAt, "version 1 created at %v, want %v", res.EndpointVersionCreatedAt, created)
	require.True(t, res.EndpointVersionCreatedAt.Equal(created), "version 1 created at %v, want %v", res.EndpointVersionCreatedAt, created)
	e.clock.Advance(time.Hour)
	_, err := e.svc.Update(context.Background(), "1", "ep", endpoint.UpdateRequest{Query: e.query("SELECT 2 AS two")})
	require.NoError(t, err)
	if res := runReq(t, e, "ep", endpoint.RunRequest{}); !res.EndpointVersionCreatedAt.Equal(created.Add(time.Hour)) {
		t.Fatalf("version 2 created at %v", res.EndpointVersionCreatedAt)
	}
	one := 1
	if res := runReq(t, e, "ep", endpoint.RunRequest{Version: &one}); !res.EndpointVersionCreatedAt.Equal(created) {
		t.Fatalf("version 1, run after version 2, created at %v", res.EndpointVersionCreatedAt)
	}
}

// TestDataFreshnessSeconds: the allowed values only, a day by default,
// refused with a detail naming them; a refused update changes nothing.
func TestDataFreshnessSeconds(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ep := e.create(t, "ep", e.query("SELECT 1 AS one"))
	require.Equal(t, endpoint.DefaultDataFreshness, ep.DataFreshnessSeconds, "default data freshness")
	for _, bad := range []int{0, -900, 60, 901, 86401, 1 << 40} {
		_, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "x", Query: e.query("SELECT 1"), DataFreshnessSeconds: &bad})
		wantError(t, err, 400, endpoint.CodeInvalidInput, fmt.Sprintf(
			"Invalid data_freshness_seconds %d. Expected one of: 900, 1800, 3600, 21600, 43200, 86400, 604800.", bad), "data_freshness_seconds")
		_, err = e.svc.Update(ctx, "1", "ep", endpoint.UpdateRequest{DataFreshnessSeconds: &bad, Description: new(string)})
		wantError(t, err, 400, endpoint.CodeInvalidInput, fmt.Sprintf(
			"Invalid data_freshness_seconds %d. Expected one of: 900, 1800, 3600, 21600, 43200, 86400, 604800.", bad), "data_freshness_seconds")
	}
	for _, good := range endpoint.DataFreshnessValues() {
		got, err := e.svc.Update(ctx, "1", "ep", endpoint.UpdateRequest{DataFreshnessSeconds: &good})
		if err != nil || got.DataFreshnessSeconds != good || e.get(t, "ep").DataFreshnessSeconds != good {
			t.Fatalf("Update to %d: %v, %d", good, err, got.DataFreshnessSeconds)
		}
	}
	week := 604800
	got, err := e.svc.Create(ctx, "1", endpoint.CreateRequest{Name: "weekly", Query: e.query("SELECT 1"), DataFreshnessSeconds: &week})
	if err != nil || got.DataFreshnessSeconds != week || endpoint.Seconds(got.MaterializationFreshness) != endpoint.Seconds(7*24*time.Hour) {
		t.Fatalf("Create with a week: %v, %+v", err, got)
	}
}

// TestMemoryResultCacheBound: under a load of concurrent writers of mixed
// sizes the cache never holds more than its bound, evicts the least
// recently used first, and refuses a value over an eighth of the bound.
func TestMemoryResultCacheBound(t *testing.T) {
	const max = 64 << 10
	c := memstore.NewResultCache(max)
	ctx := context.Background()
	now := time.Now()
	var wg sync.WaitGroup
	var over atomic.Int64
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range 2000 {
				v := make([]byte, rng.IntN(max/6))
				if !assert.NoError(t, c.Set(ctx, fmt.Sprintf("%d-%d", w, i), v, now.Add(time.Hour))) {
					return
				}
				if b := c.Bytes(); b > max {
					over.Store(b)
				}
			}
		}()
	}
	wg.Wait()
	if b := over.Load(); b != 0 || c.Bytes() > max || c.Len() == 0 {
		t.Fatalf("the cache held %d bytes (now %d, %d entries); the bound is %d", b, c.Bytes(), c.Len(), max)
	}

	// Entries of 80 bytes take 241 with their key and bookkeeping: eight
	// fit in 2000 bytes.
	c = memstore.NewResultCache(2000)
	for i := range 8 {
		require.NoError(t, c.Set(ctx, fmt.Sprint(i), make([]byte, 80), now.Add(time.Hour)))
	}
	if _, ok, _ := c.Get(ctx, "0", now); !ok { // 0 is now the most recent
		t.Fatal("entry 0 missing")
	}
	for i := 8; i < 10; i++ {
		require.NoError(t, c.Set(ctx, fmt.Sprint(i), make([]byte, 80), now.Add(time.Hour)))
	}
	for i := range 10 {
		want := i != 1 && i != 2
		_, ok, _ := c.Get(ctx, fmt.Sprint(i), now)
		require.Equal(t, want, ok, "entry %d kept", i)
	}
	require.NoError(t, c.Set(ctx, "big", make([]byte, 100), now.Add(time.Hour)))
	_, ok, _ := c.Get(ctx, "big", now)
	require.False(t, ok, "a value over an eighth of the bound was kept")
}

// TestResultCacheBoundThroughRuns: a Service's cache stays within its
// bound over many distinct runs, and a failing cache never fails a run.
func TestResultCacheBoundThroughRuns(t *testing.T) {
	e, _, cache := newCacheEnv(t, 8<<10)
	e.create(t, "by_amount", e.query("SELECT id, country, plan, amount FROM orders WHERE amount >= {variables.min_amount} ORDER BY id", "min_amount"))
	for i := range 300 {
		runReq(t, e, "by_amount", endpoint.RunRequest{Variables: map[string]any{"min_amount": i % 120}})
		require.LessOrEqual(t, cache.Bytes(), int64(8<<10), "after %d runs the cache holds", i+1)
	}
	f := newEnv(t, func(c *endpoint.Config) { c.ResultCache = failingCache{} })
	f.create(t, "ep", f.query("SELECT 1 AS one"))
	for range 2 {
		require.False(t, runReq(t, f, "ep", endpoint.RunRequest{}).IsCached, "a failing cache served")
	}
}

type failingCache struct{}

func (failingCache) Get(context.Context, string, time.Time) ([]byte, bool, error) {
	return nil, false, errors.New("cache down")
}

func (failingCache) Set(context.Context, string, []byte, time.Time) error {
	return errors.New("cache down")
}

// TestCachedRunLogsNoEngineRead: a run answered from the result cache logs
// no rows_read or bytes_read (the engine read nothing for it; the run
// that computed the answer logged what it read), while its answer's
// statistics still carry the computing run's, as documented.
func TestCachedRunLogsNoEngineRead(t *testing.T) {
	e, x, _ := newCacheEnv(t, 1<<20)
	x.SetRead(7, 70)
	e.create(t, "all", e.query("SELECT id FROM orders"))
	first := runReq(t, e, "all", endpoint.RunRequest{})
	second := runReq(t, e, "all", endpoint.RunRequest{})
	if first.IsCached || !second.IsCached || second.Statistics == nil || second.Statistics.RowsRead == nil || *second.Statistics.RowsRead != 7 {
		t.Fatalf("cached %v then %v; the cached answer's statistics %+v", first.IsCached, second.IsCached, second.Statistics)
	}
	logs, _, err := e.svc.Logs(context.Background(), "1", "all", 0, "")
	require.NoError(t, err, "%d entries, %v", len(logs), err)
	require.Len(t, logs, 2, "%d entries, %v", len(logs), err)
	for _, l := range logs {
		switch {
		case l.Cached && (l.RowsRead != nil || l.BytesRead != nil):
			t.Errorf("the cached run logged rows_read %v, bytes_read %v; want none", l.RowsRead, l.BytesRead)
		case !l.Cached && (l.RowsRead == nil || *l.RowsRead != 7 || l.BytesRead == nil || *l.BytesRead != 70):
			t.Errorf("the computing run logged rows_read %v, bytes_read %v; want 7 and 70", l.RowsRead, l.BytesRead)
		}
	}
}

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

// TestRunTimeout: runs are bounded to 30 s unless configured otherwise,
// through the context and the Bounds an executor passes to its engine; a
// run past its limit is a 504 naming it.
func TestRunTimeout(t *testing.T) {
	e := newEnv(t)
	x := heldexec.NewFake(execOf(e))
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: x})
	require.NoError(t, err)
	e.svc = svc
	e.create(t, "one", e.query("SELECT 1"))
	start := time.Now()
	if _, err := e.svc.Run(context.Background(), "1", "one", endpoint.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	last := x.Last()
	if last.Bounds.Timeout != 30*time.Second || last.Deadline.Sub(start) < 29*time.Second || last.Deadline.Sub(start) > 31*time.Second {
		t.Fatalf("default: bounds %+v, deadline in %v; want 30 s", last.Bounds, last.Deadline.Sub(start))
	}
	require.Equal(t, int64(endpoint.DefaultMaxResultBytes), last.Bounds.MaxBytes, "bounds %+v: want 10 MiB", last.Bounds)

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
	if _, err := none.Run(context.Background(), "1", "one", endpoint.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	// SQLite stops early: the query runs as written, reading the default
	// page and one row more.
	if last := x.Last(); last.Bounds != (driver.Bounds{MaxRows: endpoint.DefaultLimit + 1}) || !last.Deadline.IsZero() {
		t.Fatalf("no RunTimeout nor MaxResultBytes: bounds %+v, deadline %v; want the rows of a page and no other bound", last.Bounds, last.Deadline)
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

// TestEmptyAnswerKeepsTypes: on SQLite, whose expressions have a type
// only through their values, an answer with no rows types an aggregate
// column as an answer with rows does (INTEGER), not "".
func TestEmptyAnswerKeepsTypes(t *testing.T) {
	e := newEnv(t)
	e.create(t, "per_country", e.query("SELECT country, count(*) AS n, sum(amount) AS total FROM orders WHERE country = {variables.country} GROUP BY country", "country"))
	full, err := run(e, "per_country", map[string]any{"country": "US"})
	require.NoError(t, err)
	require.NotEmpty(t, full.Results)
	empty, err := e.svc.Run(context.Background(), "1", "per_country", endpoint.RunRequest{Variables: map[string]any{"country": "ZZ"}, Refresh: endpoint.RefreshForce})
	require.NoError(t, err)
	require.Empty(t, empty.Results)
	assert.Equal(t, full.Columns, empty.Columns)
	assert.Equal(t, full.Types, empty.Types)
	assert.Equal(t, "INTEGER", empty.Types[1])
	// sum's type is its values' (INTEGER or REAL), which SQLite does not
	// know before it runs: none, with rows and without.
	assert.Equal(t, []endpoint.ColumnKind{endpoint.KindString, endpoint.KindInteger, endpoint.KindOther}, empty.ColumnKinds())
	// ColumnKind reads the same kinds one column at a time, KindOther
	// past them.
	for i, k := range full.ColumnKinds() {
		assert.Equal(t, k, full.ColumnKind(i), "column %d", i)
	}
	assert.Equal(t, endpoint.KindInteger, full.ColumnKind(1))
	assert.Equal(t, endpoint.KindOther, full.ColumnKind(3))
	assert.Equal(t, endpoint.KindOther, full.ColumnKind(-1))
	assert.Equal(t, endpoint.KindOther, (&endpoint.RunResult{}).ColumnKind(0))
}

// TestRequestIDThroughContexts: the id WithRequestID sets is read back
// through the contexts derived from it, the innermost one of two ids is
// shadowed, and a context without one has "".
func TestRequestIDThroughContexts(t *testing.T) {
	type other struct{}
	ctx := endpoint.WithRequestID(context.Background(), "req-1")
	derived, cancel := context.WithCancel(context.WithValue(ctx, other{}, "x"))
	defer cancel()
	assert.Equal(t, "req-1", endpoint.RequestID(ctx))
	assert.Equal(t, "req-1", endpoint.RequestID(derived))
	assert.Equal(t, "x", derived.Value(other{}), "other values pass through")
	assert.Equal(t, "req-2", endpoint.RequestID(endpoint.WithRequestID(derived, "req-2")))
	assert.Empty(t, endpoint.RequestID(context.Background()))
	assert.Nil(t, ctx.Value(other{}))
}

// TestEmptyFirstAnswerTypes: on SQLite, a version whose first answers
// have no rows types its expressions as the answers with rows do: count,
// avg, CAST and lower by the type SQLite gives them whatever the values,
// sum (whose type is its values') as none, the same before and after an
// answer with rows.
func TestEmptyFirstAnswerTypes(t *testing.T) {
	e := newEnv(t)
	e.create(t, "typed", e.query("SELECT country, count(*) AS n, avg(amount) AS mean, sum(amount) AS total, "+
		"CAST(sum(amount) AS INTEGER) AS whole, lower(country) lc FROM orders WHERE country = {variables.country} GROUP BY country", "country"))
	want := []string{"TEXT", "INTEGER", "REAL", "", "INTEGER", "TEXT"}
	for i, country := range []string{"ZZ", "ZZ", "US", "ZZ"} {
		res, err := e.svc.Run(context.Background(), "1", "typed", endpoint.RunRequest{Variables: map[string]any{"country": country}, Refresh: endpoint.RefreshForce})
		require.NoError(t, err)
		assert.Equal(t, want, res.Types, "run %d (%s)", i, country)
		assert.Equal(t, country == "US", len(res.Results.([][]any)) > 0)
	}
}

// TestValueTypedColumnNotLearned: on SQLite, a column whose values are
// INTEGER in one row and REAL in another keeps no type, rather than the
// type of the first answer's first value, and its values are SQLite's.
func TestValueTypedColumnNotLearned(t *testing.T) {
	e := newEnv(t)
	e.create(t, "mixed", e.query("SELECT id, CASE WHEN id % 2 = 0 THEN 1.5 ELSE 1 END AS x FROM orders ORDER BY id"))
	for range 2 {
		res, err := e.svc.Run(context.Background(), "1", "mixed", endpoint.RunRequest{Refresh: endpoint.RefreshForce})
		require.NoError(t, err)
		assert.Equal(t, []string{"INTEGER", ""}, res.Types)
		rows := res.Results.([][]any)
		assert.Equal(t, int64(1), rows[0][1])
		assert.Equal(t, 1.5, rows[1][1])
	}
}

// TestFloatColumnKind: every value of a REAL column is a float64, an
// integral one (10) as one with a fraction (25.5), whatever the row.
func TestFloatColumnKind(t *testing.T) {
	e := newEnv(t)
	e.create(t, "amounts", e.query("SELECT id, avg(amount) AS a FROM orders GROUP BY id ORDER BY id"))
	res, err := run(e, "amounts", nil)
	require.NoError(t, err)
	for _, row := range res.Results.([][]any) {
		assert.IsType(t, float64(0), row[1], "row %v", row)
		assert.IsType(t, int64(0), row[0], "row %v", row)
	}
}

// TestColumnKindOf: the kinds of the engines' type names.
func TestColumnKindOf(t *testing.T) {
	for _, tc := range []struct {
		engine engine.Engine
		typ    string
		want   endpoint.ColumnKind
	}{
		{engine.PostgreSQL, "INT8", endpoint.KindInteger},
		{engine.PostgreSQL, "NUMERIC", endpoint.KindDecimal},
		{engine.PostgreSQL, "FLOAT8", endpoint.KindFloat},
		{engine.PostgreSQL, "TIMESTAMPTZ", endpoint.KindTime},
		{engine.SQLite, "NUMERIC", endpoint.KindFloat},
		{engine.SQLite, "", endpoint.KindOther},
		{engine.MySQL, "DECIMAL", endpoint.KindDecimal},
		{engine.MySQL, "BIGINT", endpoint.KindInteger},
		{engine.ClickHouse, "Nullable(Decimal(38, 2))", endpoint.KindDecimal},
		{engine.ClickHouse, "LowCardinality(String)", endpoint.KindString},
		{engine.ClickHouse, "UInt64", endpoint.KindInteger},
		{engine.ClickHouse, "DateTime64(3, 'UTC')", endpoint.KindTime},
		{engine.ClickHouse, "Array(String)", endpoint.KindOther},
	} {
		assert.Equal(t, tc.want, endpoint.ColumnKindOf(tc.engine, tc.typ), "%s %s", tc.engine, tc.typ)
	}
}

// TestFloatColumnJSON: json.Marshal of an answer (what the MCP tools and a
// debug answer write) writes an integral value of a float column as a
// float, 256.0, while the Go value stays the float64 256; an integer
// column stays an integer.
func TestFloatColumnJSON(t *testing.T) {
	e := newEnv(t)
	e.create(t, "whole", e.query("SELECT id, CAST(256 AS REAL) AS a, 256.5 AS b FROM orders ORDER BY id LIMIT 1"))
	res, err := run(e, "whole", nil)
	require.NoError(t, err)
	rows := res.Results.([][]any)
	require.Len(t, rows, 1)
	assert.Equal(t, float64(256), rows[0][1])
	b, err := json.Marshal(res)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"results":[[1,256.0,256.5]]`)
	var back map[string]any
	require.NoError(t, json.Unmarshal(b, &back), "%s", b)
	assert.Equal(t, float64(256), rows[0][1], "marshalling leaves the Go value")
}

// TestRefreshChecksColumns: a refresh whose query the engine now describes
// with another type than its version was saved with (the view it reads
// changed) fails with a status error naming the column, told to the
// Observer (logged and counted), the last good table still serving, and
// builds no table of the other shape.
func TestRefreshChecksColumns(t *testing.T) {
	rec := &recorder{}
	e := newEnv(t, func(c *endpoint.Config) { c.Observer = rec })
	_, err := e.db.Exec("CREATE VIEW sales AS SELECT country, paid FROM orders")
	require.NoError(t, err)
	e.createMat(t, "by_country", e.query("SELECT paid, count(*) AS n FROM sales GROUP BY paid"), endpoint.CreateRequest{})
	ctx := context.Background()
	require.NoError(t, e.svc.Materialize(ctx, "1", "by_country"))
	before, err := run(e, "by_country", nil)
	require.NoError(t, err)
	require.True(t, before.EndpointMaterialized)

	_, err = e.db.Exec("DROP VIEW sales; CREATE VIEW sales AS SELECT country, plan AS paid FROM orders")
	require.NoError(t, err)
	err = e.svc.Materialize(ctx, "1", "by_country")
	var ee *endpoint.Error
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, endpoint.CodeMaterializationFailed, ee.Code)
	assert.Contains(t, ee.Detail, "column 1 of the query is now paid TEXT where version 1 was saved with paid INTEGER")
	var changed *endpoint.ColumnsChangedError
	require.ErrorAs(t, err, &changed)
	assert.Equal(t, []string{"paid", "n"}, changed.SavedColumns)

	report, err := e.svc.MaterializationStatus(ctx, "1", "by_country")
	require.NoError(t, err)
	require.NotNil(t, report.Status)
	assert.Equal(t, endpoint.MaterializationStatus("failed"), *report.Status)
	require.NotNil(t, report.LastError)
	assert.Contains(t, *report.LastError, "column 1 of the query is now paid TEXT")
	rec.mu.Lock()
	last := rec.refreshes[len(rec.refreshes)-1]
	rec.mu.Unlock()
	assert.ErrorAs(t, last.Err, &changed, "the Observer is told why")

	after, err := run(e, "by_country", nil)
	require.NoError(t, err)
	assert.True(t, after.EndpointMaterialized, "the last good table still serves")
	assert.Equal(t, before.Types, after.Types)
	var n int
	require.NoError(t, e.db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name LIKE '%_next'").Scan(&n))
	assert.Zero(t, n, "no table of the other shape is left")
}

// countedValue is a value that counts the times it is encoded as JSON.
type countedValue struct {
	v int64
	n *atomic.Int64
}

func (c countedValue) MarshalJSON() ([]byte, error) {
	c.n.Add(1)
	return []byte(strconv.FormatInt(c.v, 10)), nil
}

// countEncodings rewrites an answer's rows with each integer a
// countedValue counting into n (of no database type, so that the version
// keeps it as it is).
func countEncodings(n *atomic.Int64) func(*driver.Result) {
	return func(res *driver.Result) {
		for i := range res.Types {
			res.Types[i] = ""
		}
		for _, row := range res.Rows {
			for i, v := range row {
				if c, ok := v.(int64); ok {
					row[i] = countedValue{v: c, n: n}
				}
			}
		}
	}
}

// TestJoinedRunEncodedOnce: with the result cache on, the answer of runs
// that joined one flight is encoded as JSON once, for the cache and the
// runs that joined alike (it was encoded twice: once to cache it, once
// more to share it), and each run's answer is whole.
func TestJoinedRunEncodedOnce(t *testing.T) {
	var encoded atomic.Int64
	var x *heldexec.Fake
	e := newEnv(t, func(c *endpoint.Config) {
		x = heldexec.NewFake(c.Executor, heldexec.Held(16), heldexec.Rewrite(countEncodings(&encoded)))
		c.Executor = x
		c.ResultCache = memstore.NewResultCache(1 << 20)
	})
	const n = 4
	_, wait := byCountryFlight(t, e, x, n)
	require.Eventually(t, func() bool { return endpoint.FlightWaiters(e.svc) == n-1 }, 5*time.Second, time.Millisecond)
	encoded.Store(0)
	x.Release()
	results := wait()
	const rows = 3 // [[1],[3],[5]]
	assert.EqualValues(t, rows, encoded.Load(), "encodings of the rows' values: once each")
	assert.EqualValues(t, 1, x.Queries())
	shared := 0
	for _, res := range results {
		if res.IsCached {
			shared++
			assert.JSONEq(t, "[[1],[3],[5]]", string(res.Results.(json.RawMessage)))
		}
	}
	assert.Equal(t, n-1, shared)
}

// TestStoredReadFailureIsVisible: a materialized run whose read of the
// stored table fails answers inline, and says so and why in the answer
// (inline_reason); the Observer is told the database's error with the
// request id (logged as a warning, counted by package metrics), and the
// endpoint's materialization shows the failure. The run went inline
// without a word: endpoint_materialized false was the only sign.
func TestStoredReadFailureIsVisible(t *testing.T) {
	// While fail is set, every query that reads a stored table fails, as a
	// database refusing the read would (a type it cannot convert,
	// ClickHouse's Code 53).
	var fail atomic.Bool
	readsStored := heldexec.SQLContains("endpointkit_mat_")
	refused := heldexec.Fail(errors.New("code: 53, message: Cannot convert string '2013-07-31 00:00:00' to type Date"),
		func(st driver.Statement) bool { return fail.Load() && readsStored(st) })
	rec := &recorder{}
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	require.NoError(t, err)
	env := endpointtest.New(t, endpointtest.WithDemoEvents(300), endpointtest.WithConfig(func(c *endpoint.Config) {
		c.Executor = heldexec.NewFake(c.Executor, refused)
		c.Observer = endpoint.MultiObserver(rec, m)
	}))
	ctx := context.Background()
	v, err := env.Service.CreateVariable(ctx, env.Project, variable.Variable{Name: "Event", Type: variable.String})
	require.NoError(t, err)
	q := endpoint.Query{Kind: endpoint.KindSQL, SQL: "SELECT event, count(*) AS n FROM events WHERE event = {variables.event} GROUP BY event",
		Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID}}}
	_, err = env.Service.Create(ctx, env.Project, endpoint.CreateRequest{Name: "m", Query: &q, IsMaterialized: true})
	require.NoError(t, err)
	req := endpoint.RunRequest{Variables: map[string]any{"event": "purchase"}, Refresh: endpoint.RefreshForce}

	// Before the first refresh: inline, with the reason.
	res, err := env.Service.Run(ctx, env.Project, "m", req)
	require.NoError(t, err)
	assert.False(t, res.EndpointMaterialized, "res.EndpointMaterialized is true")
	assert.Contains(t, res.InlineReason, "no stored table is fresh")
	require.NoError(t, env.Service.Materialize(ctx, env.Project, "m"))
	res, err = env.Service.Run(ctx, env.Project, "m", req)
	require.NoError(t, err)
	require.True(t, res.EndpointMaterialized, "res.EndpointMaterialized is false")
	if v := res.InlineReason; !(v == "") {
		t.Errorf("the stored table answered: res.InlineReason = %v, want it empty", v)
	}
	want := res.Results

	fail.Store(true)
	res, err = env.Service.Run(endpoint.WithRequestID(ctx, "req-42"), env.Project, "m", req)
	require.NoError(t, err)
	assert.False(t, res.EndpointMaterialized, "res.EndpointMaterialized is true")
	if got, want := res.Results, want; !reflect.DeepEqual(got, want) {
		t.Errorf("inline answers the same: res.Results = %+v, want %+v", got, want)
	}
	assert.Contains(t, res.InlineReason, "read of the stored table failed")
	assert.NotContains(t, res.InlineReason, "Code", "no engine internals in the answer")

	last := rec.runEvents()[len(rec.runEvents())-1]
	assert.Equal(t, "req-42", last.RequestID)
	if err := last.ReadErr; err == nil || !strings.Contains(err.Error(), "Cannot convert string") {
		t.Errorf("error %v does not contain %q", err, "Cannot convert string")
	}
	assert.Equal(t, res.InlineReason, last.InlineReason)
	n, err := testutil.GatherAndCount(reg, "endpointkit_stored_read_failures_total")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
	# HELP endpointkit_stored_read_failures_total Reads of a materialized endpoint's stored table the database refused; each run went inline.
	# TYPE endpointkit_stored_read_failures_total counter
	endpointkit_stored_read_failures_total 1
	`), "endpointkit_stored_read_failures_total"), "counted once")

	ep, err := env.Service.Get(ctx, env.Project, "m")
	require.NoError(t, err)
	if v := ep.Materialization.ReadError; v == "" {
		t.Errorf("the status shows the failed read: ep.Materialization.ReadError is empty")
	}
	assert.NotNil(t, ep.Materialization.ReadFailedAt, "ep.Materialization.ReadFailedAt is nil")
	assert.NotContains(t, ep.Materialization.ReadError, "Code: 53")

	// A refresh builds a new table: the failure of the old one is gone.
	fail.Store(false)
	require.NoError(t, env.Service.Materialize(ctx, env.Project, "m"))
	ep, err = env.Service.Get(ctx, env.Project, "m")
	require.NoError(t, err)
	if v := ep.Materialization.ReadError; !(v == "") {
		t.Errorf("ep.Materialization.ReadError = %v, want it empty", v)
	}
}

// trendsByBrowserCountry breaks pageviews down by browser and country.
const trendsByBrowserCountry = `{"kind": "TrendsQuery",
	"series": [{"kind": "EventsNode", "event": "$pageview"}],
	"interval": "day",
	"dateRange": {"date_from": "2025-05-01", "date_to": "2025-05-31"},
	"breakdownFilter": {"breakdowns": [{"property": "$browser", "type": "event"}, {"property": "country", "type": "event"}]}}`

// retentionByBrowser is a daily first-time retention of sign-ups broken
// down by browser.
const retentionByBrowser = `{"kind": "RetentionQuery",
	"retentionFilter": {"targetEntity": {"id": "signed_up", "type": "events"}, "returningEntity": {"id": "$pageview", "type": "events"},
		"period": "Day", "totalIntervals": 5, "retentionType": "retention_first_time"},
	"dateRange": {"date_from": "2025-05-20", "date_to": "2025-05-31"},
	"breakdownFilter": {"breakdown": "$browser", "breakdown_type": "event"}}`

func execOf(e *env) driver.Executor { return sqlexec.New(e.db, engine.SQLite) }

func asError(t *testing.T, err error) *endpoint.Error {
	t.Helper()
	var e *endpoint.Error
	require.ErrorAs(t, err, &e)
	return e
}

// TestInsightTrendsBreakdownFilter: for each breakdown value, the run
// filtered to it returns exactly the matching series of the unfiltered run;
// the unfiltered run itself agrees with a count of the generated events.
func TestInsightTrendsBreakdownFilter(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	all := e.runInsight(t, "trends", map[string]any{})
	require.Len(t, all.Series, len(demo.Browsers))
	want := map[string]float64{}
	from, to := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	err := demo.Generate(insightEvents, 11, func(ev demo.Event) error {
		if ev.Event == "$pageview" && !ev.Timestamp.Before(from) && ev.Timestamp.Before(to) {
			want[ev.Properties.Browser]++
		}
		return nil
	})
	require.NoError(t, err)
	for _, s := range all.Series {
		b := s.BreakdownValue.(string)
		if s.Count != want[b] || s.Count == 0 || len(s.Days) != 31 {
			t.Errorf("series %s: count %v over %d days, want %v over 31", b, s.Count, len(s.Days), want[b])
		}
		one := e.runInsight(t, "trends", map[string]any{"$browser": b})
		if assert.Len(t, one.Series, 1, "run with $browser=%s: %+v, want only %+v", b, one.Series, s) {
			assert.Equal(t, s, one.Series[0], "run with $browser=%s: %+v, want only %+v", b, one.Series, s)
		}
	}
	none := e.runInsight(t, "trends", map[string]any{"$browser": "Netscape"})
	assert.Empty(t, none.Series, "a browser without events")
}

// TestInsightTwoBreakdowns: both breakdown variables select one series; one
// of them selects every series with that value. The query keeps all 50
// browser and country pairs (the default limit would fold 25 of them into
// an Other series that no variable selects).
func TestInsightTwoBreakdowns(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends2", insightQuery(t, strings.Replace(trendsByBrowserCountry, `"breakdownFilter": {`, `"breakdownFilter": {"breakdown_limit": 100, `, 1)))
	all := e.runInsight(t, "trends2", nil)
	require.GreaterOrEqual(t, len(all.Series), 20)
	byBrowser := map[string][]insight.TrendsSeries{}
	for _, s := range all.Series {
		v := s.BreakdownValue.([]string)
		byBrowser[v[0]] = append(byBrowser[v[0]], s)
		if v[0] != "Chrome" && v[0] != "Edge" {
			continue // both variables: a sample is enough for the time
		}
		one := e.runInsight(t, "trends2", map[string]any{"$browser": v[0], "country": v[1]})
		if assert.Len(t, one.Series, 1, "run with %v: %+v, want only %+v", v, one.Series, s) {
			assert.Equal(t, s, one.Series[0], "run with %v: %+v, want only %+v", v, one.Series, s)
		}
	}
	for b, series := range byBrowser {
		got := e.runInsight(t, "trends2", map[string]any{"$browser": b})
		assert.True(t, sameSeries(got.Series, series), "run with $browser=%s: %d series, want the %d of that browser", b, len(got.Series), len(series))
	}
}

// sameSeries compares series regardless of order (ties in count may sort
// differently once other series are gone).
func sameSeries(a, b []insight.TrendsSeries) bool {
	key := func(s insight.TrendsSeries) string { return fmt.Sprint(s.BreakdownValue) }
	sort := func(s []insight.TrendsSeries) []insight.TrendsSeries {
		s = slices.Clone(s)
		slices.SortFunc(s, func(x, y insight.TrendsSeries) int { return strings.Compare(key(x), key(y)) })
		return s
	}
	return reflect.DeepEqual(sort(a), sort(b))
}

// TestInsightDateVariables: date_from and date_to narrow the range to the
// days given, both included; each day's value is unchanged, alone and
// combined with a breakdown variable.
func TestInsightDateVariables(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	all := e.runInsight(t, "trends", nil)
	days := []string{"2025-05-10", "2025-05-11", "2025-05-12"}
	for _, vars := range []map[string]any{
		{"date_from": "2025-05-10", "date_to": "2025-05-12"},
		{"date_from": "2025-05-10", "date_to": "2025-05-12", "$browser": "Safari"},
	} {
		got := e.runInsight(t, "trends", vars)
		var want []insight.TrendsSeries
		for _, s := range all.Series {
			if b, ok := vars["$browser"]; ok && s.BreakdownValue != b {
				continue
			}
			w := s
			w.Days, w.Data, w.Labels, w.Count = days, s.Data[9:12], s.Labels[9:12], 0
			for _, v := range w.Data {
				w.Count += v
			}
			if w.Count > 0 {
				want = append(want, w)
			}
		}
		if assert.NotEmpty(t, want, "run with %v: %+v, want %+v", vars, got.Series, want) {
			assert.True(t, sameSeries(got.Series, want), "run with %v: %+v, want %+v", vars, got.Series, want)
		}
	}
	// date_from alone keeps the saved date_to.
	got := e.runInsight(t, "trends", map[string]any{"date_from": "2025-05-30"})
	for _, s := range got.Series {
		require.Equal(t, []string{"2025-05-30", "2025-05-31"}, s.Days, "date_from alone: days")
	}
}

// TestInsightRetentionBreakdownFilter: for each browser, the filtered
// retention equals that browser's cohorts of the unfiltered one.
func TestInsightRetentionBreakdownFilter(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "retention", insightQuery(t, retentionByBrowser))
	all := e.runInsight(t, "retention", nil)
	byBrowser := map[any][]insight.Cohort{}
	for _, c := range all.Cohorts {
		byBrowser[c.BreakdownValue] = append(byBrowser[c.BreakdownValue], c)
	}
	require.Len(t, byBrowser, len(demo.Browsers), "cohorts of")
	sized := 0
	for b, want := range byBrowser {
		got := e.runInsight(t, "retention", map[string]any{"$browser": b})
		assert.Equal(t, want, got.Cohorts, "run with $browser=%v", b)
		for _, c := range want {
			if c.Values[0].Count > 0 {
				sized++
			}
		}
	}
	require.NotEqual(t, 0, sized, "every cohort is empty: the test data proves nothing")
	got := e.runInsight(t, "retention", map[string]any{"$browser": "Chrome", "date_from": "2025-05-25"})
	for _, c := range got.Cohorts {
		if c.BreakdownValue != "Chrome" || c.Date < "2025-05-25" {
			t.Fatalf("retention with $browser and date_from: cohort %+v", c)
		}
	}
	require.Len(t, got.Cohorts, 7)
}

// TestInsightRunErrors: what a run of an insight endpoint refuses.
func TestInsightRunErrors(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	ten := 10
	tests := []struct {
		name               string
		req                endpoint.RunRequest
		code, detail, attr string
	}{
		{"unknown", endpoint.RunRequest{Variables: map[string]any{"country": "US", "browser": "x", "$browser": "Chrome"}},
			"unknown_variable", "Unknown variable(s): browser, country", "variables.browser"},
		{"bad date", endpoint.RunRequest{Variables: map[string]any{"date_from": "yesterday"}},
			"invalid_variable_value", `Variable 'date_from' must be YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, an RFC 3339 date-time, or a relative date such as -7d, -2w, -1m, -1y, -24h, mStart or -1mStart, got "yesterday"`, "variables.date_from"},
		{"bad date type", endpoint.RunRequest{Variables: map[string]any{"date_to": 20250501}},
			"invalid_variable_value", `Variable 'date_to' must be a string: YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, an RFC 3339 date-time, or a relative date such as -7d, -2w, -1m, -1y, -24h, mStart or -1mStart, got 20250501`, "variables.date_to"},
		{"bad breakdown", endpoint.RunRequest{Variables: map[string]any{"$browser": []any{"Chrome"}}},
			"invalid_variable_value", `Variable '$browser' must be a string (a value of the breakdown property), got ["Chrome"]`, "variables.$browser"},
		{"inverted range", endpoint.RunRequest{Variables: map[string]any{"date_from": "2025-05-20", "date_to": "2025-05-10"}},
			"invalid_variable_value", "", "variables"},
		{"limit", endpoint.RunRequest{Limit: &ten},
			"invalid_input", "limit and offset apply to SQL endpoints only; an insight endpoint returns its whole result.", "limit"},
		{"offset", endpoint.RunRequest{Offset: &ten},
			"invalid_input", "limit and offset apply to SQL endpoints only; an insight endpoint returns its whole result.", "offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.svc.Run(context.Background(), "1", "trends", tt.req)
			got := asError(t, err)
			if got.Status != 400 || got.Code != tt.code || got.Attr != tt.attr || (tt.detail != "" && got.Detail != tt.detail) {
				t.Fatalf("got {%d %s %q attr %q}, want {400 %s %q attr %q}", got.Status, got.Code, got.Detail, got.Attr, tt.code, tt.detail, tt.attr)
			}
		})
	}
}

// TestInsightDebugAndExecutorErrors: debug shows the SQL with markers and
// no values; executor failures map as for SQL endpoints.
func TestInsightDebugAndExecutorErrors(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	res, err := e.svc.Run(context.Background(), "1", "trends", endpoint.RunRequest{Variables: map[string]any{"$browser": "Firefox"}, Debug: true})
	require.NoError(t, err)
	if res.Debug == nil || res.Debug.ArgCount == 0 || !strings.Contains(res.Debug.SQL, "?") || strings.Contains(res.Debug.SQL, "Firefox") || strings.Contains(res.Debug.SQL, "$pageview") {
		t.Fatalf("debug: %+v", res.Debug)
	}
	if res.Debug.RenderMS < 0 || res.Debug.ExecuteMS < 0 {
		t.Fatalf("negative timings: %+v", res.Debug)
	}

	var saved atomic.Bool
	saved.Store(true) // an insight's save runs no query
	bad := newEnv(t, func(c *endpoint.Config) { c.Executor = failingAfterSave(&saved, false) })
	bad.create(t, "trends", insightQuery(t, trendsByBrowser))
	_, err = bad.svc.Run(context.Background(), "1", "trends", endpoint.RunRequest{})
	wantError(t, err, http.StatusBadGateway, "execution_failed", "query execution failed", "")

	wrongRows := newEnv(t, func(c *endpoint.Config) {
		c.Executor = answering(&driver.Result{Rows: [][]any{{"not", "a", "trends", "row", "at all"}}})
	})
	wrongRows.create(t, "trends", insightQuery(t, trendsByBrowser))
	_, err = wrongRows.svc.Run(context.Background(), "1", "trends", endpoint.RunRequest{})
	wantError(t, err, http.StatusBadGateway, "execution_failed", "query execution failed", "")
}

// TestInsightConcurrentRuns: runs share the cached decoded query; runs with
// different values at once each get their own filter (Apply copies).
func TestInsightConcurrentRuns(t *testing.T) {
	e := newInsightEnv(t)
	e.create(t, "trends", insightQuery(t, trendsByBrowser))
	want := map[string]*insight.Result{}
	for _, b := range demo.Browsers {
		want[b] = e.runInsight(t, "trends", map[string]any{"$browser": b})
	}
	errs := make(chan error, 4*len(demo.Browsers))
	var wg sync.WaitGroup
	for range 4 {
		for _, b := range demo.Browsers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := e.svc.Run(context.Background(), "1", "trends", endpoint.RunRequest{Variables: map[string]any{"$browser": b}})
				// A run that joined another's has its series as JSON.
				if err == nil && !sameJSON(res.Results, want[b]) {
					err = fmt.Errorf("concurrent run with $browser=%s: %+v, want %+v", b, res.Results, want[b])
				}
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	all := e.runInsight(t, "trends", nil)
	require.Len(t, all.Series, len(demo.Browsers), "after filtered runs the unfiltered run has")
}

// BenchmarkInsightRun runs an inline insight endpoint through the Service
// on real SQLite: the daily pageview trend by browser over May, filtered
// to one browser, on 100,000 demo events. Nearly all of it is SQLite's
// time; compare with insight's BenchmarkTrendsInline for the library's
// own share.
func BenchmarkInsightRun(b *testing.B) {
	e := newEnv(b)
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	require.NoError(b, demo.Load(context.Background(), e.db, n, 11))
	var q endpoint.Query
	require.NoError(b, q.UnmarshalJSON([]byte(trendsByBrowser)))
	e.create(b, "trends", &q)
	req := endpoint.RunRequest{Variables: map[string]any{"$browser": "Chrome"}}
	ctx := context.Background()
	for b.Loop() {
		res, err := e.svc.Run(ctx, "1", "trends", req)
		require.NoError(b, err)
		s := res.Results.(*insight.Result).Series
		require.Len(b, s, 1, "series %+v", s)
		require.NotEqual(b, float64(0), s[0].Count, "series %+v", s)
	}
}

// TestMaterializedSQLEqualsInline: after a refresh, runs read the stored
// table and answer exactly what the same query inline answers, for many
// values drawn from the data (countries with and without purchases, empty
// and reversed ranges), dates off the day boundary included: their partial
// days come from the source.
func TestMaterializedSQLEqualsInline(t *testing.T) {
	e, _ := newMatEnv(t, 20_000)
	q := e.daily()
	ep := e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	m := ep.Materialization
	if !m.CanMaterialize || m.Reason != "" || m.Status != endpoint.StatusPending || m.LastMaterializedAt != nil {
		t.Fatalf("materialization after create = %+v, want can_materialize and pending", m)
	}
	require.Equal(t, endpoint.Seconds(endpoint.DefaultDataFreshness*time.Second), endpoint.Seconds(ep.MaterializationFreshness), "freshness = %v, data freshness %d, want the default data freshness", time.Duration(ep.MaterializationFreshness), ep.DataFreshnessSeconds)
	require.Equal(t, endpoint.DefaultDataFreshness, ep.DataFreshnessSeconds, "freshness = %v, data freshness %d, want the default data freshness", time.Duration(ep.MaterializationFreshness), ep.DataFreshnessSeconds)
	require.False(t, e.mustRun(t, "daily", runVars("US", "2025-05-01", "2025-05-08")).EndpointMaterialized, "a run before the first refresh read a table")
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
		require.Equal(t, wantMaterialized, got.EndpointMaterialized, "%v: endpoint_materialized", vars)
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
		// Off a day's start: the partial days come from the source, merged
		// with the stored whole days, still materialized and exact.
		check(runVars(c, offDay[i%len(offDay)], "2025-06-01"), true)
		check(runVars(c, "2025-04-01", offDay[(i+1)%len(offDay)]), true)
	}
	require.GreaterOrEqual(t, n, 100, "runs, %d materialized", materialized)
	require.Equal(t, n, materialized, "runs, %d materialized", materialized)
	// The answer holds rows at all: the comparison is not of empty results.
	rows := e.mustRun(t, "daily", runVars("US", "2025-03-03", "2025-06-01")).Results.([][]any)
	require.GreaterOrEqual(t, len(rows), 80)
}

// TestMaterializedPaging: limit and offset page a materialized read as they
// page the inline query.
func TestMaterializedPaging(t *testing.T) {
	e, _ := newMatEnv(t, 5000)
	q := e.daily()
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	e.materialize(t, "daily")
	for _, p := range [][2]int{{5, 0}, {5, 3}, {1000, 0}, {3, 1000}, {0, 0}} {
		limit, offset := p[0], p[1]
		req := endpoint.RunRequest{Variables: runVars("US", "2025-03-03", "2025-06-01"), Limit: &limit, Offset: &offset}
		got, err := e.svc.Run(context.Background(), "1", "daily", req)
		require.NoError(t, err)
		want, err := e.svc.Run(context.Background(), "1", "inline", req)
		require.NoError(t, err)
		if !got.EndpointMaterialized || !reflect.DeepEqual(got.Results, want.Results) || got.HasMore != want.HasMore {
			t.Fatalf("limit %d offset %d: %v %v, want %v %v", limit, offset, got.Results, got.HasMore, want.Results, want.HasMore)
		}
	}
}

// TestMaterializedRequiresEveryVariable: every variable of a materialized
// SQL endpoint is required, whether the table or the inline query answers.
func TestMaterializedRequiresEveryVariable(t *testing.T) {
	e, _ := newMatEnv(t, 1000)
	e.createMat(t, "daily", e.daily(), endpoint.CreateRequest{})
	for _, refreshed := range []bool{false, true} {
		if refreshed {
			e.materialize(t, "daily")
		}
		_, err := e.svc.Run(context.Background(), "1", "daily", endpoint.RunRequest{Variables: map[string]any{"country": "US"}})
		wantError(t, err, 400, endpoint.CodeRequiredVariableMissing, "Required variable(s) 'from', 'to' not provided", "variables.from")
		_, err = e.svc.Run(context.Background(), "1", "daily", endpoint.RunRequest{Variables: map[string]any{"country": "US", "from": "2025-05-01", "to": "someday"}})
		require.Equal(t, endpoint.CodeInvalidVariableValue, asError(t, err).Code, "bad date: %v", err)
	}
}

// storedReads returns the row counts of the queries x was given that
// read a stored table (the last run of each query text), and forgets every
// query.
func storedReads(x *heldexec.Fake) []int {
	rows := map[string]int{}
	for _, c := range x.Calls() {
		rows[c.SQL] = c.Rows
	}
	x.Reset()
	var n []int
	for q, r := range rows {
		if strings.Contains(q, "endpointkit_mat_") {
			n = append(n, r)
		}
	}
	return n
}

// newPageEnv is newEnv with demo events and a Service whose executor counts
// the rows each query returns.
func newPageEnv(t *testing.T, events int) (*env, *heldexec.Fake) {
	t.Helper()
	e := newEnv(t)
	require.NoError(t, demo.Load(context.Background(), e.db, events, 7))
	x := heldexec.NewFake(execOf(e))
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: x, Now: e.clock.Now})
	require.NoError(t, err)
	e.svc = svc
	return e, x
}

// TestMaterializedReadsOnePage: a materialized run with limit N reads at
// most N+1 rows of the stored table (the one more tells has_more), and
// answers what the inline run answers. Paging the read in Go instead would
// read every day of the country's purchases.
func TestMaterializedReadsOnePage(t *testing.T) {
	e, x := newPageEnv(t, 5000)
	q := e.daily()
	e.createMat(t, "daily", q, endpoint.CreateRequest{})
	e.create(t, "inline", q)
	e.materialize(t, "daily")
	vars := runVars("US", "2025-03-03", "2025-06-01")
	all := e.mustRun(t, "daily", vars).Results.([][]any)
	require.GreaterOrEqual(t, len(all), 50)
	storedReads(x)
	for _, p := range [][2]int{{1, 0}, {1, 40}, {5, 10}, {0, 0}, {3, 1000}} {
		limit, offset := p[0], p[1]
		req := endpoint.RunRequest{Variables: vars, Limit: &limit, Offset: &offset}
		got, err := e.svc.Run(context.Background(), "1", "daily", req)
		require.NoError(t, err)
		reads := storedReads(x)
		require.True(t, got.EndpointMaterialized, "limit %d offset %d: materialized %v, stored reads %v", limit, offset, got.EndpointMaterialized, reads)
		require.Len(t, reads, 1, "limit %d offset %d: materialized %v, stored reads %v", limit, offset, got.EndpointMaterialized, reads)
		require.LessOrEqual(t, reads[0], limit+1, "limit %d offset %d: the read", limit, offset)
		want, err := e.svc.Run(context.Background(), "1", "inline", req)
		require.NoError(t, err)
		require.Equal(t, want.Results, got.Results, "limit %d offset %d: %v %v, want %v %v", limit, offset, got.Results, got.HasMore, want.Results, want.HasMore)
		require.Equal(t, want.HasMore, got.HasMore, "limit %d offset %d: %v %v, want %v %v", limit, offset, got.Results, got.HasMore, want.Results, want.HasMore)
	}
}

// topBuyers is a query whose own ORDER BY and LIMIT pick its rows before
// a run's page is taken from them.
const topBuyers = `SELECT distinct_id, count(*) AS purchases, sum(amount) AS spent
FROM (SELECT distinct_id, json_extract(properties, '$.country') AS country, json_extract(properties, '$.amount') AS amount
      FROM events WHERE event = 'purchase') AS p
WHERE country = {variables.country}
GROUP BY distinct_id ORDER BY purchases DESC, spent DESC, distinct_id LIMIT 7`

// latestEvents pages plain rows ordered by a column it does not select
// first.
const latestEvents = `SELECT uuid, event
FROM (SELECT uuid, event, timestamp, json_extract(properties, '$.country') AS country FROM events) AS e
WHERE country = {variables.country} ORDER BY timestamp DESC, uuid`

// TestMaterializedPagesOwnLimit: pages of a materialized run equal the
// inline run's pages for a query with its own LIMIT (the LIMIT first, then
// the page) and for plain rows, each read returning at most a page and
// one row.
func TestMaterializedPagesOwnLimit(t *testing.T) {
	e, x := newPageEnv(t, 5000)
	for _, sql := range []string{topBuyers, latestEvents} {
		q := e.query(sql, "country")
		e.createMat(t, "mat", q, endpoint.CreateRequest{})
		e.create(t, "inline", q)
		e.materialize(t, "mat")
		storedReads(x) // the refresh counts the rows it built
		for _, country := range []string{"US", "DE", "XX"} {
			vars := map[string]any{"country": country}
			for _, p := range [][2]int{{3, 0}, {3, 3}, {3, 6}, {10, 0}, {0, 0}, {2, 6}, {2, 10}} {
				limit, offset := p[0], p[1]
				req := endpoint.RunRequest{Variables: vars, Limit: &limit, Offset: &offset}
				got, err := e.svc.Run(context.Background(), "1", "mat", req)
				require.NoError(t, err)
				reads := storedReads(x)
				if !got.EndpointMaterialized || len(reads) != 1 || reads[0] > limit+1 {
					t.Fatalf("%s limit %d offset %d: materialized %v, rows read %v", country, limit, offset, got.EndpointMaterialized, reads)
				}
				want, err := e.svc.Run(context.Background(), "1", "inline", req)
				require.NoError(t, err)
				if !reflect.DeepEqual(got.Results, want.Results) || !reflect.DeepEqual(got.Columns, want.Columns) || got.HasMore != want.HasMore {
					t.Fatalf("%s limit %d offset %d:\nmaterialized %v %v\ninline       %v %v", country, limit, offset, got.Results, got.HasMore, want.Results, want.HasMore)
				}
			}
		}
		// The query's LIMIT caps the rows whatever the page.
		if sql == topBuyers {
			limit := 100
			res, err := e.svc.Run(context.Background(), "1", "mat", endpoint.RunRequest{Variables: map[string]any{"country": "US"}, Limit: &limit})
			if err != nil || len(res.Results.([][]any)) != 7 || res.HasMore {
				t.Fatalf("US top buyers: %v, has_more %v, %v; want 7 rows", res.Results, res.HasMore, err)
			}
			storedReads(x)
		}
		for _, name := range []string{"mat", "inline"} {
			require.NoError(t, e.svc.Delete(context.Background(), "1", name))
		}
	}
}

// customerDays is "orders and revenue per day of one customer": grouped by
// day, with the customer compared to a variable, so that the stored table
// holds one row per customer and day.
const customerDays = `SELECT day, count(*) AS orders, sum(amount) AS revenue FROM sales
WHERE customer = {variables.customer} GROUP BY day ORDER BY day`

// bigCustomerDays is how many days the customer a read benchmark selects
// has orders on: more than the page of 100 rows it asks for.
const bigCustomerDays = 150

// salesSQL fills sales with customer c0 ordering twice on each of
// bigCustomerDays days, and each of the customers c1 to c<n-1> (n being
// the first argument) twice on two days: 2*(n-1) + 300 rows whose
// materialization holds n customers, at most 2*(n-1) + 150 stored rows.
const salesSQL = `INSERT INTO sales (customer, day, amount)
WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ?1 - 1),
big(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM big WHERE i < 2 * ?2 - 1)
SELECT 'c' || i, date('2025-01-01', '+' || (i % 7) || ' days'), i % 100 FROM seq WHERE i > 0
UNION ALL SELECT 'c' || i, date('2025-01-01', '+' || (i % 5) || ' days'), i % 50 FROM seq WHERE i > 0
UNION ALL SELECT 'c0', date('2025-01-01', '+' || (i / 2) || ' days'), i FROM big`

// newMatReadService returns a Service over a SQLite database of sales by
// groups customers, with customerDays saved as the materialized endpoint
// "days" and refreshed.
func newMatReadService(b *testing.B, groups int) *endpoint.Service {
	b.Helper()
	ctx := context.Background()
	db := testdb.SQLite(b)
	if _, err := db.Exec(`CREATE TABLE sales (customer TEXT NOT NULL, day TEXT NOT NULL, amount INTEGER NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(salesSQL, groups, bigCustomerDays); err != nil {
		b.Fatal(err)
	}
	svc := memService(b, sqlexec.New(db, engine.SQLite), func(c *endpoint.Config) {
		c.Now = func() time.Time { return time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC) }
	})
	v, err := svc.CreateVariable(ctx, "1", variable.Variable{Name: "Customer", Type: variable.String})
	require.NoError(b, err)
	q := &endpoint.Query{Kind: endpoint.KindSQL, SQL: customerDays,
		Variables: map[string]endpoint.VariableRef{v.ID: {VariableID: v.ID, CodeName: v.CodeName}}}
	if _, err := svc.Create(ctx, "1", endpoint.CreateRequest{Name: "days", Query: q, IsMaterialized: true}); err != nil {
		b.Fatal(err)
	}
	require.NoError(b, svc.Materialize(ctx, "1", "days"))
	return svc
}

// BenchmarkMaterializedRead runs a materialized endpoint grouped by a
// column of 10, 1,000 and 100,000 distinct values, with an equality
// variable selecting one value (the customer with 150 days) and limit 100.
// A read's cost should not grow with the number of groups stored beside
// the one it selects.
func BenchmarkMaterializedRead(b *testing.B) {
	for _, groups := range []int{10, 1000, 100_000} {
		b.Run(fmt.Sprintf("groups=%d", groups), func(b *testing.B) {
			svc := newMatReadService(b, groups)
			ctx := context.Background()
			limit := 100
			req := endpoint.RunRequest{Variables: map[string]any{"customer": "c0"}, Limit: &limit}
			for b.Loop() {
				res, err := svc.Run(ctx, "1", "days", req)
				require.NoError(b, err)
				if !res.EndpointMaterialized || len(res.Results.([][]any)) != limit || !res.HasMore {
					b.Fatalf("materialized %v, %d rows, has_more %v", res.EndpointMaterialized, len(res.Results.([][]any)), res.HasMore)
				}
			}
		})
	}
}

// keptRows is a RowWriter that keeps the head and a copy of each row.
type keptRows struct {
	head *endpoint.RunResult
	rows [][]any
}

// newRecordedEnv is newEnv with its executor wrapped in a RowFake, which
// records the statements read with QueryRows and the rows handed over,
// then more applied to the Config.
func newRecordedEnv(t *testing.T, more func(*endpoint.Config)) (*env, *heldexec.RowFake) {
	var rec *heldexec.RowFake
	e := newEnv(t, func(c *endpoint.Config) {
		rec = heldexec.NewRowFake(c.Executor.(driver.RowQuerier))
		c.Executor = rec
		more(c)
	})
	return e, rec
}

// storedTailAndInline loads the demo events and saves propertyDistinct
// twice: "tail", materialized with a live tail, and "inline"; it
// materializes "tail", moves the clock two hours on, and returns the
// variables of a range with unaligned ends (partial days at both edges,
// and the tail) and the inline run's answer to them, which is not empty.
func (e *env) storedTailAndInline(t *testing.T) (map[string]any, *endpoint.RunResult) {
	t.Helper()
	require.NoError(t, demo.Load(context.Background(), e.db, 5000, 7))
	q := e.query(propertyDistinct, "country", "from", "to")
	e.createMat(t, "tail", q, endpoint.CreateRequest{MaterializationTail: "timestamp"})
	e.create(t, "inline", q)
	e.materialize(t, "tail")
	e.clock.Advance(2 * time.Hour)
	vars := runVars("US", "2025-05-25T06:30:00Z", "2025-06-01T12:30:00Z")
	want := e.mustRun(t, "inline", vars)
	require.NotEmpty(t, want.Results)
	return vars, want
}

func (k *keptRows) Begin(head *endpoint.RunResult) error { k.head = head; return nil }
func (k *keptRows) Row(row []any) error {
	k.rows = append(k.rows, append([]any(nil), row...))
	return nil
}

// TestRunRowsStoredTable: a run of a materialized endpoint that reads its
// stored table streams that read (RunRows hands the rows to its writer as
// the executor reads them, through QueryRows, and Query reads nothing),
// the partial buckets of an unaligned range and the live tail included:
// the one statement the plan prints, which merges them with the stored
// rows. Its rows are the inline run's. With the result cache on, an
// answer the cache holds is the cache's (no statement runs), whole, for
// the caller to write.
func TestRunRowsStoredTable(t *testing.T) {
	for _, cached := range []bool{false, true} {
		name := "no cache"
		if cached {
			name = "result cache"
		}
		t.Run(name, func(t *testing.T) {
			e, rec := newRecordedEnv(t, func(c *endpoint.Config) {
				if cached {
					c.ResultCache = memstore.NewResultCache(1 << 20)
				}
			})
			vars, want := e.storedTailAndInline(t)

			if cached {
				// The answer the cache then holds is written from it.
				first := e.mustRun(t, "tail", vars)
				require.True(t, first.EndpointMaterialized)
			}
			rec.Reset()
			w := &keptRows{}
			res, err := e.svc.RunRows(context.Background(), "1", "tail", endpoint.RunRequest{Variables: vars}, w)
			require.NoError(t, err)
			assert.True(t, res.EndpointMaterialized, "the stored table answered")
			assert.Zero(t, rec.Queries(), "statements read with Query")
			if cached {
				assert.True(t, res.IsCached)
				assert.Nil(t, w.head, "a cached answer is the caller's to write, whole")
				assert.Empty(t, rec.Streams(), "no statement runs for a cached answer")
				assert.Equal(t, resultsJSON(t, want), resultsJSON(t, res))
				return
			}
			require.Len(t, rec.Streams(), 1, "the read is one statement, streamed")
			assert.Contains(t, rec.Streams()[0].SQL, "endpointkit_", "the statement reads the stored table")
			assert.Contains(t, strings.ToLower(rec.Streams()[0].SQL), "events", "and the source, for the edges and the tail")
			assert.Nil(t, res.Results, "the rows went to the writer")
			require.NotNil(t, w.head)
			assert.Equal(t, want.Columns, w.head.Columns)
			assert.EqualValues(t, len(w.rows), rec.RowsHanded())
			assert.Equal(t, want.Results, w.rows)
		})
	}
}

// TestRunRowsStoredTableFillsCache: with the result cache on, a streamed
// run that reads a materialized endpoint's stored table (its edges and
// tail from the source) writes its rows to its writer as they are read,
// and keeps its answer in the cache as they pass: the next run is the
// cache's, with the inline run's results. A run asking refresh "force"
// streams and keeps its answer too.
func TestRunRowsStoredTableFillsCache(t *testing.T) {
	obs := &recorder{}
	e, rec := newRecordedEnv(t, func(c *endpoint.Config) {
		c.ResultCache = memstore.NewResultCache(1 << 20)
		c.Observer = obs
	})
	vars, want := e.storedTailAndInline(t)

	for _, refresh := range []string{"", endpoint.RefreshForce} {
		rec.Reset()
		w := &keptRows{}
		res, err := e.svc.RunRows(context.Background(), "1", "tail", endpoint.RunRequest{Variables: vars, Refresh: refresh}, w)
		require.NoError(t, err)
		assert.False(t, res.IsCached)
		assert.True(t, res.EndpointMaterialized, "the stored table answered")
		require.Len(t, rec.Streams(), 1, "the read is one statement, streamed")
		assert.Zero(t, rec.Queries(), "statements read with Query")
		require.NotNil(t, w.head)
		assert.Equal(t, want.Results, w.rows)
		assert.NoError(t, obs.lastRun(t).CacheErr)

		rec.Reset()
		cached := e.mustRun(t, "tail", vars)
		assert.True(t, cached.IsCached, "refresh %q: the next run is the cache's", refresh)
		assert.Empty(t, rec.Streams())
		assert.Zero(t, rec.Queries())
		assert.True(t, cached.EndpointMaterialized)
		assert.Equal(t, resultsJSON(t, want), resultsJSON(t, cached))
	}
}

// TestAnswerNotCachedIsTold: an answer that weighs more than
// MaxCachedAnswerBytes is answered and not kept, whether the run computed
// it whole (Run) or streamed it (RunRows): the run that computed it tells
// why (RunEvent.CacheErr, ErrAnswerNotCached), and the next run computes
// again. A smaller one is kept, and the run tells nothing.
func TestAnswerNotCachedIsTold(t *testing.T) {
	obs := &recorder{}
	e, _ := newRecordedEnv(t, func(c *endpoint.Config) {
		c.ResultCache = memstore.NewResultCache(1 << 20)
		c.MaxCachedAnswerBytes = 200
		c.Observer = obs
	})
	e.create(t, "all", e.query("SELECT id, country, amount FROM orders ORDER BY id"))
	e.create(t, "one", e.query("SELECT id FROM orders ORDER BY id LIMIT 1"))
	ctx := context.Background()

	for _, streamed := range []bool{false, true} {
		run := func(name string) *endpoint.RunResult {
			if streamed {
				res, err := e.svc.RunRows(ctx, "1", name, endpoint.RunRequest{}, &keptRows{})
				require.NoError(t, err)
				return res
			}
			return e.mustRun(t, name, nil)
		}
		first := run("all")
		assert.False(t, first.IsCached)
		err := obs.lastRun(t).CacheErr
		require.ErrorIs(t, err, endpoint.ErrAnswerNotCached, "streamed %v", streamed)
		assert.Contains(t, err.Error(), "max_cached_answer_bytes (200 bytes)")
		assert.False(t, run("all").IsCached, "nothing was kept")

		small := run("one")
		assert.NoError(t, obs.lastRun(t).CacheErr)
		if !streamed {
			assert.False(t, small.IsCached)
		}
		assert.True(t, run("one").IsCached)
	}
}
