package endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queryCounter wraps an executor: it counts the queries that reach it,
// can hold each until the test opens its gate, and can report what the
// engine read.
type queryCounter struct {
	driver.Executor
	queries atomic.Int64
	gate    chan struct{} // nil: no gate
	started chan struct{}
	read    *int64 // reported as RowsRead and BytesRead/10 when set
}

func (x *queryCounter) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	x.queries.Add(1)
	if x.gate != nil {
		x.started <- struct{}{}
		select {
		case <-x.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	res, err := x.Executor.Query(ctx, st, b)
	if err == nil && x.read != nil {
		rows, bytes := *x.read, *x.read*10
		res.RowsRead, res.BytesRead = &rows, &bytes
	}
	return res, err
}

// newCacheEnv is newEnv with a result cache of max bytes and a counting
// executor.
func newCacheEnv(t *testing.T, max int64) (*env, *queryCounter, *memstore.ResultCache) {
	t.Helper()
	x := &queryCounter{}
	cache := memstore.NewResultCache(max)
	e := newEnv(t, func(c *endpoint.Config) {
		x.Executor = c.Executor
		c.Executor = x
		c.ResultCache = cache
	})
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
	x.queries.Store(0) // the check of the save
	us := endpoint.RunRequest{Variables: map[string]any{"country": "US"}}

	first := runReq(t, e, "by_country", us)
	if first.IsCached || x.queries.Load() != 1 || first.LastRefresh == nil || !first.LastRefresh.Equal(e.clock.Now()) {
		t.Fatalf("first run: cached %v, %d queries, last_refresh %v", first.IsCached, x.queries.Load(), first.LastRefresh)
	}
	e.clock.Advance(time.Minute)
	second := runReq(t, e, "by_country", us)
	if !second.IsCached || x.queries.Load() != 1 {
		t.Fatalf("second run: cached %v, %d queries", second.IsCached, x.queries.Load())
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
		before := x.queries.Load()
		require.False(t, runReq(t, e, "by_country", req).IsCached, "%s: served from the cache", name)
		require.Equal(t, before+1, x.queries.Load(), "%s: served from the cache", name)
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
	x.queries.Store(0) // the check of the save
	vars := map[string]any{"country": "US"}
	first := runReq(t, e, "plain", endpoint.RunRequest{Variables: vars})
	e.clock.Advance(time.Minute)
	forced := runReq(t, e, "plain", endpoint.RunRequest{Variables: vars, Refresh: "force"})
	if forced.IsCached || x.queries.Load() != 2 || !forced.LastRefresh.After(*first.LastRefresh) {
		t.Fatalf("force: cached %v, %d queries", forced.IsCached, x.queries.Load())
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
	x := &queryCounter{Executor: execOf(e)}
	svc, err := endpoint.New(endpoint.Config{Endpoints: e.eps, Variables: e.vstore, Executor: x, Now: e.clock.Now,
		ResultCache: memstore.NewResultCache(1 << 20)})
	require.NoError(t, err)
	e.svc = svc
	e.createMat(t, "daily", e.query(dailyPurchases, "country", "from", "to"), endpoint.CreateRequest{})
	e.materialize(t, "daily")
	vars := runVars("US", "2025-05-01", "2025-05-08")
	before := x.queries.Load()
	for range 2 {
		res := runReq(t, e, "daily", endpoint.RunRequest{Variables: vars, Refresh: "direct"})
		if res.IsCached || !res.EndpointMaterialized || !res.LastRefresh.Equal(*res.EndpointMaterializedAt) {
			t.Fatalf("direct: cached %v, materialized %v", res.IsCached, res.EndpointMaterialized)
		}
	}
	n := x.queries.Load() - before
	require.Equal(t, int64(2), n, "two direct runs made")
	require.False(t, runReq(t, e, "daily", endpoint.RunRequest{Variables: vars}).IsCached, "a direct run wrote the cache")
}

// TestSingleFlight: identical runs under way at once compute once, with a
// cache and without one; each answer has its own execution id, and the
// runs that waited say is_cached. A waiting run whose context ends gives
// up alone.
func TestSingleFlight(t *testing.T) {
	for _, withCache := range []bool{false, true} {
		t.Run(fmt.Sprintf("cache=%v", withCache), func(t *testing.T) {
			x := &queryCounter{}
			e := newEnv(t, func(c *endpoint.Config) {
				x.Executor = c.Executor
				c.Executor = x
				if withCache {
					c.ResultCache = memstore.NewResultCache(1 << 20)
				}
			})
			e.create(t, "by_country", e.query("SELECT id FROM orders WHERE country = {variables.country} ORDER BY id", "country"))
			// The gate holds the runs, not the check of the save.
			x.queries.Store(0)
			x.gate, x.started = make(chan struct{}), make(chan struct{}, 16)
			req := endpoint.RunRequest{Variables: map[string]any{"country": "US"}}
			const n = 6
			var wg sync.WaitGroup
			results := make(chan *endpoint.RunResult, n)
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := e.svc.Run(context.Background(), "1", "by_country", req)
				assert.NoError(t, err)
				results <- res
			}()
			<-x.started // the first run is executing
			for range n - 1 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := e.svc.Run(context.Background(), "1", "by_country", req)
					assert.NoError(t, err)
					results <- res
				}()
			}
			// A waiter whose context ends gives up with its context's error.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			_, err := e.svc.Run(ctx, "1", "by_country", req)
			cancel()
			wantError(t, err, 504, endpoint.CodeTimeout, "query timed out", "")
			time.Sleep(200 * time.Millisecond) // let the others join the flight
			close(x.gate)
			wg.Wait()
			close(results)
			ids := map[string]bool{}
			computed := 0
			for res := range results {
				ids[res.ExecutionID] = true
				if !res.IsCached {
					computed++
				}
				require.Equal(t, "[[1],[3],[5]]", resultsJSON(t, res), "results")
			}
			if q := x.queries.Load(); q != 1 || computed != 1 || len(ids) != n {
				t.Fatalf("%d queries, %d answers computed, %d execution ids; want 1, 1, %d", q, computed, len(ids), n)
			}
		})
	}
}

// TestStatistics: elapsed_ms is measured; rows_read and bytes_read are
// what the executor reports, null when it reports nothing.
func TestStatistics(t *testing.T) {
	x := &queryCounter{}
	e := newEnv(t, func(c *endpoint.Config) { x.Executor = c.Executor; c.Executor = x })
	e.create(t, "all", e.query("SELECT id FROM orders"))
	res := runReq(t, e, "all", endpoint.RunRequest{})
	if res.Statistics == nil || res.Statistics.RowsRead != nil || res.Statistics.BytesRead != nil || res.Statistics.ElapsedMS < 0 {
		t.Fatalf("statistics without a report = %+v", res.Statistics)
	}
	b, _ := json.Marshal(res.Statistics)
	require.Contains(t, string(b), `"rows_read":null,"bytes_read":null`, "statistics JSON = %s", b)
	read := int64(6)
	x.read = &read
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
	read := int64(7)
	x.read = &read
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
