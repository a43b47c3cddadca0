package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/httpapi/parquet"
	"github.com/endpointkit/endpointkit/endpoint/limit"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/examples/server/setup"
	"github.com/endpointkit/endpointkit/internal/exportbench"
	"github.com/endpointkit/endpointkit/internal/heldexec"
	"github.com/endpointkit/endpointkit/internal/testdb"
	"github.com/endpointkit/endpointkit/sql/engine"
	pq "github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exportHandler serves endpoint "export" (exportSQL over db) of project
// 1, no result cache, runs up to n rows, maxBytes as MaxResultBytes.
func exportHandler(tb testing.TB, exec driver.Executor, n int, maxBytes int64, opts ...httpapi.Option) (http.Handler, *endpoint.Service) {
	tb.Helper()
	return exportServer(tb, exec, n, func(c *endpoint.Config) { c.MaxResultBytes = maxBytes }, opts...)
}

// exportServer serves endpoint "export" (exportSQL over exec) of project 1
// with runs up to n rows; set is applied to the Service's Config.
func exportServer(tb testing.TB, exec driver.Executor, n int, set func(*endpoint.Config), opts ...httpapi.Option) (http.Handler, *endpoint.Service) {
	tb.Helper()
	eps, vars := newStores(tb)
	cfg := endpoint.Config{Endpoints: eps, Variables: vars, Executor: exec, MaxLimit: n}
	set(&cfg)
	svc, err := endpoint.New(cfg)
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
	exec    *heldexec.RowFake
	atFirst int64
}

func (f *firstWrite) Write(b []byte) (int, error) {
	if f.N == 0 {
		f.atFirst = f.exec.RowsHanded()
	}
	return f.Discard.Write(b)
}

// TestExportStreamsRows: a CSV and an NDJSON export are written as the
// executor reads the rows (the first bytes go out when a small part of
// them was read), every row once, through QueryRows, not Query.
func TestExportStreamsRows(t *testing.T) {
	const n = 20000
	forTextExports(t, n, func(t *testing.T, _ *sql.DB, exec *heldexec.RowFake, format string) {
		h, _ := exportHandler(t, exec, n, -1)
		streamedExport(t, h, exec, n, format)
	})
}

// forTextExports runs f as a subtest for CSV and NDJSON, each with an
// executor that records its streams (a RowFake, no row read yet) over db,
// a table of n rows (exportTable) the formats share.
func forTextExports(t *testing.T, n int, f func(t *testing.T, db *sql.DB, exec *heldexec.RowFake, format string)) {
	t.Helper()
	db := exportTable(t, n)
	for _, format := range []string{"csv", "ndjson"} {
		t.Run(format, func(t *testing.T) { f(t, db, heldexec.NewRowFake(sqlexec.New(db, engine.SQLite)), format) })
	}
}

// streamedExport sends h an export of n rows in format over exec (which
// has read no row yet) and checks that it was streamed: answered whole,
// every row handed over once through QueryRows (no Query call), the first
// bytes written when a small part of them was read. It returns the answer.
func streamedExport(t *testing.T, h http.Handler, exec *heldexec.RowFake, n int, format string) *keptBody {
	t.Helper()
	saved := exec.Queries() // the save's description of the query
	w := &keptBody{firstWrite: firstWrite{Discard: exportbench.NewDiscard(), exec: exec}}
	h.ServeHTTP(w, exportRequest(t, n, format))
	require.Equal(t, http.StatusOK, w.Status)
	require.Empty(t, w.Head.Get(httpapi.HeaderError))
	assert.EqualValues(t, n, exec.RowsHanded(), "rows handed over")
	assert.Less(t, w.atFirst, int64(n/4), "rows read before the first byte was written")
	assert.EqualValues(t, saved, exec.Queries(), "Query calls (the run's rows must come from QueryRows)")
	return w
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

// keptBody is a ResponseWriter that keeps the body and, at its first
// write, how many rows the executor had handed over.
type keptBody struct {
	firstWrite
	body bytes.Buffer
}

func (k *keptBody) Write(b []byte) (int, error) {
	k.body.Write(b)
	return k.firstWrite.Write(b)
}

// parquetRows reads the rows of a Parquet file: the id and name columns.
func parquetRows(t *testing.T, b []byte) (ids []int64, names []string) {
	t.Helper()
	rd := pq.NewReader(bytes.NewReader(b))
	rows := make([]pq.Row, 512)
	for {
		n, err := rd.ReadRows(rows)
		for _, r := range rows[:n] {
			for _, v := range r {
				switch v.Column() {
				case 0:
					ids = append(ids, v.Int64())
				case 1:
					names = append(names, string(v.ByteArray()))
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
	}
	return ids, names
}

// TestExportParquetStreams: a Parquet export is written as the executor
// reads the rows (its first bytes, the first row group, go out when a part
// of them was read), every row once through QueryRows, and the file reads
// back whole, each row as the query answered it.
func TestExportParquetStreams(t *testing.T) {
	const n = 40000
	exec := heldexec.NewRowFake(sqlexec.New(exportTable(t, n), engine.SQLite))
	h, _ := exportHandler(t, exec, n, -1, httpapi.WithFormat(parquet.Format{RowGroupRows: 5000}))
	saved := exec.Queries()
	w := &keptBody{firstWrite: firstWrite{Discard: exportbench.NewDiscard(), exec: exec}}
	h.ServeHTTP(w, exportRequest(t, n, "parquet"))
	require.Equal(t, http.StatusOK, w.Status)
	assert.Empty(t, w.Head.Get(httpapi.HeaderError))
	assert.Equal(t, parquet.MediaType, w.Head.Get("Content-Type"))
	assert.EqualValues(t, n, exec.RowsHanded(), "rows handed over")
	assert.Less(t, w.atFirst, int64(n/2), "rows read before the first byte was written")
	assert.EqualValues(t, saved, exec.Queries(), "Query calls (the run's rows must come from QueryRows)")
	ids, names := parquetRows(t, w.body.Bytes())
	require.Len(t, ids, n)
	require.Len(t, names, n)
	for i := range n {
		require.EqualValues(t, i, ids[i])
		want := fmt.Sprintf("user-%d", i)
		if i%3 == 0 {
			want = fmt.Sprintf("user-%d, \"vip\"", i)
		}
		require.Equal(t, want, names[i])
	}
}

// TestExportParquetCut: a streamed Parquet export that passes
// max_answer_bytes after its first bytes ends there, without its footer,
// with the X-Endpointkit-Error trailer naming result_too_large; one that
// passes max_result_bytes (the rows the run reads) likewise.
func TestExportParquetCut(t *testing.T) {
	const n = 40000
	db := exportTable(t, n)
	for _, c := range []struct {
		name     string
		maxBytes int64
		opts     []httpapi.Option
	}{
		{"max_answer_bytes", -1, []httpapi.Option{httpapi.WithMaxAnswerBytes(200_000)}},
		{"max_result_bytes", 1_000_000, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := append([]httpapi.Option{httpapi.WithFormat(parquet.Format{RowGroupRows: 2000})}, c.opts...)
			h, _ := exportHandler(t, sqlexec.New(db, engine.SQLite), n, c.maxBytes, opts...)
			w := &keptBody{firstWrite: firstWrite{Discard: exportbench.NewDiscard(), exec: heldexec.NewRowFake(nil)}}
			h.ServeHTTP(w, exportRequest(t, n, "parquet"))
			require.Equal(t, http.StatusOK, w.Status)
			assert.Contains(t, w.Head.Get(httpapi.HeaderError), "result_too_large")
			_, err := pq.OpenFile(bytes.NewReader(w.body.Bytes()), int64(w.body.Len()))
			assert.Error(t, err, "a cut file has no footer")
			if c.opts != nil {
				assert.LessOrEqual(t, w.body.Len(), 200_000)
			}
		})
	}
}

// TestExportParquetMemorySample: a Parquet export of 50,000 rows, in row
// groups of 2,000, grows the heap in use by less than 8 MiB (held whole,
// the answer's rows took 12.9 MiB before the file was written).
func TestExportParquetMemorySample(t *testing.T) {
	const n = 50000
	h, _ := exportHandler(t, sqlexec.New(exportTable(t, n), engine.SQLite), n, -1, httpapi.WithFormat(parquet.Format{RowGroupRows: 2000}))
	peak, took := exportMemoryOf(t, h, n, "parquet")
	t.Logf("%d rows: heap in use grew by at most %.1f MiB, in %s", n, float64(peak)/(1<<20), took)
	assert.Less(t, peak, uint64(8<<20))
}

// exportTable fills a SQLite database with n rows of an integer, a text, a
// float and a time text.
func exportTable(b testing.TB, n int) *sql.DB {
	b.Helper()
	db := testdb.SQLite(b)
	fillExport(b, db, n)
	return db
}

// exportFile is exportTable in a SQLite file opened as the example server
// opens its events (examples/server/setup): data, its read-write pool, and
// runs, its read-only pool of kept statements.
func exportFile(b testing.TB, n int) (data, runs *sql.DB) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "export.db")
	data, err := setup.OpenFile(path)
	require.NoError(b, err)
	b.Cleanup(func() { data.Close() })
	fillExport(b, data, n)
	runs, err = setup.OpenRuns(path)
	require.NoError(b, err)
	b.Cleanup(func() { runs.Close() })
	return data, runs
}

// fillExport creates the table export in db with n rows.
func fillExport(b testing.TB, db *sql.DB, n int) {
	b.Helper()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE export (id INTEGER, name TEXT, amount REAL, at TEXT)"); err != nil {
		b.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(b, err)
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		name := fmt.Sprintf("user-%d, \"vip\"", i)
		if i%3 != 0 {
			name = fmt.Sprintf("user-%d", i)
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO export VALUES (?, ?, ?, ?)", i, name, float64(i)*1.25, at.Add(time.Duration(i)*time.Minute).Format("2006-01-02 15:04:05"))
		require.NoError(b, err)
	}
	require.NoError(b, tx.Commit())
}

const exportSQL = "SELECT id, name, amount, at FROM export ORDER BY id"

// BenchmarkExportCSV: a run of n rows answered in CSV through the handler
// (library) against the same rows read with database/sql and written with
// encoding/csv (direct), in one run; allocs/row is flat in n when the
// export's memory per row does not grow with the row count.
//
//	go test ./endpoint/httpapi -run '^$' -bench BenchmarkExportCSV -benchmem -count 3
func BenchmarkExportCSV(b *testing.B) {
	for _, n := range []int{10000, 50000, 100000} {
		db := exportTable(b, n)
		h, _ := exportHandler(b, sqlexec.New(db, engine.SQLite), n, -1)
		library := func() { serveExport(b, h, n) }
		direct := func() {
			require.NoError(b, directCSV(db, io.Discard, n))
		}
		b.Run(fmt.Sprintf("rows=%d/library", n), func(b *testing.B) { perRow(b, n, library) })
		b.Run(fmt.Sprintf("rows=%d/direct", n), func(b *testing.B) { perRow(b, n, direct) })
		b.Run(fmt.Sprintf("rows=%d/ratio", n), func(b *testing.B) { exportbench.Alternate(b, library, direct) })
	}
}

// serveExport exports n rows through h as CSV, and fails unless it
// answered them.
func serveExport(tb testing.TB, h http.Handler, n int) {
	w := exportbench.NewDiscard()
	h.ServeHTTP(w, exportRequest(tb, n, "csv"))
	require.Equal(tb, http.StatusOK, w.Status)
	require.Empty(tb, w.Head.Get(httpapi.HeaderError))
}

// perRow runs f b.N times and reports allocations and bytes per row.
func perRow(b *testing.B, rows int, f func()) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		f()
	}
	runtime.ReadMemStats(&after)
	total := float64(b.N) * float64(rows)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/row")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/total, "B/row")
}

// directCSV is what a host writes without the library: the query through
// database/sql, each value formatted, encoding/csv.
func directCSV(db *sql.DB, w io.Writer, limit int) error {
	rows, err := db.Query(exportSQL+" LIMIT ?", limit)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(cols); err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rec := make([]string, len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		exportbench.FormatCSV(rec, vals)
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return rows.Err()
}

// BenchmarkExportCSV1M: exporting 1,000,000 rows from SQLite as CSV
// through the handler (the row limit raised to allow it) against the same
// rows read with database/sql and written with encoding/csv (directCSV),
// alternated in each iteration, in one run: the time ratio
// library/direct, and the peak growth of the Go heap in use and of the
// process's resident memory during a library export after a warm one.
// memory is an in-memory database and an executor over its one pool;
// server is the example server's configuration, a SQLite file, its runs
// on a read-only pool of kept statements with the length limit and the
// interrupt (setup.Executor), the direct side reading the file's pool.
//
//	go test ./endpoint/httpapi -run '^$' -bench BenchmarkExportCSV1M -benchtime 3x
func BenchmarkExportCSV1M(b *testing.B) {
	const n = 1_000_000
	b.Run("memory", func(b *testing.B) {
		db := exportTable(b, n)
		h, _ := exportHandler(b, sqlexec.New(db, engine.SQLite), n, -1)
		exportbench.Versus(b, func() { serveExport(b, h, n) }, func() {
			require.NoError(b, directCSV(db, io.Discard, n))
		})
	})
	b.Run("server", func(b *testing.B) {
		data, runs := exportFile(b, n)
		exec := setup.Executor(data, runs, 0)
		b.Cleanup(func() { exec.Close() })
		h, _ := exportHandler(b, exec, n, -1)
		exportbench.Versus(b, func() { serveExport(b, h, n) }, func() {
			require.NoError(b, directCSV(data, io.Discard, n))
		})
	})
}

// bigAnswer is an endpoint of about 9 MB of rows.
const bigAnswer = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4500)
SELECT i, printf('%.*c', 2000, 'x') AS pad FROM n`

// stalledWriter is a client that stops reading: its writes wait until
// the test lets them go, telling the test when the first one started.
type stalledWriter struct {
	*httptest.ResponseRecorder
	writing chan struct{}
	gate    chan struct{}
	once    bool
}

func (w *stalledWriter) Write(b []byte) (int, error) {
	if !w.once {
		w.once = true
		close(w.writing)
	}
	<-w.gate
	return w.ResponseRecorder.Write(b)
}

func slowReaderHandler(t *testing.T, opts ...httpapi.Option) http.Handler {
	t.Helper()
	svc := newService(t, newExecutor(openEvents(t, 10)))
	for _, name := range []string{"big", "one"} {
		sql := "SELECT 1 AS one"
		if name == "big" {
			sql = bigAnswer
		}
		_, err := svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: name, Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: sql}})
		require.NoError(t, err)
	}
	keys := httpapi.NewKeyring()
	require.NoError(t, keys.AddAllProjects(keyAdmin))
	l, err := limit.New(limit.Config{ProjectConcurrency: 1})
	require.NoError(t, err)
	return httpapi.New(svc, keys, append([]httpapi.Option{httpapi.WithLimiter(l)}, opts...)...)
}

func runRequest(name, body string) *http.Request {
	req := httptest.NewRequest("POST", "/api/projects/1/endpoints/"+name+"/run", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+keyAdmin)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// TestSlowReaderHoldsNoRunSlot: a client that stops reading its answer
// does not keep the project's run slot while the answer is written: with
// one run at a time, another run of the project is answered meanwhile.
// Three such clients took a project offline until the write timeout.
func TestSlowReaderHoldsNoRunSlot(t *testing.T) {
	h := slowReaderHandler(t)
	slow := &stalledWriter{ResponseRecorder: httptest.NewRecorder(), writing: make(chan struct{}), gate: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(slow, runRequest("big", `{"limit": 4500}`))
	}()
	select {
	case <-slow.writing:
	case <-time.After(30 * time.Second):
		t.Fatal("the big answer was never written")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, runRequest("one", `{}`))
	close(slow.gate)
	<-done
	got, want := rec.Code, http.StatusOK
	require.Equal(t, want, got, "another run while the slow client reads: %s: rec.Code", rec.Body)
	require.Equal(t, http.StatusOK, slow.Code)
}

// TestWriteTimeoutCutsOffAStalledClient: once an answer is computed, its
// writing has a deadline of its own (WithWriteTimeout): a client that
// reads nothing is cut off then, and the handler returns.
func TestWriteTimeoutCutsOffAStalledClient(t *testing.T) {
	returned := make(chan struct{}, 1)
	inner := slowReaderHandler(t, httpapi.WithWriteTimeout(300*time.Millisecond))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		returned <- struct{}{}
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4096))
	body := `{"limit": 4500}`
	_, err = fmt.Fprintf(conn, "POST /api/projects/1/endpoints/big/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", keyAdmin, len(body), body)
	require.NoError(t, err)
	select {
	case <-returned:
	case <-time.After(20 * time.Second):
		t.Fatal("the handler still writes to a client that reads nothing")
	}
}
