package parquet_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/endpointkit/endpointkit/endpoint/httpapi"
	"github.com/endpointkit/endpointkit/endpoint/httpapi/parquet"
)

// read writes t and reads the file back: column names, kinds and values.
func read(t *testing.T, tb *httpapi.Table) ([]string, []pq.Kind, [][]any) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, (parquet.Format{RowGroupRows: 2}).Write(&buf, tb))
	f, err := pq.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	var names []string
	var kinds []pq.Kind
	for _, c := range f.Schema().Fields() {
		names = append(names, c.Name())
		kinds = append(kinds, c.Type().Kind())
	}
	rd := pq.NewReader(bytes.NewReader(buf.Bytes()))
	var out [][]any
	rows := make([]pq.Row, 4)
	for {
		n, err := rd.ReadRows(rows)
		for _, r := range rows[:n] {
			vals := make([]any, len(names))
			for _, v := range r {
				switch {
				case v.IsNull():
				case v.Kind() == pq.Int64:
					vals[v.Column()] = v.Int64()
				case v.Kind() == pq.Double:
					vals[v.Column()] = v.Double()
				case v.Kind() == pq.Boolean:
					vals[v.Column()] = v.Boolean()
				default:
					vals[v.Column()] = string(v.ByteArray())
				}
			}
			out = append(out, vals)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
	}
	return names, kinds, out
}

// TestKinds: each column's type is read from its values, in column order
// (not by name), repeated names made unique, across row groups.
func TestKinds(t *testing.T) {
	at := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	tb := httpapi.NewTable(
		[]string{"z", "mixed", "a", "z", "flag", "none", "when", "cached", "real"},
		[]string{"INTEGER", "", "TEXT", "INTEGER", "BOOLEAN", "", "TIMESTAMP", "", "REAL"},
		[][]any{
			{int64(1), int64(2), "x", int64(-3), true, nil, at, json.Number("7"), json.Number("2")},
			{nil, 2.5, "", int64(4), false, nil, nil, json.Number("1.5"), 2.5},
			{int64(3), "text", nil, int64(5), nil, nil, at, nil, nil},
		}, false)
	names, kinds, rows := read(t, tb)
	wantNames := []string{"z", "mixed", "a", "z_2", "flag", "none", "when", "cached", "real"}
	require.Equal(t, wantNames, names)
	wantKinds := []pq.Kind{pq.Int64, pq.ByteArray, pq.ByteArray, pq.Int64, pq.Boolean, pq.ByteArray, pq.ByteArray, pq.Double, pq.Double}
	for i := range wantKinds {
		assert.Equal(t, wantKinds[i], kinds[i], "%s", names[i])
	}
	want := [][]any{
		{int64(1), "2", "x", int64(-3), true, nil, "2025-05-01T12:00:00Z", 7.0, 2.0},
		{nil, "2.5", "", int64(4), false, nil, nil, 1.5, 2.5},
		{int64(3), "text", nil, int64(5), nil, nil, "2025-05-01T12:00:00Z", nil, nil},
	}
	assert.Equal(t, want, rows)
}

// TestRefusesNonFinite: an infinity is refused, as JSON refuses it.
func TestRefusesNonFinite(t *testing.T) {
	tb := httpapi.NewTable([]string{"x"}, []string{"REAL"}, [][]any{{1.5}, {math.Inf(1)}}, false)
	require.Error(t, (parquet.Format{}).Write(io.Discard, tb), "an infinity was written")
}
