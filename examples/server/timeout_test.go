package main

import (
	"github.com/stretchr/testify/require"
	"testing"
	"time"
)

// TestRunTimeoutAfterTheFirstRow: a saved query whose work comes after its
// first row (it answers one row at once, then looks for a second for
// ever) ends at the server's run timeout with a 504, because the server's
// SQLite executor interrupts the run's connection
// (sqlexec.WithInterrupt); without it, modernc.org/sqlite stops a query
// only while it starts and the run went on for ever. The server then
// answers the next run.
func TestRunTimeoutAfterTheFirstRow(t *testing.T) {
	s := start(t, []string{"-api-key", "k", "-demo-events", "100", "-run-timeout", "300ms"}, nil)
	base := s.url() + "/api/projects/1"
	for _, e := range []string{
		`{"name": "endless", "query": {"kind": "HogQLQuery", "query": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r WHERE n = 1 OR n < 0"}}`,
		`{"name": "cheap", "query": {"kind": "HogQLQuery", "query": "SELECT count(*) AS n FROM events"}}`,
	} {
		status, answer := call(t, "POST", base+"/endpoints/", "k", e)
		require.Equal(t, 201, status, "create %s", answer)
	}
	type reply struct {
		status int
		answer string
		took   time.Duration
	}
	done := make(chan reply, 1)
	go func() {
		start := time.Now()
		status, answer := call(t, "POST", base+"/endpoints/endless/run", "k", `{}`)
		done <- reply{status, answer, time.Since(start)}
	}()
	select {
	case r := <-done:
		require.Equal(t, 504, r.status, "endless run: %d %s after %v, want a 504 at about 300ms", r.status, r.answer, r.took)
		require.LessOrEqual(t, r.took, 3*time.Second, "endless run: %d %s after %v, want a 504 at about 300ms", r.status, r.answer, r.took)
	case <-time.After(10 * time.Second):
		t.Fatal("the endless run still runs 10 s after its 300ms limit")
	}
	status, answer := call(t, "POST", base+"/endpoints/cheap/run", "k", `{}`)
	require.Equal(t, 200, status, "the next run %s", answer)
}
