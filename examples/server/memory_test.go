package main

import (
	"encoding/json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"regexp"
	"testing"
	"time"
)

// TestMemoryAttackRefused: the query of issue 25 that allocated 2.4 GB
// per call answers a 400 naming the SQLite length limit at once, and the
// -sqlite-max-length flag sets that limit.
func TestMemoryAttackRefused(t *testing.T) {
	s := start(t, []string{"-api-key", "k", "-demo-events", "100", "-sqlite-max-length", "2000000"}, nil)
	base := s.url() + "/api/projects/1"
	body := func(q string) string {
		b, err := json.Marshal(map[string]any{"query": map[string]any{"kind": "HogQLQuery", "query": q}})
		require.NoError(t, err)
		return string(b)
	}
	begin := time.Now()
	status, answer := call(t, "POST", base+"/query/", "k", body("SELECT length(printf('%.*c', 999999999, 'x')) + length(printf('%.*c', 999999999, 'y')) AS n"))
	got, want := status, 400
	assert.Equal(t, want, got, "%v: status", answer)
	assert.Contains(t, answer, "2000000 bytes")
	assert.Contains(t, answer, "SQLiteLimits.Length")
	a, b := time.Since(begin), 2*time.Second
	assert.True(t, (a < b), "time.Since(begin) = %v, want < %v", a, b)

	status, answer = call(t, "POST", base+"/query/", "k", body("SELECT length(printf('%.*c', 1999000, 'x')) AS n"))
	if got, want := status, 200; got != want {
		t.Errorf("%v: status = %v, want %v", answer, got, want)
	}
	assert.Contains(t, answer, "1999000")
	status, answer = call(t, "POST", base+"/query/", "k", body("SELECT length(printf('%.*c', 2000001, 'x')) AS n"))
	if got, want := status, 400; got != want {
		t.Errorf("%v: status = %v, want %v", answer, got, want)
	}
}

// TestMaterializedBytesRefused: issue 25's materialization, a wide value
// per group (scaled down), fails its refresh naming
// -max-materialized-bytes, and the status says why; within the bound the
// status reports the table's bytes.
func TestMaterializedBytesRefused(t *testing.T) {
	s := start(t, []string{"-api-key", "k", "-demo-events", "500", "-max-materialized-bytes", "300000"}, nil)
	base := s.url() + "/api/projects/1"
	create := func(name, q string) {
		b, err := json.Marshal(map[string]any{"name": name, "is_materialized": true, "query": map[string]any{"kind": "HogQLQuery", "query": q}})
		require.NoError(t, err)
		status, answer := call(t, "POST", base+"/endpoints/", "k", string(b))
		got, want := status, 201
		require.Equal(t, want, got, "%v: status", answer)
	}
	create("padded", "SELECT event, printf('%.*c', 100000, event) AS pad, count(*) AS n FROM events GROUP BY event, pad")
	status, answer := call(t, "POST", base+"/endpoints/padded/materialize?wait=true", "k", "")
	got, want := status, 502
	assert.Equal(t, want, got, "%v: status", answer)
	assert.Contains(t, answer, "max_materialized_bytes (300000)")
	status, answer = call(t, "GET", base+"/endpoints/padded/materialization_status/", "k", "")
	if got, want := status, 200; got != want {
		t.Fatalf("%v: status = %v, want %v", answer, got, want)
	}
	assert.Contains(t, answer, `"status":"failed"`)
	assert.Contains(t, answer, "max_materialized_bytes")

	create("narrow", "SELECT event, count(*) AS n FROM events GROUP BY event")
	status, answer = call(t, "POST", base+"/endpoints/narrow/materialize?wait=true", "k", "")
	if got, want := status, 200; got != want {
		t.Fatalf("%v: status = %v, want %v", answer, got, want)
	}
	status, answer = call(t, "GET", base+"/endpoints/narrow/materialization_status/", "k", "")
	if got, want := status, 200; got != want {
		t.Fatalf("%v: status = %v, want %v", answer, got, want)
	}
	re := regexp.MustCompile(`"bytes":[1-9]\d*`)
	assert.True(t, re.MatchString(answer), "materialization status %s, want a match of %s", answer, re)
}
