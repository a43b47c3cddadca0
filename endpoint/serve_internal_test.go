package endpoint

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/endpointkit/endpointkit/endpoint/driver"
	"github.com/endpointkit/endpointkit/variable"
)

// TestResultKeyAllocations: a SQL run's key costs one allocation, its
// string; the buffer it is written in stays on the stack (it moved to the
// heap while the parts were written through a pointer).
func TestResultKeyAllocations(t *testing.T) {
	s := &Service{}
	ep := &driver.Endpoint{ProjectID: "1", ID: "0192f1a2-7c3e-7d4a-9b1c-000000000001"}
	c := &compiled{vars: []variable.Variable{{CodeName: "country"}, {CodeName: "min_amount"}}}
	values := map[string]any{"country": "US", "min_amount": int64(10)}
	opts := runOptions{version: 2, limit: 100}
	if k := s.resultKey(ep, c, nil, values, opts, time.Time{}); k == "" {
		t.Fatal("no key")
	}
	if n := testing.AllocsPerRun(100, func() { s.resultKey(ep, c, nil, values, opts, time.Time{}) }); n != 1 {
		t.Errorf("resultKey: %v allocations a run, want 1", n)
	}
}

// TestFlightAllocations: a run that no other run joins makes its flight
// only, no channel to wait on.
func TestFlightAllocations(t *testing.T) {
	var g flightGroup
	ctx := context.Background()
	res := &RunResult{}
	fn := func() (*RunResult, error) { return res, nil }
	if _, shared, own, _ := g.do(ctx, "k", fn); shared || !own { // makes the map
		t.Errorf("a run no other joined: shared %v, own %v; want it to own its answer", shared, own)
	}
	if n := testing.AllocsPerRun(100, func() { g.do(ctx, "k", fn) }); n != 1 { //nolint:errcheck // fn does not fail
		t.Errorf("an unshared flight: %v allocations, want 1", n)
	}
}

// TestFlightJoined: the runs that join a flight under way wait for it and
// share its answer; the channel they wait on is made by the first of them,
// and closed when the flight ends.
func TestFlightJoined(t *testing.T) {
	var g flightGroup
	ctx := context.Background()
	res := &RunResult{Name: "computed"}
	var calls atomic.Int64
	started, release := make(chan struct{}), make(chan struct{})
	leaderOwns := make(chan bool, 1)
	go func() {
		_, _, own, _ := g.do(ctx, "k", func() (*RunResult, error) {
			calls.Add(1)
			close(started)
			<-release
			return res, nil
		})
		leaderOwns <- own
	}()
	<-started
	var wg sync.WaitGroup
	results := make([]*RunResult, 5)
	shared := make([]bool, 5)
	owns := make([]bool, 5)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], shared[i], owns[i], _ = g.do(ctx, "k", func() (*RunResult, error) {
				calls.Add(1) // a run that came after the flight ended
				return res, nil
			})
		}()
	}
	// At least one run has joined once the flight's channel exists.
	for {
		g.mu.Lock()
		made := g.m["k"].done != nil
		g.mu.Unlock()
		if made {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	joined := 0
	for i := range results {
		if results[i] != res {
			t.Errorf("run %d: %v, want the answer", i, results[i])
		}
		if shared[i] {
			joined++
		}
		if shared[i] == owns[i] {
			// A run owns the answer it computed alone, never one it shares.
			t.Errorf("run %d: shared %v, own %v", i, shared[i], owns[i])
		}
	}
	if <-leaderOwns {
		t.Error("the flight's computing run owns an answer that other runs joined")
	}
	if joined == 0 || calls.Load() != int64(1+len(results)-joined) {
		t.Errorf("%d runs joined, %d computations; want at least one joined, and one computation for the flight and each run that did not join", joined, calls.Load())
	}
}
