package main

import (
	"bytes"
	"encoding/csv"
	"io"
	"net/http"
	"regexp"
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
	base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(s.out.String())[1]
	create := curl(t, []string{"-X", "POST", base + "/api/projects/1/endpoints/", "-H", "Authorization: Bearer k",
		"-H", "Content-Type: application/json", "-d", `{"name": "by_event", "query": {"kind": "HogQLQuery", "query": "SELECT event, count(*) AS n FROM events GROUP BY event ORDER BY event"}}`})
	require.Equal(t, http.StatusCreated, create.status, create.raw)
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
		require.Equal(t, http.StatusOK, res.StatusCode, "%s", b)
		return res, b
	}
	res, b := run(`{}`, "text/csv")
	assert.Equal(t, `["event","n"]`, res.Header.Get("X-Endpointkit-Columns"))
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"event", "n"}, recs[0])
	assert.Greater(t, len(recs), 2)

	_, b = run(`{"format": "ndjson"}`, "")
	assert.Equal(t, len(recs)-1, strings.Count(string(b), "\n"))

	res, b = run(`{"format": "parquet"}`, "")
	assert.Equal(t, "application/vnd.apache.parquet", res.Header.Get("Content-Type"))
	f, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	assert.Equal(t, int64(len(recs)-1), f.NumRows())
}
