package main

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMemoryAttackRefused: the query of issue 25 that allocated 2.4 GB
// per call answers a 400 naming the SQLite length limit at once, and the
// -sqlite-max-length flag sets that limit.
func TestMemoryAttackRefused(t *testing.T) {
	s := start(t, []string{"-api-key", "k", "-demo-events", "100", "-sqlite-max-length", "2000000"}, nil)
	base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(s.out.String())[1] + "/api/projects/1"
	body := func(q string) string {
		b, err := json.Marshal(map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": q}})
		require.NoError(t, err)
		return string(b)
	}
	begin := time.Now()
	status, answer := call(t, "POST", base+"/query/", "k", body("SELECT length(printf('%.*c', 999999999, 'x')) + length(printf('%.*c', 999999999, 'y')) AS n"))
	assert.Equal(t, 400, status, answer)
	assert.Contains(t, answer, "2000000 bytes")
	assert.Contains(t, answer, "SQLiteLimits.Length")
	assert.Less(t, time.Since(begin), 2*time.Second)

	status, answer = call(t, "POST", base+"/query/", "k", body("SELECT length(printf('%.*c', 1999000, 'x')) AS n"))
	assert.Equal(t, 200, status, answer)
	assert.Contains(t, answer, "1999000")
	status, answer = call(t, "POST", base+"/query/", "k", body("SELECT length(printf('%.*c', 2000001, 'x')) AS n"))
	assert.Equal(t, 400, status, answer)
}

// TestMaterializedBytesRefused: issue 25's materialization, a wide value
// per group (scaled down), fails its refresh naming
// -max-materialized-bytes, and the status says why; within the bound the
// status reports the table's bytes.
func TestMaterializedBytesRefused(t *testing.T) {
	s := start(t, []string{"-api-key", "k", "-demo-events", "500", "-max-materialized-bytes", "300000"}, nil)
	base := regexp.MustCompile(`server on (http://\S+)`).FindStringSubmatch(s.out.String())[1] + "/api/projects/1"
	create := func(name, q string) {
		b, err := json.Marshal(map[string]any{"name": name, "is_materialized": true, "query": map[string]any{"kind": "HogQLQuery", "query": q}})
		require.NoError(t, err)
		status, answer := call(t, "POST", base+"/endpoints/", "k", string(b))
		require.Equal(t, 201, status, answer)
	}
	create("padded", "SELECT event, printf('%.*c', 100000, event) AS pad, count(*) AS n FROM events GROUP BY event, pad")
	status, answer := call(t, "POST", base+"/endpoints/padded/materialize", "k", "")
	assert.Equal(t, 502, status, answer)
	assert.Contains(t, answer, "max_materialized_bytes (300000)")
	status, answer = call(t, "GET", base+"/endpoints/padded/materialization_status/", "k", "")
	require.Equal(t, 200, status, answer)
	assert.Contains(t, answer, `"status":"failed"`)
	assert.Contains(t, answer, "max_materialized_bytes")

	create("narrow", "SELECT event, count(*) AS n FROM events GROUP BY event")
	status, answer = call(t, "POST", base+"/endpoints/narrow/materialize", "k", "")
	require.Equal(t, 200, status, answer)
	status, answer = call(t, "GET", base+"/endpoints/narrow/materialization_status/", "k", "")
	require.Equal(t, 200, status, answer)
	assert.Regexp(t, `"bytes":[1-9]\d*`, answer)
}
