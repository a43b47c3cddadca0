package httpapi_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/httpapi/parquet"
	"github.com/endpointkit/endpointkit/endpoint/sqlexec"
	"github.com/endpointkit/endpointkit/internal/exportbench"
	"github.com/endpointkit/endpointkit/sql/engine"
)

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
	exec := &rowCountingExecutor{Executor: sqlexec.New(exportTable(t, n), engine.SQLite)}
	h, _ := exportHandler(t, exec, n, -1, httpapi.WithFormat(parquet.Format{RowGroupRows: 5000}))
	saved := exec.queries.Load()
	w := &keptBody{firstWrite: firstWrite{Discard: exportbench.NewDiscard(), exec: exec}}
	h.ServeHTTP(w, exportRequest(t, n, "parquet"))
	require.Equal(t, http.StatusOK, w.Status)
	assert.Empty(t, w.Head.Get(httpapi.HeaderError))
	assert.Equal(t, parquet.MediaType, w.Head.Get("Content-Type"))
	assert.EqualValues(t, n, exec.rows.Load(), "rows handed over")
	assert.Less(t, w.atFirst, int64(n/2), "rows read before the first byte was written")
	assert.EqualValues(t, saved, exec.queries.Load(), "Query calls (the run's rows must come from QueryRows)")
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
			w := &keptBody{firstWrite: firstWrite{Discard: exportbench.NewDiscard(), exec: &rowCountingExecutor{}}}
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
