package httpapi_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/exportbench"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// rowCountingSink counts the rows an executor hands over.
type rowCountingSink struct {
	driver.RowSink
	n *atomic.Int64
}

func (c rowCountingSink) Row(row []any) error { c.n.Add(1); return c.RowSink.Row(row) }

// rowCountingExecutor is sqlexec's executor counting the rows QueryRows
// handed over, and the calls of Query.
type rowCountingExecutor struct {
	*sqlexec.Executor
	rows, queries atomic.Int64
}

func (c *rowCountingExecutor) Query(ctx context.Context, st driver.Statement, b driver.Bounds) (*driver.Result, error) {
	c.queries.Add(1)
	return c.Executor.Query(ctx, st, b)
}

func (c *rowCountingExecutor) QueryRows(ctx context.Context, st driver.Statement, b driver.Bounds, sink driver.RowSink) (*driver.Result, error) {
	return c.Executor.QueryRows(ctx, st, b, rowCountingSink{sink, &c.rows})
}

// exportHandler serves endpoint "export" (exportSQL over db) of project
// 1, no result cache, runs up to n rows, maxBytes as MaxResultBytes.
func exportHandler(tb testing.TB, exec driver.Executor, n int, maxBytes int64, opts ...httpapi.Option) (http.Handler, *endpoint.Service) {
	tb.Helper()
	eps, vars := newStores(tb)
	svc, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Executor: exec, MaxLimit: n, MaxResultBytes: maxBytes})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = svc.Close(context.Background()) })
	_, err = svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "export",
		Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: exportSQL}})
	require.NoError(tb, err)
	keys := httpapi.NewKeyring()
	require.NoError(tb, keys.Add(keyP1, "1"))
	return httpapi.New(svc, keys, append([]httpapi.Option{httpapi.WithLimiter(nil), httpapi.WithMaxAnswerBytes(-1)}, opts...)...), svc
}

func exportRequest(tb testing.TB, limit int, format string) *http.Request {
	body := fmt.Sprintf(`{"limit": %d, "format": %q}`, limit, format)
	req, err := http.NewRequest("POST", "/api/projects/1/endpoints/export/run", strings.NewReader(body))
	require.NoError(tb, err)
	req.Header.Set("Authorization", "Bearer "+keyP1)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// firstWrite records, at the first write of the body, how many rows the
// executor had handed over.
type firstWrite struct {
	*exportbench.Discard
	exec    *rowCountingExecutor
	atFirst int64
}

func (f *firstWrite) Write(b []byte) (int, error) {
	if f.N == 0 {
		f.atFirst = f.exec.rows.Load()
	}
	return f.Discard.Write(b)
}

// TestExportStreamsRows: a CSV and an NDJSON export are written as the
// executor reads the rows (the first bytes go out when a small part of
// them was read), every row once, through QueryRows, not Query.
func TestExportStreamsRows(t *testing.T) {
	const n = 20000
	db := exportTable(t, n)
	for _, format := range []string{"csv", "ndjson"} {
		t.Run(format, func(t *testing.T) {
			exec := &rowCountingExecutor{Executor: sqlexec.New(db, engine.SQLite)}
			h, _ := exportHandler(t, exec, n, -1)
			saved := exec.queries.Load() // the save's description of the query
			w := &firstWrite{Discard: exportbench.NewDiscard(), exec: exec}
			h.ServeHTTP(w, exportRequest(t, n, format))
			require.Equal(t, http.StatusOK, w.Status)
			assert.Empty(t, w.Head.Get(httpapi.HeaderError))
			assert.EqualValues(t, n, exec.rows.Load(), "rows handed over")
			assert.Less(t, w.atFirst, int64(n/4), "rows read before the first byte was written")
			assert.EqualValues(t, saved, exec.queries.Load(), "Query calls (the run's rows must come from QueryRows)")
		})
	}
}

// TestExportStreamCut: an export whose rows pass max_result_bytes after
// its first bytes were sent ends with the CSV error record and the
// X-Endpointkit-Error trailer naming result_too_large; a whole one has its
// X-Endpointkit-Has-More trailer; one that fails before its first bytes
// answers its error with its status.
func TestExportStreamCut(t *testing.T) {
	const n = 5000
	db := exportTable(t, n)
	get := func(h http.Handler, limit int) (*http.Response, []string) {
		srv := httptest.NewServer(h)
		defer srv.Close()
		req := exportRequest(t, limit, "csv")
		u := srv.URL + req.URL.Path
		req2, err := http.NewRequest("POST", u, req.Body)
		require.NoError(t, err)
		req2.Header = req.Header
		resp, err := http.DefaultClient.Do(req2)
		require.NoError(t, err)
		defer resp.Body.Close()
		var lines []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		require.NoError(t, sc.Err())
		return resp, lines
	}

	h, _ := exportHandler(t, sqlexec.New(db, engine.SQLite), n, 100_000)
	resp, lines := get(h, n)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Greater(t, len(lines), 100)
	last := lines[len(lines)-1]
	assert.True(t, strings.HasPrefix(last, httpapi.CSVErrorMarker+",\"result_too_large: "), "last record %q", last)
	assert.Contains(t, resp.Trailer.Get(httpapi.HeaderError), "result_too_large")

	h, _ = exportHandler(t, sqlexec.New(db, engine.SQLite), n, -1)
	resp, lines = get(h, n-1)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Len(t, lines, n) // the header and n-1 rows
	assert.Equal(t, "true", resp.Trailer.Get(httpapi.HeaderHasMore))
	assert.Empty(t, resp.Trailer.Get(httpapi.HeaderError))

	h, _ = exportHandler(t, sqlexec.New(db, engine.SQLite), n, 2000)
	resp, _ = get(h, n)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "a cut before the first bytes answers with its status")
}

// exportMemory exports n rows of db as CSV through the handler and
// returns the peak growth of the heap in use while it ran, sampled every
// millisecond, and the time it took.
func exportMemory(tb testing.TB, exec driver.Executor, n int) (uint64, time.Duration) {
	h, _ := exportHandler(tb, exec, n, -1)
	return exportMemoryOf(tb, h, n, "csv")
}

// exportMemoryOf is exportMemory through h, in format.
//
// The collector runs at a quarter of the default pace (GOGC=25) while it
// measures, so that the heap in use is mostly what the export holds, not
// garbage a loaded machine has not yet collected: at the default pace the
// same export measured 7.6 to 8.1 MiB from run to run.
func exportMemoryOf(tb testing.TB, h http.Handler, n int, format string) (uint64, time.Duration) {
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	w := exportbench.NewDiscard()
	req := exportRequest(tb, n, format)
	var took time.Duration
	peak, _ := exportbench.PeakGrowth(func() {
		start := time.Now()
		h.ServeHTTP(w, req)
		took = time.Since(start)
	})
	require.Equal(tb, http.StatusOK, w.Status)
	require.Empty(tb, w.Head.Get(httpapi.HeaderError))
	return peak, took
}

// TestExportMemorySample is the small sample of TestExportMemory1M that
// runs by default.
func TestExportMemorySample(t *testing.T) {
	const n = 50000
	peak, took := exportMemory(t, sqlexec.New(exportTable(t, n), engine.SQLite), n)
	t.Logf("%d rows: heap in use grew by at most %.1f MiB, in %s", n, float64(peak)/(1<<20), took)
	assert.Less(t, peak, uint64(8<<20)) // the buffered answer of these rows took 12.9 MiB
}

var _ io.Writer = (*firstWrite)(nil)
var _ = sql.ErrNoRows
