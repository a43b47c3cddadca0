package httpapi_test

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/exportbench"
	"github.com/endpointkit/endpointkit/sql/engine"
	"github.com/stretchr/testify/require"
)

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
//
//	go test ./endpoint/httpapi -run '^$' -bench BenchmarkExportCSV1M -benchtime 3x
func BenchmarkExportCSV1M(b *testing.B) {
	const n = 1_000_000
	db := exportTable(b, n)
	h, _ := exportHandler(b, sqlexec.New(db, engine.SQLite), n, -1)
	library := func() { serveExport(b, h, n) }
	direct := func() {
		require.NoError(b, directCSV(db, io.Discard, n))
	}
	exportbench.Versus(b, library, direct)
}
