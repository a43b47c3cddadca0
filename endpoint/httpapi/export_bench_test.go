package httpapi_test

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint"
	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

// discard is a ResponseWriter that keeps nothing but the byte count.
type discard struct {
	h      http.Header
	status int
	n      int64
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(status int)      { d.status = status }
func (d *discard) Write(b []byte) (int, error) { d.n += int64(len(b)); return len(b), nil }

// exportTable fills a SQLite database with n rows of an integer, a text, a
// float and a time text.
func exportTable(b testing.TB, n int) *sql.DB {
	b.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(b, err)
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
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
	return db
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
		eps, vars := newStores(b)
		svc, err := endpoint.New(endpoint.Config{Endpoints: eps, Variables: vars, Executor: sqlexec.New(db, engine.SQLite),
			MaxLimit: n, MaxResultBytes: -1})
		require.NoError(b, err)
		b.Cleanup(func() { _ = svc.Close(context.Background()) })
		if _, err := svc.Create(context.Background(), "1", endpoint.CreateRequest{Name: "export",
			Query: &endpoint.Query{Kind: endpoint.KindSQL, SQL: exportSQL}}); err != nil {
			b.Fatal(err)
		}
		keys := httpapi.NewKeyring()
		require.NoError(b, keys.Add(keyP1, "1"))
		h := httpapi.New(svc, keys, httpapi.WithLimiter(nil), httpapi.WithMaxAnswerBytes(-1))
		body := fmt.Sprintf(`{"limit": %d, "format": "csv", "refresh": "force"}`, n)

		library := func() {
			req, _ := http.NewRequest("POST", "/api/projects/1/endpoints/export/run", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+keyP1)
			req.Header.Set("Content-Type", "application/json")
			w := &discard{h: http.Header{}}
			h.ServeHTTP(w, req)
			if w.status != http.StatusOK || w.h.Get(httpapi.HeaderError) != "" {
				b.Fatalf("status %d, error %q", w.status, w.h.Get(httpapi.HeaderError))
			}
		}
		direct := func() {
			require.NoError(b, directCSV(db, io.Discard, n))
		}
		b.Run(fmt.Sprintf("rows=%d/library", n), func(b *testing.B) { perRow(b, n, library) })
		b.Run(fmt.Sprintf("rows=%d/direct", n), func(b *testing.B) { perRow(b, n, direct) })
		// ratio alternates the two in each iteration, so that both see the
		// same load of a shared machine: library/direct is the time ratio.
		b.Run(fmt.Sprintf("rows=%d/ratio", n), func(b *testing.B) {
			var lib, dir time.Duration
			for b.Loop() {
				start := time.Now()
				library()
				mid := time.Now()
				direct()
				lib, dir = lib+mid.Sub(start), dir+time.Since(mid)
			}
			b.ReportMetric(float64(lib)/float64(dir), "library/direct")
		})
	}
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
		for i, v := range vals {
			switch x := v.(type) {
			case nil:
				rec[i] = ""
			case int64:
				rec[i] = strconv.FormatInt(x, 10)
			case float64:
				rec[i] = strconv.FormatFloat(x, 'g', -1, 64)
			case string:
				rec[i] = x
			case []byte:
				rec[i] = string(x)
			default:
				rec[i] = fmt.Sprint(x)
			}
		}
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
//
//	go test ./endpoint/httpapi -run '^$' -bench BenchmarkExportCSV1M -benchtime 3x
func BenchmarkExportCSV1M(b *testing.B) {
	const n = 1_000_000
	db := exportTable(b, n)
	h, _ := exportHandler(b, sqlexec.New(db, engine.SQLite), n, -1)
	library := func() {
		w := &discard{h: http.Header{}}
		h.ServeHTTP(w, exportRequest(b, n, "csv"))
		if w.status != http.StatusOK || w.h.Get(httpapi.HeaderError) != "" {
			b.Fatalf("status %d, error %q", w.status, w.h.Get(httpapi.HeaderError))
		}
	}
	direct := func() {
		require.NoError(b, directCSV(db, io.Discard, n))
	}
	library()
	heap, res := peakGrowth(library)
	var lib, dir time.Duration
	for b.Loop() {
		start := time.Now()
		library()
		mid := time.Now()
		direct()
		lib, dir = lib+mid.Sub(start), dir+time.Since(mid)
	}
	b.ReportMetric(float64(lib)/float64(dir), "library/direct")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(res)/(1<<20), "rss-MiB")
	b.ReportMetric(float64(lib.Milliseconds())/float64(b.N), "library-ms")
	b.ReportMetric(float64(dir.Milliseconds())/float64(b.N), "direct-ms")
}

// rss is the process's resident memory in bytes (Linux), 0 when unknown.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

// peakGrowth runs f and returns the peak growth, over their values before
// it, of the Go heap in use and of the process's resident memory, sampled
// every millisecond.
func peakGrowth(f func()) (heap, res uint64) {
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	baseRSS := rss()
	var peakHeap, peakRSS atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > base.HeapInuse && m.HeapInuse-base.HeapInuse > peakHeap.Load() {
				peakHeap.Store(m.HeapInuse - base.HeapInuse)
			}
			if r := rss(); r > baseRSS && r-baseRSS > peakRSS.Load() {
				peakRSS.Store(r - baseRSS)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peakHeap.Load(), peakRSS.Load()
}
