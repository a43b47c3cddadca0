package main

import (
	"bytes"
	"encoding/csv"
	"io"
	"net/http"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFormatsOverHTTP: the example server answers a run in CSV (by
// Accept), NDJSON and Parquet (by the body's format), the last one because
// it registers package endpoint/httpapi/parquet.
func TestFormatsOverHTTP(t *testing.T) {
	s := start(t, []string{"-api-key", "k", "-demo-events", "200"}, nil)
	base := s.url()
	create := curl(t, []string{"-X", "POST", base + "/api/projects/1/endpoints/", "-H", "Authorization: Bearer k",
		"-H", "Content-Type: application/json", "-d", `{"name": "by_event", "query": {"kind": "HogQLQuery", "query": "SELECT event, count(*) AS n FROM events GROUP BY event ORDER BY event"}}`})
	got, want := create.status, http.StatusCreated
	require.Equal(t, want, got, "%v: create.status", create.raw)
	run := func(body, accept string) (*http.Response, []byte) {
		req, err := http.NewRequest("POST", base+"/api/projects/1/endpoints/by_event/run", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer k")
		req.Header.Set("Content-Type", "application/json")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		got, want := res.StatusCode, http.StatusOK
		require.Equal(t, want, got, "%s: res.StatusCode", b)
		return res, b
	}
	res, b := run(`{}`, "text/csv")
	assert.Equal(t, `["event","n"]`, res.Header.Get("X-Endpointkit-Columns"))
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"event", "n"}, recs[0])
	if a, b := len(recs), 2; !(a > b) {
		t.Errorf("len(recs) = %v, want > %v", a, b)
	}

	_, b = run(`{"format": "ndjson"}`, "")
	if got, want := strings.Count(string(b), "\n"), len(recs)-1; got != want {
		t.Errorf("strings.Count(string(b), \"\\n\") = %v, want %v", got, want)
	}

	res, b = run(`{"format": "parquet"}`, "")
	assert.Equal(t, "application/vnd.apache.parquet", res.Header.Get("Content-Type"))
	f, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	if got, want := f.NumRows(), int64(len(recs)-1); got != want {
		t.Errorf("f.NumRows() = %v, want %v", got, want)
	}
}
