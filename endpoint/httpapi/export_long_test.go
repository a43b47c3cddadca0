//go:build long

package httpapi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/httpapi/parquet"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/sql/engine"
)

// TestExportMemory1M: exporting 1,000,000 rows from SQLite as CSV (the
// row limit raised to allow it) grows the heap in use by less than 64 MiB.
//
//	go test -tags long ./endpoint/httpapi -run TestExportMemory1M -v
func TestExportMemory1M(t *testing.T) {
	const n = 1_000_000
	peak, took := exportMemory(t, sqlexec.New(exportTable(t, n), engine.SQLite), n)
	t.Logf("%d rows: heap in use grew by at most %.1f MiB, in %s", n, float64(peak)/(1<<20), took)
	assert.Less(t, peak, uint64(64<<20))
}

// TestExportParquetMemory1M: exporting 1,000,000 rows from SQLite as
// Parquet (the row limit raised to allow it) grows the heap in use by less
// than 64 MiB: the rows are written a row group at a time.
//
//	go test -tags long ./endpoint/httpapi -run TestExportParquetMemory1M -v
func TestExportParquetMemory1M(t *testing.T) {
	const n = 1_000_000
	h, _ := exportHandler(t, sqlexec.New(exportTable(t, n), engine.SQLite), n, -1, httpapi.WithFormat(parquet.Format{}))
	peak, took := exportMemoryOf(t, h, n, "parquet")
	t.Logf("%d rows: heap in use grew by at most %.1f MiB, in %s", n, float64(peak)/(1<<20), took)
	assert.Less(t, peak, uint64(64<<20))
}
