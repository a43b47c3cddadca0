//go:build chdb

package chdb

import (
	"bufio"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/memstore"
	"github.com/endpointkit/endpointkit/internal/exportbench"
	"github.com/endpointkit/endpointkit/internal/stmt"
	"github.com/endpointkit/endpointkit/variable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var exportRows = flag.Int("chdb.export-rows", 1_000_000, "rows BenchmarkExportCSV exports from chDB")

// exportSQL is the export's query: an integer, a text (a third of them
// quoted in CSV), a float and a time, in id order.
const exportSQL = "SELECT id, name, amount, at FROM export_bench.rows ORDER BY id"

// loadExport fills export_bench.rows with n rows, once.
func loadExport(tb testing.TB, x *Executor, n int) {
	tb.Helper()
	ctx := context.Background()
	res, err := x.Read(ctx, "SELECT count() FROM system.tables WHERE database = 'export_bench' AND name = 'rows'", nil)
	require.NoError(tb, err)
	if res.Rows[0][0] == int64(1) {
		res, err = x.Read(ctx, "SELECT count() FROM export_bench.rows", nil)
		require.NoError(tb, err)
		if res.Rows[0][0] == int64(n) {
			return
		}
	}
	for _, q := range []string{
		"DROP DATABASE IF EXISTS export_bench",
		"CREATE DATABASE export_bench",
		"CREATE TABLE export_bench.rows (id Int64, name String, amount Float64, at DateTime('UTC')) ENGINE = MergeTree ORDER BY id",
		fmt.Sprintf(`INSERT INTO export_bench.rows SELECT number, if(number %% 3 = 0, concat('user-', toString(number), ', "vip"'), concat('user-', toString(number))),
			number * 1.25, toDateTime('2025-01-01 00:00:00', 'UTC') + number * 60 FROM numbers(%d)`, n),
	} {
		require.NoError(tb, x.Load(ctx, q, nil), "%s", q)
	}
}

// csvSink writes the rows the executor hands over with encoding/csv, each
// value formatted as a host would: what a host writes without the library
// over the engine's own row iterator (QueryRows).
type csvSink struct {
	w   *csv.Writer
	rec []string
}

func (c *csvSink) Columns(names, _ []string) error {
	c.rec = make([]string, len(names))
	return c.w.Write(names)
}

func (c *csvSink) Row(row []any) error {
	exportbench.FormatCSV(c.rec, row)
	return c.w.Write(c.rec)
}

// directCSV is the export without the library: the query through the
// executor's row iterator, encoding/csv.
func directCSV(x *Executor, w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	s := &csvSink{w: csv.NewWriter(bw)}
	if _, err := x.QueryRows(context.Background(), stmt.New(exportSQL+" LIMIT "+strconv.Itoa(n), nil), driver.Bounds{}, s); err != nil {
		return err
	}
	s.w.Flush()
	if err := s.w.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// exportService serves endpoint "export" (exportSQL) of project 1 on x,
// no result cache, runs of up to n rows, no bound on their bytes.
func exportService(tb testing.TB, x *Executor, n int) http.Handler {
	tb.Helper()
	svc, err := endpoint.New(endpoint.Config{Endpoints: memstore.New(), Variables: variable.NewMemoryStore(), Executor: x,
		MaxLimit: n, MaxResultBytes: -1, RunTimeout: 10 * time.Minute})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = svc.Close(context.Background()) })
	_, err = svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "export",
		Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: exportSQL}})
	require.NoError(tb, err)
	keys := httpapi.NewKeyring()
	require.NoError(tb, keys.Add(exportKey, "1"))
	return httpapi.New(svc, keys, httpapi.WithLimiter(nil), httpapi.WithMaxAnswerBytes(-1))
}

const exportKey = "ek_export_bench_key_0123456789abcdef"

// exportOnce exports n rows through h as CSV.
func exportOnce(tb testing.TB, h http.Handler, n int) {
	body := fmt.Sprintf(`{"limit": %d, "format": "csv"}`, n)
	req, _ := http.NewRequest("POST", "/api/projects/1/endpoints/export/run", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+exportKey)
	req.Header.Set("Content-Type", "application/json")
	w := exportbench.NewDiscard()
	h.ServeHTTP(w, req)
	require.Equal(tb, http.StatusOK, w.Status)
	require.Empty(tb, w.Head.Get(httpapi.HeaderError))
}

// BenchmarkExportCSV: exporting -chdb.export-rows rows (1,000,000) from
// chDB as CSV through the handler (the row limit raised to allow it)
// against the same rows read with the executor's row iterator and written
// with encoding/csv, alternated in each iteration, in one run: the time
// ratio library/direct, and the peak growth of the Go heap in use and of
// the process's resident memory (chDB's included) during the first
// library export after a warm one.
//
//	go test -tags chdb ./endpoint/chdb -run '^$' -bench BenchmarkExportCSV -benchtime 3x
func BenchmarkExportCSV(b *testing.B) {
	x := executor(b)
	n := *exportRows
	loadExport(b, x, n)
	h := exportService(b, x, n)
	library := func() { exportOnce(b, h, n) }
	direct := func() {
		require.NoError(b, directCSV(x, io.Discard, n))
	}
	exportbench.Versus(b, library, direct)
}

// TestExportCSVMemory: a CSV export of 200,000 rows from chDB is streamed
// (QueryRows): the Go heap in use grows by less than 16 MiB while it runs
// (the answer held whole took far more).
func TestExportCSVMemory(t *testing.T) {
	const n = 200_000
	x := executor(t)
	loadExport(t, x, n)
	h := exportService(t, x, n)
	heap, res := exportbench.PeakGrowth(func() { exportOnce(t, h, n) })
	t.Logf("%d rows: heap in use grew by at most %.1f MiB, resident memory by %.1f MiB", n, float64(heap)/(1<<20), float64(res)/(1<<20))
	assert.Less(t, heap, uint64(16<<20), "heap in use grew by %.1f MiB, want less than 16 MiB", float64(heap)/(1<<20))
}
