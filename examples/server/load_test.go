//go:build long

package main

import (
	"fmt"
	"github.com/stretchr/testify/assert"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoad is the bounded loopback load test of the sandbox: 32 clients
// for 20 s mix cheap runs, slow runs (stopped by the 1 s run timeout),
// refreshes, writes and deletes. No answer is a 500, no acknowledged write
// is lost, and every slow run ends at its limit. It logs the cheap runs'
// p50 and p99.
func TestLoad(t *testing.T) {
	const clients, duration, timeout = 32, 20 * time.Second, time.Second
	s := start(t, []string{"-api-key", "k", "-demo-events", "20000", "-run-timeout", timeout.String(),
		"-project-concurrency", "0", "-project-runs-per-minute", "0", "-project-runs-per-hour", "0", "-global-concurrency", "0"}, nil)
	base := s.url() + "/api/projects/1"
	mustCall := func(method, path, body string, want int) {
		status, answer := call(t, method, base+path, "k", body)
		if got, want := status, want; got != want {
			t.Fatalf("%s %s: %s: status = %v, want %v", method, path, answer, got, want)
		}
	}
	mustCall("POST", "/endpoints/", `{"name": "cheap", "query": {"kind": "HogQLQuery", "query": "SELECT count(*) FROM events WHERE event = '$pageview'"}}`, 201)
	mustCall("POST", "/endpoints/", `{"name": "slow", "query": {"kind": "HogQLQuery", "query": "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"}}`, 201)
	mustCall("POST", "/endpoints/", `{"name": "mat", "is_materialized": true, "query": {"kind": "HogQLQuery", "query": "SELECT event, count(*) AS n FROM events GROUP BY event"}}`, 201)

	var (
		mu        sync.Mutex
		cheap     []time.Duration
		slowTimes []time.Duration
		created   = map[string]bool{}
		statuses  = map[int]int{}
		seq       atomic.Int64
	)
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			for time.Now().Before(deadline) {
				var status int
				start := time.Now()
				switch r := rng.IntN(100); {
				case r < 70:
					status, _ = call(t, "POST", base+"/endpoints/cheap/run", "k", `{}`)
					mu.Lock()
					cheap = append(cheap, time.Since(start))
					mu.Unlock()
				case r < 75:
					status, _ = call(t, "POST", base+"/endpoints/slow/run", "k", `{}`)
					mu.Lock()
					slowTimes = append(slowTimes, time.Since(start))
					mu.Unlock()
				case r < 80:
					status, _ = call(t, "POST", base+"/endpoints/mat/materialize?wait=true", "k", "")
				case r < 92:
					name := fmt.Sprintf("w%d", seq.Add(1))
					status, _ = call(t, "POST", base+"/endpoints/", "k", `{"name": "`+name+`", "query": {"kind": "HogQLQuery", "query": "SELECT 1"}}`)
					if status == 201 {
						mu.Lock()
						created[name] = true
						mu.Unlock()
					}
				default:
					mu.Lock()
					var victim string
					for name := range created {
						victim = name
						break
					}
					delete(created, victim)
					mu.Unlock()
					if victim == "" {
						continue
					}
					status, _ = call(t, "DELETE", base+"/endpoints/"+victim, "k", "")
					if status != 204 {
						mu.Lock()
						created[victim] = true // not acknowledged: it may still exist
						mu.Unlock()
					}
				}
				mu.Lock()
				statuses[status]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("statuses: %v", statuses)
	v := statuses[500]
	assert.Equal(t, 0, v, "no answer is a 500: statuses[500]")
	for name := range created {
		status, body := call(t, "GET", base+"/endpoints/"+name, "k", "")
		got, want := status, 200
		assert.Equal(t, want, got, "acknowledged create of %s lost: %s: status", name, body)
	}
	if v := slowTimes; len(v) == 0 {
		t.Fatalf("slowTimes is empty")
	}
	for _, d := range slowTimes {
		a, b := d, timeout+3*time.Second
		assert.True(t, (a < b), "a slow run stops at its limit: d = %v, want < %v", a, b)
	}
	slices.Sort(cheap)
	if v := cheap; len(v) == 0 {
		t.Fatalf("cheap is empty")
	}
	p := func(q float64) time.Duration { return cheap[int(q*float64(len(cheap)-1))] }
	t.Logf("cheap runs: %d, p50 %v, p99 %v; slow runs: %d, longest %v", len(cheap), p(0.5), p(0.99), len(slowTimes), slices.Max(slowTimes))
}
