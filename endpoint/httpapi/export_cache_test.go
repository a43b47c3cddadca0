package httpapi_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/exportbench"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// cacheErrors is an Observer keeping the RunEvent.CacheErr of each run.
type cacheErrors struct {
	mu   sync.Mutex
	errs []error
}

func (o *cacheErrors) ObserveRun(_ context.Context, ev endpoint.RunEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.errs = append(o.errs, ev.CacheErr)
}

func (o *cacheErrors) ObserveRefresh(context.Context, endpoint.RefreshEvent) {}

func (o *cacheErrors) last() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.errs) == 0 {
		return nil
	}
	return o.errs[len(o.errs)-1]
}

// cachedExportHandler is exportHandler with a result cache of 64 MiB and
// answers of at most maxCached bytes kept there (0: the default).
func cachedExportHandler(tb testing.TB, exec *heldexec.RowFake, n int, maxCached int64) (http.Handler, *endpoint.Service, *cacheErrors) {
	tb.Helper()
	obs := &cacheErrors{}
	h, svc := exportServer(tb, exec, n, func(c *endpoint.Config) {
		c.MaxResultBytes, c.ResultCache, c.MaxCachedAnswerBytes, c.Observer = -1, memstore.NewResultCache(64<<20), maxCached, obs
	})
	return h, svc, obs
}

// TestExportStreamsWithResultCache: with a result cache configured, a CSV
// or NDJSON export is written as the executor reads its rows (it was
// computed whole first, to be cached), and the answer is kept in the
// cache as the rows pass: the next run, as JSON or in the format again,
// is the cache's, no row read, the same results as a run computed whole.
func TestExportStreamsWithResultCache(t *testing.T) {
	const n = 20000
	forTextExports(t, n, func(t *testing.T, db *sql.DB, exec *heldexec.RowFake, format string) {
		h, svc, obs := cachedExportHandler(t, exec, n, 0)
		saved := exec.Queries() // the save's description of the query
		first := streamedExport(t, h, exec, n, format)
		assert.NoError(t, obs.last(), "the answer was kept")

		again := &keptBody{firstWrite: firstWrite{Discard: exportbench.NewDiscard(), exec: exec}}
		h.ServeHTTP(again, exportRequest(t, n, format))
		require.Equal(t, http.StatusOK, again.Status)
		assert.EqualValues(t, n, exec.RowsHanded(), "the second export read no row: the cache answered it")
		assert.Equal(t, first.body.String(), again.body.String())

		limit := n
		cached, err := svc.Run(context.Background(), "1", "export", endpoint.RunRequest{Limit: &limit})
		require.NoError(t, err)
		assert.True(t, cached.IsCached, "the JSON run is the cache's")
		assert.EqualValues(t, n, exec.RowsHanded())
		assert.EqualValues(t, saved, exec.Queries())

		// The results as a run computed whole writes them, byte for
		// byte (floats such as 5.0 included).
		_, uncached := exportHandler(t, sqlexec.New(db, engine.SQLite), n, -1)
		plain, err := uncached.Run(context.Background(), "1", "export", endpoint.RunRequest{Limit: &limit})
		require.NoError(t, err)
		assert.Equal(t, cachedResults(t, plain), cachedResults(t, cached))
	})
}

// cachedResults is the "results" of res as the HTTP API's JSON answer holds
// them.
func cachedResults(t *testing.T, res *endpoint.RunResult) string {
	t.Helper()
	b, err := json.Marshal(res)
	require.NoError(t, err)
	var a struct {
		Results json.RawMessage `json:"results"`
	}
	require.NoError(t, json.Unmarshal(b, &a))
	return string(a.Results)
}

// TestExportWithResultCacheMemory: an export longer than
// MaxCachedAnswerBytes, with a result cache configured, holds no more than
// an export without one (TestExportMemorySample's bound): its rows stream,
// what it encoded for the cache is let go of at the bound, the run says
// why the answer was not kept (ErrAnswerNotCached), and the next run
// computes again. It grew the heap by 20 MiB and more when the run was
// computed whole to be cached.
func TestExportWithResultCacheMemory(t *testing.T) {
	const n = 50000
	db := exportTable(t, n)
	exec := heldexec.NewRowFake(sqlexec.New(db, engine.SQLite))
	h, _, obs := cachedExportHandler(t, exec, n, 1<<20)
	peak := cachedExportPeak(t, h, n)
	t.Logf("%d rows with the result cache on: heap in use grew by at most %.1f MiB", n, float64(peak)/(1<<20))
	assert.Less(t, peak, uint64(8<<20))
	assert.EqualValues(t, n, exec.RowsHanded())
	err := obs.last()
	require.ErrorIs(t, err, endpoint.ErrAnswerNotCached)
	assert.Contains(t, err.Error(), "max_cached_answer_bytes (1048576 bytes)")

	w := exportbench.NewDiscard()
	h.ServeHTTP(w, exportRequest(t, n, "csv"))
	require.Equal(t, http.StatusOK, w.Status)
	assert.EqualValues(t, 2*n, exec.RowsHanded(), "nothing was kept: the second export reads its rows again")
}

// cachedExportPeak exports n rows through h as CSV, at GOGC=25 as
// exportMemoryOf measures, and returns the heap's peak growth.
func cachedExportPeak(t *testing.T, h http.Handler, n int) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	w := exportbench.NewDiscard()
	req := exportRequest(t, n, "csv")
	peak, _ := exportbench.PeakGrowth(func() { h.ServeHTTP(w, req) })
	require.Equal(t, http.StatusOK, w.Status)
	require.Empty(t, w.Head.Get(httpapi.HeaderError))
	return peak
}

// BenchmarkExportCSVCached: a CSV export of n rows with the result cache
// on against the same export without one, alternated ("library/direct" is
// their time ratio). "kept" asks refresh force, so that each run computes
// its answer and keeps it in the cache (it weighs less than the default
// MaxCachedAnswerBytes); "dropped" bounds the cached answer at 1 MiB, past
// which a run stops encoding its rows for the cache.
//
//	go test ./endpoint/httpapi -run '^$' -bench BenchmarkExportCSVCached -benchtime 20x
func BenchmarkExportCSVCached(b *testing.B) {
	const n = 50000
	db := exportTable(b, n)
	exec := func() *heldexec.RowFake {
		return heldexec.NewRowFake(sqlexec.New(db, engine.SQLite), heldexec.Unrecorded())
	}
	plain, _ := exportHandler(b, sqlexec.New(db, engine.SQLite), n, -1)
	kept, _, _ := cachedExportHandler(b, exec(), n, 0)
	dropped, _, _ := cachedExportHandler(b, exec(), n, 1<<20)
	export := func(h http.Handler, refresh string) func() {
		return func() {
			req := exportRequest(b, n, "csv")
			if refresh != "" {
				body := fmt.Sprintf(`{"limit": %d, "format": "csv", "refresh": %q}`, n, refresh)
				req.Body = io.NopCloser(strings.NewReader(body))
				req.ContentLength = int64(len(body))
			}
			w := exportbench.NewDiscard()
			h.ServeHTTP(w, req)
			require.Equal(b, http.StatusOK, w.Status)
		}
	}
	b.Run("kept", func(b *testing.B) { exportbench.Alternate(b, export(kept, endpoint.RefreshForce), export(plain, "")) })
	b.Run("dropped", func(b *testing.B) { exportbench.Alternate(b, export(dropped, ""), export(plain, "")) })
}
